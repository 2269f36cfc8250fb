"""Template generation with the template model (`SVC_TEMPLATE_MODEL`): one direct Messages call per chunk.

The model answers with structured output (`TemplateBatch`). Each template's `config` carries the schema for the
model to follow but is not validated while the answer is parsed: one bad template must cost that template, not
the chunk, so the worker vets each one itself (`candidates.vet_all`).

Why direct calls and not the Message Batches API (half the price): a chunk of 5 is one call of a few seconds on
the small model, chunks run in parallel workers (the queue's `MaximumConcurrency` is the lever on the provider's
rate limits), and a job of 50 ends in a minute or two instead of up to 24 hours with a poller.

Imports the AI SDK (`svcconf.ai.client`): only the template worker imports this module, at its top, so the
import is paid in the init phase.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field, SkipValidation

from svcconf.ai.client import ask_structured
from svcconf.config import ServerConfig
from svcconf.config.lint import DANGEROUS_PERMISSIONS
from svcconf.settings import get_settings
from svcconf.templates.candidates import MAX_DESCRIPTION_LENGTH, MAX_TAGS
from svcconf.templates.seeding import ChunkRequest

# A chunk of 5 is about 5K tokens of JSON, thinking aside; under the 21,333 a non-streaming call may ask for.
MAX_TOKENS = 16_000
# Within the worker's 180 s timeout (the invocation's time left clips it further).
CALL_TIMEOUT_SECONDS = 150.0
# Kinds of servers the chunks are spread over, so that parallel chunks write different templates.
SERVER_KINDS = (
    "gaming clan",
    "minecraft server",
    "speedrunning community",
    "board game cafe",
    "university course",
    "language exchange",
    "coding bootcamp",
    "research lab",
    "startup team",
    "freelancers network",
    "nonprofit volunteers",
    "local neighbourhood",
    "podcast community",
    "photography club",
    "writers workshop",
    "film and tv fans",
    "k-pop fandom",
    "sports team supporters",
    "running club",
    "cooking and recipes",
    "gardening",
    "pet owners",
    "travel planning",
    "personal finance club",
    "mental health peer support",
    "parents group",
    "family server",
    "wedding planning",
    "hackathon",
    "game development studio",
    "modding community",
    "vtuber fan server",
    "dj and electronic music",
    "choir or orchestra",
    "astronomy club",
    "model building and crafts",
    "car enthusiasts",
    "science fiction book club",
    "debate club",
    "alumni network",
)

SYSTEM_PROMPT = (
    """You write server templates for a chat platform (Discord-like): each template is a complete,
ready-to-deploy server configuration for one kind of community, plus a name, a one- or two-sentence
description and a few lowercase tags.

The configuration follows this schema exactly:
- name (1-100 characters), description (optional)
- roles: list of {name, color (integer 0-16777215 or "#RRGGBB"), hoist, mentionable, permissions: [permission
  flag names such as VIEW_CHANNEL, SEND_MESSAGES, MANAGE_MESSAGES, KICK_MEMBERS, MODERATE_MEMBERS]};
  role names are unique ignoring case; never define "@everyone".
- categories: list of {name, overwrites, channels (at most 50)}
- channels: channels outside any category
- a channel: {name, type: text|voice|announcement|stage|forum, topic (at most 1024 characters; forum 4096),
  nsfw, slowmode_seconds (0-21600), user_limit (voice and stage only, 0-99), overwrites}
- an overwrite: {role: a role name of this configuration or "@everyone", allow: [...], deny: [...]}; a
  permission is never both allowed and denied in one overwrite; one overwrite per role per channel.

Every template must also be safe:
- @everyone is never allowed one of these dangerous permissions, and at least one role (the ordinary members'
  role) grants none of them: """
    + ", ".join(DANGEROUS_PERMISSIONS)
    + """.
- a role with ADMINISTRATOR lists nothing else.
- a private category denies @everyone VIEW_CHANNEL and allows VIEW_CHANNEL to at least one role; its channels
  never allow @everyone VIEW_CHANNEL again, and a channel's own overwrite for a role the category names keeps
  the category's VIEW_CHANNEL allow or deny.
- every channel can be seen by @everyone or by some role.
- read-only channels (rules, announcements) deny @everyone SEND_MESSAGES rather than VIEW_CHANNEL, so that
  everyone can still read them; moderators get KICK_MEMBERS, BAN_MEMBERS, MANAGE_MESSAGES and MODERATE_MEMBERS
  rather than ADMINISTRATOR, which stays with the owner's team.

Make each template realistic and distinct: 2-6 roles, 2-5 categories, 6-25 channels, names that people of that
community would use. Use only names not in the list of names to avoid."""
)


class GeneratedTemplate(BaseModel):
    name: str = Field(description="1-100 characters, distinct from every name to avoid.")
    description: str = Field(description=f"At most {MAX_DESCRIPTION_LENGTH} characters.")
    tags: list[str] = Field(description=f"1-{MAX_TAGS} lowercase keywords.")
    # The schema goes to the model; validation waits for the worker, template by template.
    config: SkipValidation[ServerConfig]


class TemplateBatch(BaseModel):
    """The model's answer: the templates it was asked for."""

    templates: list[GeneratedTemplate]


def kinds_for(request: ChunkRequest) -> list[str]:
    """The kinds of servers this chunk is about: a stable pick per job and chunk."""
    seed = int(hashlib.sha256(f"{request.job_id}/{request.chunk_id}".encode()).hexdigest()[:8], 16)
    return [SERVER_KINDS[(seed + index) % len(SERVER_KINDS)] for index in range(request.count)]


def prompt(request: ChunkRequest) -> str:
    task = {
        "task": "template_batch",
        "job_id": request.job_id,
        "chunk_id": request.chunk_id,
        "count": request.count,
        "kinds": kinds_for(request),
        "avoid_names": request.avoid_names,
    }
    return (
        f'Write {request.count} templates, one for each kind in `kinds`, as {{"templates": [...]}}.\n'
        f"{json.dumps(task, ensure_ascii=False)}"
    )


def _raw(template: GeneratedTemplate) -> dict[str, Any]:
    config = template.config
    return {
        "name": template.name,
        "description": template.description,
        "tags": template.tags,
        "config": config.model_dump(mode="json") if isinstance(config, BaseModel) else config,
    }


def generate_templates(request: ChunkRequest) -> list[dict[str, Any]]:
    """Asks the template model for a chunk's templates; the raw candidates, in the model's order."""
    answer = ask_structured(
        TemplateBatch,
        system=SYSTEM_PROMPT,
        messages=[{"role": "user", "content": prompt(request)}],
        model=get_settings().template_model,
        max_tokens=MAX_TOKENS,
        timeout=CALL_TIMEOUT_SECONDS,
        purpose="templates",
    )
    return [_raw(template) for template in answer.output.templates]
