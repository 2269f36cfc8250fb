"""The local model's template writer: what `make run` (SVC_AI_PROVIDER=local) answers to the template worker's
chunk requests, and what tests drive the worker with.

Deterministic: the same job, chunk and count always give the same templates. Names combine a style with the
requested kind of server ("Cozy Running Club") and skip the names the request says to avoid, as a careful model
would; chunks of one job running at once can still pick the same name, which the worker drops as a duplicate.
Like a real model it is sometimes wrong, on purpose and predictably: in a job's first round one template in
eight is flawed (alternately invalid by the schema and unsafe by the lint), so the worker's vetting and its extra rounds
are exercised; later rounds are clean, so how a job ends no longer depends on its random id (flaws drawn
from the id once left a job of 10 one template short, after all its rounds, about one time in forty).
"""

from __future__ import annotations

import hashlib
from typing import Any

STYLES = (
    "Cozy",
    "Pro",
    "Weekend",
    "Global",
    "Midnight",
    "Friendly",
    "Elite",
    "Hometown",
    "Open",
    "Rising",
    "Classic",
    "Indie",
    "Sunday",
    "Northern",
    "Bright",
    "Quiet",
    "Chill",
    "Grand",
    "Little",
    "United",
)
DEFAULT_KINDS = ("gaming clan", "study group", "book club", "running club", "art collective")
STAFF_PERMISSIONS = ["KICK_MEMBERS", "MANAGE_MESSAGES", "MODERATE_MEMBERS", "MANAGE_THREADS"]
FLAW_EVERY = 8


def _number(*parts: object) -> int:
    return int(hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def _slug(text: str) -> str:
    return "-".join(text.lower().split())


def template_for(kind: str, name: str, seed: int) -> dict[str, Any]:
    """A valid, lint-clean template for a kind of server."""
    words = kind.lower().split()
    topic_channels: list[dict[str, Any]] = [{"name": f"{_slug(kind)}-chat", "topic": f"Everything about {kind}."}]
    topic_channels += [{"name": f"{word}-talk"} for word in dict.fromkeys(words) if len(word) > 3][:2]
    topic_channels.append({"name": "showcase", "topic": "Share what you made or did.", "slowmode_seconds": 30})
    if seed % 2:
        topic_channels.append({"name": "questions", "type": "forum", "topic": "One post per question."})
    config = {
        "name": name,
        "description": f"A server for a {kind}.",
        "roles": [
            {"name": "Admin", "color": seed % 0xFFFFFF, "hoist": True, "permissions": ["ADMINISTRATOR"]},
            {"name": "Moderator", "color": (seed >> 8) % 0xFFFFFF, "hoist": True, "permissions": STAFF_PERMISSIONS},
            {"name": "Member", "permissions": ["CHANGE_NICKNAME"]},
        ],
        "categories": [
            {
                "name": "Information",
                "channels": [
                    {"name": "rules", "overwrites": [{"role": "@everyone", "deny": ["SEND_MESSAGES"]}]},
                    {
                        "name": "announcements",
                        "type": "announcement",
                        "overwrites": [
                            {"role": "@everyone", "deny": ["SEND_MESSAGES"]},
                            {"role": "Moderator", "allow": ["SEND_MESSAGES"]},
                        ],
                    },
                ],
            },
            {"name": kind.title(), "channels": topic_channels},
            {
                "name": "Voice",
                "channels": [
                    {"name": "Lounge", "type": "voice", "user_limit": 5 + seed % 20},
                    {"name": "Events", "type": "stage"} if seed % 3 == 0 else {"name": "Hangout", "type": "voice"},
                ],
            },
            {
                "name": "Staff",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": "Moderator", "allow": ["VIEW_CHANNEL"]},
                ],
                "channels": [{"name": "mod-chat"}, {"name": "mod-log"}],
            },
        ],
    }
    return {
        "name": name,
        "description": f"A ready-made server for a {kind}: information, {kind} channels, voice rooms and a staff area.",
        "tags": [*[*dict.fromkeys(word for word in words if len(word) > 2)][:4], "community"],
        "config": config,
    }


def _flaw(template: dict[str, Any], flaw: int) -> dict[str, Any]:
    if flaw % 2:  # invalid by the schema: an overwrite names a role the configuration does not define
        template["config"]["categories"][3]["overwrites"][1]["role"] = "Moderators"
    else:  # valid but unsafe: every member may ping everyone
        template["config"]["categories"][0]["channels"][0]["overwrites"][0]["allow"] = ["MENTION_EVERYONE"]
    return template


def write_templates(
    job_id: str, chunk_id: str, count: int, kinds: list[str] | None = None, avoid_names: list[str] | None = None
) -> list[dict[str, Any]]:
    """`count` templates for this job's chunk, one per kind (cycling through `kinds`)."""
    kinds = list(kinds or DEFAULT_KINDS)
    avoid = {name.casefold() for name in avoid_names or ()}
    written = []
    for position in range(count):
        seed = _number(job_id, chunk_id, position)
        kind = kinds[position % len(kinds)]
        for attempt in range(len(STYLES)):
            name = f"{STYLES[(seed + attempt) % len(STYLES)]} {kind.title()}"
            if name.casefold() not in avoid:
                break
        avoid.add(name.casefold())
        template = template_for(kind, name, seed)
        flaw = _flaw_number(chunk_id, count, position)
        written.append(template if flaw is None else _flaw(template, flaw))
    return written


def _flaw_number(chunk_id: str, count: int, position: int) -> int | None:
    """Which flaw, if any, the template at `position` of chunk `<round>-<index>` gets: the round's every eighth."""
    round_number, _, index = chunk_id.partition("-")
    if round_number != "1":
        return None
    spread = int(index) * count + position if index.isdigit() else position
    return spread // FLAW_EVERY if spread % FLAW_EVERY == FLAW_EVERY - 1 else None
