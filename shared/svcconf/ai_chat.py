"""svcAiChat: a conversation with the AI that builds or changes a server configuration (CONTRACT §4, §5).

One turn is one structured call (the `ChatTurn` envelope: reply, config, quick replies, completeness). The
envelope's `config` is the §5 schema itself, so the adapter's validation is the schema's: an answer whose
configuration fails it gets one repair round with the validation errors, and if that fails too the previous
`currentConfig` (if it is valid itself) is returned instead and the reply says so. An invalid configuration is
never returned. Files reach the model as image and document blocks with URL sources: the service never fetches
a URL itself.

The prompt is laid out for the prompt cache: the static system prompt (cached), then the conversation, then one
last user turn carrying what changes every turn (the current configuration, style, questionnaire, files).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, Field, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from svcconf import budget
from svcconf.ai import AiFailed, AiOutputInvalid, AiRefused, AiTimeout, AiTruncated, require_provider
from svcconf.ai.client import ask_structured
from svcconf.ai.errors import describe_problems
from svcconf.config import LintWarning, ServerConfig, lint_config
from svcconf.config.permissions import PERMISSION_BITS
from svcconf.deploy.plan import PlanItem
from svcconf.errors import BadRequest
from svcconf.observability import logger, metrics
from svcconf.templates import TemplateSummary, suggest_templates

MAX_MESSAGES = 100
MAX_MESSAGE_LENGTH = 8000
MAX_ATTACHMENTS = 10
MAX_FILE_URLS = 10
MAX_URL_LENGTH = 2048
MAX_QUICK_REPLIES = 4
MAX_QUICK_REPLY_LENGTH = 80
MAX_SUGGESTED_TEMPLATES = 3
# A repair round is not started with less time than this left: it would only turn a usable reply into a 504.
MIN_REPAIR_SECONDS = 4.0

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
DOCUMENT_TYPES = ("application/pdf",)  # what the Messages API takes as a URL document source
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp")
CONTEXT_OPEN, CONTEXT_CLOSE = "<service_context>", "</service_context>"


def _https_only(url: str) -> str:
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        host = None
    if host is None or parts.scheme.lower() != "https" or any(c.isspace() for c in url):
        raise PydanticCustomError("https_url", "must be an https:// URL")
    if parts.username or parts.password:
        raise PydanticCustomError("https_url", "must not carry credentials")
    return url


HttpsUrl = Annotated[
    str,
    Field(min_length=9, max_length=MAX_URL_LENGTH, examples=["https://example.com/rules.pdf"]),
    AfterValidator(_https_only),
]


class ChatMessage(BaseModel):
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=MAX_MESSAGE_LENGTH)


class Attachment(BaseModel):
    """A file the user attached, by its https URL (the provider fetches it; this service never does)."""

    url: HttpsUrl
    name: str | None = Field(None, min_length=1, max_length=255)
    media_type: Literal["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf"] | None = Field(
        None, description="Guessed from the URL's file extension when absent (an image, else a PDF)."
    )


class ChatTurn(BaseModel):
    """What the model answers each turn (the structured output's envelope; its title names it to the model)."""

    reply: str = Field(description="Your answer to the user, in their language; short, plain text.")
    config: ServerConfig | None = Field(
        description="The whole server configuration after this turn (null only while nothing can be built yet)."
    )
    quick_replies: list[str] = Field(description="0 to 4 short answers the user may click, each under 80 characters.")
    is_complete: bool = Field(description="True when the user has confirmed that the configuration is finished.")


# openapi.json describes ServerConfig once, as requests take it (deployToChat's); a response schema of its own
# would replace that component with the serialised form, where colors are integers only.
_CONFIG_OR_NULL = {"anyOf": [{"$ref": "#/components/schemas/ServerConfig"}, {"type": "null"}]}


class ChatAnswer(BaseModel):
    reply: str
    config: Annotated[ServerConfig | None, WithJsonSchema(_CONFIG_OR_NULL)] = Field(
        description="A configuration valid per the schema, or null while there is none (never an invalid one)."
    )
    quick_replies: list[str] = Field(max_length=MAX_QUICK_REPLIES)
    suggested_templates: list[TemplateSummary] = Field(max_length=MAX_SUGGESTED_TEMPLATES)
    is_complete: bool
    warnings: list[LintWarning] = Field(description="The permission-safety lint of `config`.")
    plan: list[PlanItem] | None = Field(None, description="With guild_id: what a deploy of `config` would do there.")


SYSTEM_PROMPT = f"""You are the configuration assistant of a service that builds servers on a chat platform \
(Discord-like: roles, categories, text/voice/announcement/stage/forum channels, permission overwrites). You talk \
with one user, who designs a server with you, and every turn you answer with one JSON object:

- "reply": what you say to the user: short, friendly, plain text (no Markdown tables), in the user's language.
  Say what you built or changed, and ask at most one question when something important is unclear.
- "config": the WHOLE server configuration after this turn (never a diff), or null only if nothing can be built
  yet. When the context holds a currentConfig, start from it and change only what the user asks for; keep every
  name, order and setting the user did not ask to change.
- "quick_replies": 0 to 4 short answers the user could click next (under 80 characters each), e.g.
  "Add a voice channel", "Make the staff area private", "Looks good".
- "is_complete": true only when the user has said the configuration is finished.

The configuration's rules (a configuration that breaks one is refused, and you will be asked to fix it):
- name: 1-100 characters; description optional.
- roles (at most 250): name (1-100 characters, unique ignoring case, never "@everyone"), color (an integer
  0-16777215 or "#RRGGBB"), hoist, mentionable, permissions (a list of permission names, below). Roles are
  listed from the highest to the lowest.
- categories: name, overwrites, channels (at most 50 per category). channels: channels outside any category.
- A channel: name (1-100), type (text, voice, announcement, stage, forum), topic (at most 1024 characters, 4096
  for forum), nsfw, slowmode_seconds (0-21600), user_limit (voice and stage only, 0-99), overwrites.
- At most 500 channels in all, categories included.
- An overwrite: role (the exact name of a role of this configuration, or "@everyone"), allow and deny (permission
  names; a permission is never both allowed and denied; one overwrite per role per channel or category).
- A channel's overwrites replace its category's overwrites role by role.
- Permission names, exactly as written: {", ".join(PERMISSION_BITS)}.

Safety, which the service checks and reports to the user as warnings:
- Never give @everyone ADMINISTRATOR, MANAGE_GUILD, MANAGE_ROLES, MANAGE_CHANNELS, MENTION_EVERYONE or
  MANAGE_WEBHOOKS, and never give one of them to every role.
- A private category denies @everyone VIEW_CHANNEL and allows it to the roles that may enter; its channels must
  not allow @everyone VIEW_CHANNEL again, and a channel's own overwrite for a role must keep the category's
  VIEW_CHANNEL allow or deny for that role.
- Every channel must be visible to @everyone or to at least one role.
- A role with ADMINISTRATOR needs no other permission: list ADMINISTRATOR alone. Give ADMINISTRATOR sparingly
  (the owner's team only); moderators get KICK_MEMBERS, BAN_MEMBERS, MANAGE_MESSAGES, MODERATE_MEMBERS.
- Read-only channels (rules, announcements) deny @everyone SEND_MESSAGES rather than VIEW_CHANNEL.

How to use the context: the last user turn ends with a {CONTEXT_OPEN} block (JSON) written by the service, not
by the user: "currentConfig" (the configuration so far), "style" (the user's preferences: tone, naming, emoji,
language), "questionnaire_data" (answers of the service's questionnaire: server purpose, size, topics) and
"files" (files the user attached, also given to you as images and documents). Follow the style for channel and
role names (for example lower-case-with-dashes, or an emoji prefix when asked). Treat the files as material the
user wants reflected (rules, an existing layout, a screenshot of a server).

When the user has only answered the questionnaire, build a complete first configuration from it and say what
you assumed. Prefer a clear, small structure: an information category (rules, announcements), a general
community category, topic categories, voice channels, and a private staff category. Never invent secrets, links
or personal data. Never include any text outside the JSON object.
"""


def chat(
    *,
    messages: list[ChatMessage],
    current_config: dict[str, Any] | None = None,
    style: dict[str, Any] | None = None,
    questionnaire_data: dict[str, Any] | None = None,
    attachments: list[Attachment] | None = None,
    file_urls: list[str] | None = None,
) -> ChatAnswer:
    """One turn of the conversation: the model's reply and a configuration that is valid, or none."""
    if not any(message.role == "user" for message in messages) and not questionnaire_data:
        raise BadRequest.for_field("messages", "needs at least one user message, or questionnaire_data")
    require_provider()
    previous = _valid_config(current_config)
    files = [*(attachments or []), *(Attachment(url=url) for url in file_urls or [])]
    prompt = build_messages(messages, current_config, style, questionnaire_data, files)
    wanted = "\n".join(message.content for message in messages if message.role == "user")
    suggestions = suggest_templates(wanted, questionnaire_data, limit=MAX_SUGGESTED_TEMPLATES)

    try:
        turn = ask_structured(ChatTurn, system=SYSTEM_PROMPT, messages=prompt, purpose="chat").output
    except AiRefused:
        metrics.add_metric(name="AiChatRefused", unit="Count", value=1)
        return _answer(REFUSED_REPLY, previous, [], suggestions, complete=False)
    except (AiOutputInvalid, AiTruncated) as first:
        turn = _repaired(prompt, first, previous)
    config = turn.config if turn.config is not None else previous
    complete = turn.is_complete and config is not None
    return _answer(turn.reply, config, turn.quick_replies, suggestions, complete=complete)


REFUSED_REPLY = "I can't help with that request. Your configuration is unchanged; try asking differently."
KEPT_REPLY = "(The configuration I proposed did not pass the checks, so your previous configuration is kept.)"
NOT_BUILT_REPLY = "(The configuration I proposed did not pass the checks, so none is returned yet.)"
UNUSABLE_REPLY = "I could not produce a valid configuration this time; your previous configuration is kept."


def _repaired(
    prompt: list[dict[str, Any]], first: AiOutputInvalid | AiTruncated, previous: ServerConfig | None
) -> ChatTurn:
    """The repair round: the answer's problems sent back once. Its failure keeps `previous` (the reply says so)."""
    metrics.add_metric(name="AiChatRepairs", unit="Count", value=1)
    salvaged = _salvage_reply(first.text)
    left = budget.seconds_left()
    if left is not None and left - budget.ANSWER_MARGIN_SECONDS < MIN_REPAIR_SECONDS:
        logger.warning("no time left for a repair round")
        return _kept(first, salvaged, previous)
    repair = [*prompt, *repair_turns(first)]
    try:
        return ask_structured(ChatTurn, system=SYSTEM_PROMPT, messages=repair, purpose="chat-repair").output
    except (AiOutputInvalid, AiTruncated, AiRefused) as second:
        logger.warning("the repair round failed too", extra={"error": type(second).__name__})
        return _kept(first, salvaged or _salvage_reply(second.text), previous)
    except (AiTimeout, AiFailed) as second:
        logger.warning("the repair round could not be made", extra={"error": type(second).__name__})
        return _kept(first, salvaged, previous)


def _kept(first: AiOutputInvalid | AiTruncated, salvaged: str | None, previous: ServerConfig | None) -> ChatTurn:
    metrics.add_metric(name="AiChatConfigKept", unit="Count", value=1)
    if salvaged is None:
        if previous is None:
            raise first  # nothing usable at all: 502
        return ChatTurn(reply=UNUSABLE_REPLY, config=previous, quick_replies=[], is_complete=False)
    note = KEPT_REPLY if previous is not None else NOT_BUILT_REPLY
    return ChatTurn(reply=f"{salvaged} {note}", config=previous, quick_replies=[], is_complete=False)


def repair_turns(failure: AiOutputInvalid | AiTruncated) -> list[dict[str, Any]]:
    """The assistant's unusable answer and the user turn that asks to fix it."""
    if isinstance(failure, AiTruncated):
        ask = (
            "Your previous answer was cut off before the JSON was complete. Answer again with the whole JSON "
            "object, more briefly (shorter reply and topics), changing nothing else."
        )
        return [{"role": "user", "content": ask}]
    ask = (
        "Your previous answer is not valid:\n"
        f"{describe_problems(failure.problems)}\n"
        "Answer again with the whole JSON object, with these problems fixed and nothing else changed."
    )
    turns: list[dict[str, Any]] = []
    if failure.text.strip():
        turns.append({"role": "assistant", "content": failure.text})
    turns.append({"role": "user", "content": ask})
    return turns


def _salvage_reply(text: str) -> str | None:
    """The `reply` of an answer whose configuration failed, when the JSON itself is readable."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    reply = value.get("reply") if isinstance(value, dict) else None
    return reply.strip() if isinstance(reply, str) and reply.strip() else None


def _valid_config(config: dict[str, Any] | None) -> ServerConfig | None:
    if not config:
        return None
    try:
        return ServerConfig.model_validate(config)
    except ValidationError as exc:
        logger.info("currentConfig is not valid; it is never returned", extra={"problems": len(exc.errors())})
        return None


def _answer(
    reply: str,
    config: ServerConfig | None,
    quick_replies: list[str],
    suggestions: list[TemplateSummary],
    *,
    complete: bool,
) -> ChatAnswer:
    return ChatAnswer(
        reply=reply,
        config=config,
        quick_replies=clean_quick_replies(quick_replies),
        suggested_templates=suggestions,
        is_complete=complete,
        warnings=lint_config(config) if config is not None else [],
    )


def clean_quick_replies(replies: list[str]) -> list[str]:
    """At most 4 distinct, non-empty, short answers, in the model's order."""
    kept: list[str] = []
    for reply in replies:
        text = " ".join(reply.split())[:MAX_QUICK_REPLY_LENGTH].strip()
        if text and text.casefold() not in {k.casefold() for k in kept}:
            kept.append(text)
    return kept[:MAX_QUICK_REPLIES]


# --- the prompt -------------------------------------------------------------------------------------------------


def file_block(file: Attachment) -> dict[str, Any]:
    """An image or document block with a URL source (the provider fetches it)."""
    media_type = file.media_type
    if media_type is None:
        path = urlsplit(file.url).path.lower()
        media_type = "image/png" if path.endswith(_IMAGE_SUFFIXES) else "application/pdf"
    if media_type in IMAGE_TYPES:
        return {"type": "image", "source": {"type": "url", "url": file.url}}
    block: dict[str, Any] = {"type": "document", "source": {"type": "url", "url": file.url}}
    if file.name:
        block["title"] = file.name
    return block


def context_block(
    current_config: dict[str, Any] | None,
    style: dict[str, Any] | None,
    questionnaire_data: dict[str, Any] | None,
    files: list[Attachment],
) -> dict[str, Any]:
    context = {
        "currentConfig": current_config,
        "style": style,
        "questionnaire_data": questionnaire_data,
        "files": [{"name": file.name, "url": file.url} for file in files],
    }
    text = json.dumps(context, ensure_ascii=False, separators=(",", ":"))
    return {"type": "text", "text": f"{CONTEXT_OPEN}\n{text}\n{CONTEXT_CLOSE}"}


def build_messages(
    messages: list[ChatMessage],
    current_config: dict[str, Any] | None,
    style: dict[str, Any] | None,
    questionnaire_data: dict[str, Any] | None,
    files: list[Attachment],
) -> list[dict[str, Any]]:
    """The Messages API conversation: roles alternating, starting and ending with the user (no prefill), files
    and the context in the last user turn, a cache breakpoint on the last assistant turn (the history before it
    is the same next turn)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        block = {"type": "text", "text": message.content}
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].append(block)
        else:
            turns.append({"role": message.role, "content": [block]})
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": "(The assistant spoke first.)"}]})
    last_assistant = next((turn for turn in reversed(turns) if turn["role"] == "assistant"), None)
    if last_assistant is not None:
        last_assistant["content"][-1]["cache_control"] = {"type": "ephemeral"}
    if not turns or turns[-1]["role"] == "assistant":
        ask = "Build the configuration from the questionnaire." if not messages else "Please go on."
        turns.append({"role": "user", "content": [{"type": "text", "text": ask}]})
    final = turns[-1]["content"]
    final[:0] = [file_block(file) for file in files]
    final.append(context_block(current_config, style, questionnaire_data, files))
    return turns
