"""svcAiChat's request and answer models: the messages, the attachments, the answer, and the live guild's review.

Kept apart from the turn (svcconf.conversation.turn) so the prompt and the input budget read them without
importing the turn.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import AfterValidator, AliasChoices, BaseModel, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from svcconf.config import LintWarning, ServerConfig
from svcconf.config.answers import AnswerConfig
from svcconf.config.edits import ConfigChange
from svcconf.deploy_engine.steps import PlanItem
from svcconf.errors import FieldError
from svcconf.templates import TemplateSummary

MAX_MESSAGES = 100
MAX_MESSAGE_LENGTH = 8000
MAX_ATTACHMENTS = 10
MAX_FILE_URLS = 10
MAX_URL_LENGTH = 2048
MAX_QUICK_REPLIES = 4
MAX_QUICK_REPLY_LENGTH = 80
MAX_SUGGESTED_TEMPLATES = 3
MAX_ANALYSIS_STATUS = 40
MAX_FILE_TYPE_LENGTH = 255  # a MIME type's name is at most 127 + 1 + 127 (RFC 6838)
MAX_PROJECT_ID_LENGTH = 128
# What of an attachment's analysis the model reads (docs/06-ai.md), and the statuses that say it is
# finished (the seed leaves the values open: compared ignoring case and surrounding spaces).
MAX_ANALYSIS_CHARACTERS = 8000
ANALYSIS_DONE = ("done", "completed")


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

    # The seed names the URL `file_url`; earlier releases of this service read `url`, which stays accepted.
    url: HttpsUrl = Field(
        validation_alias=AliasChoices("file_url", "url"),
        description="The file's https URL (`url` is read too, as earlier releases named it).",
    )
    name: str | None = Field(None, min_length=1, max_length=255)
    media_type: Literal["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf"] | None = Field(
        None, description="Guessed from `file_type`, else from the URL's file extension, when absent."
    )
    file_type: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_FILE_TYPE_LENGTH,
        description="The file's MIME type as the app knows it: an image (JPEG, PNG, GIF, WebP) or a PDF is sent to "
        "the model; any other type is not (the answer's warnings name it).",
    )
    file_size: float | None = Field(None, ge=0, strict=True, description="Bytes; kept for the app, not read.")
    project_id: str | None = Field(
        None, min_length=1, max_length=MAX_PROJECT_ID_LENGTH, description="The app's project; not read."
    )
    analysis_status: str | None = Field(
        None,
        max_length=MAX_ANALYSIS_STATUS,
        description="The state of another tool's analysis of the file; `done` or `completed` (any case) gives the "
        "model `analysis_result`.",
    )
    analysis_result: str | None = Field(
        None,
        description="What another tool read in the file: with `analysis_status` done, its first 8,000 characters go "
        "to the model as the user's description of the file, whatever its type (counted in the input budget).",
    )

    def analysis(self) -> str | None:
        """The analysis the model reads: the first 8,000 characters of a finished one, None otherwise."""
        if (self.analysis_status or "").strip().casefold() not in ANALYSIS_DONE:
            return None
        text = (self.analysis_result or "")[:MAX_ANALYSIS_CHARACTERS]
        return text if text.strip() else None

    def label(self) -> str:
        """How the answer and the prompt name the file: its name, else its URL."""
        return self.name or self.url


# openapi.json describes ServerConfig once, as requests take it (deployToChat's); a response schema of its own
# would replace that component with the serialised form, where colors are integers only.
_CONFIG_OR_NULL = {"anyOf": [{"$ref": "#/components/schemas/ServerConfig"}, {"type": "null"}]}


class ChatAnswer(BaseModel):
    reply: str
    config: Annotated[AnswerConfig | None, WithJsonSchema(_CONFIG_OR_NULL)] = Field(
        description="A configuration valid per the schema, or null while there is none (never an invalid one)."
    )
    quick_replies: list[str] = Field(max_length=MAX_QUICK_REPLIES)
    suggested_templates: list[TemplateSummary] = Field(max_length=MAX_SUGGESTED_TEMPLATES)
    is_complete: bool
    changes: list[ConfigChange] = Field(
        description="What this turn changed: `{op, path, old, new}`, paths as `config`'s."
    )
    warnings: list[LintWarning] = Field(
        description="The permission-safety lint of `config`; with guild_id, also what the dry run warns of (what "
        "the plan deletes and keeps, the channels you cannot view)."
    )
    plan: list[PlanItem] | None = Field(
        None,
        description="With guild_id: what a deploy of `config` with `prune` would do there (a rename or move is an "
        "`update`, what the conversation removed a `delete`).",
    )
    plan_id: str | None = Field(None, description="With guild_id: the plan's id, for a deploy's `confirm`.")
    problems: list[FieldError] | None = Field(
        None,
        description="With guild_id: what a deploy of `config` there would refuse, one per configuration path "
        "(`[]`: it would pass).",
    )
    attachments_used: list[str] = Field(
        default_factory=list,
        description="The attachments whose analysis (`analysis_status` done) the model was given as the user's "
        "description of the file, by name (the URL when it has none).",
    )
    history_trimmed: int = Field(
        0,
        ge=0,
        description="How many of the oldest messages were left out of what the model was sent, to keep the turn "
        "within its input budget (the configuration carries what they decided).",
    )


class GuildReview(BaseModel):
    """What a deploy of one configuration to the live guild would do, and refuse."""

    plan: list[PlanItem] | None
    plan_id: str | None = None
    problems: list[FieldError]


class LiveGuildChecks(Protocol):
    """The live guild a conversation is about (svcconf.conversation.live_guild): what the bot and the caller may
    grant there, as the model is told it, and what a deploy of a configuration would do and refuse there."""

    def grants(self) -> dict[str, Any]: ...

    def review(self, config: ServerConfig | None) -> GuildReview: ...

    def warnings(self, config: ServerConfig | None) -> list[LintWarning]: ...


def clean_quick_replies(replies: list[str]) -> list[str]:
    """At most 4 distinct, non-empty, short answers, in the model's order."""
    kept: list[str] = []
    for reply in replies:
        text = " ".join(reply.split())[:MAX_QUICK_REPLY_LENGTH].strip()
        if text and text.casefold() not in {k.casefold() for k in kept}:
            kept.append(text)
    return kept[:MAX_QUICK_REPLIES]
