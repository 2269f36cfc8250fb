"""Configuration version 4: how new members arrive (onboarding, the welcome screen) and how the server guards itself
(AutoMod rules): configuration version 4, with the limits the platform's documentation and OpenAPI description give
(where they disagree, the stricter).

Every limit that depends on the configuration alone is a pydantic constraint or a validator here, so a request past
one is a 400 naming the field; what depends on the server (COMMUNITY, onboarding's minimum of default channels, the
per-trigger counts with the rules a deploy keeps) is the preflight's. The names these objects give (roles, channels)
must be the configuration's own: `ServerConfig` checks them once every field is valid.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Literal, Self

from pydantic import Field, StrictBool, field_validator, model_validator
from pydantic_core import InitErrorDetails

from svcconf.config.field_types import ConfigModel, Emoji, Loc, Name, json_integer, problem, raise_problems

# -- the platform's limits (where its documentation and its OpenAPI disagree, the stricter) -------------------------

MAX_PROMPTS = 15
MAX_PROMPT_TITLE = 100
MAX_OPTIONS = 50
MAX_OPTION_TITLE = 50
MAX_OPTION_DESCRIPTION = 100
MAX_OPTION_REFERENCES = 50  # roles, and channels, per option
MAX_DEFAULT_CHANNELS = 500
ONBOARDING_MIN_DEFAULT_CHANNELS = 7  # when enabled (DOCS), of which...
ONBOARDING_MIN_POSTABLE_CHANNELS = 5  # ...this many let @everyone send messages

MAX_RULE_NAME = 100
MAX_RULES_BY_TRIGGER: dict[str, int] = {
    "keyword": 6,
    "spam": 1,
    "keyword_preset": 1,
    "mention_spam": 1,
    "member_profile": 1,
}
MAX_KEYWORDS = 1000
MAX_KEYWORD_LENGTH = 60
MAX_REGEXES = 10
MAX_REGEX_LENGTH = 260
MAX_ALLOW_BY_TRIGGER: dict[str, int] = {"keyword": 100, "member_profile": 100, "keyword_preset": 1000}
MAX_MENTION_LIMIT = 50
MAX_EXEMPT_ROLES = 20
MAX_EXEMPT_CHANNELS = 50
MAX_ACTIONS = 5
MAX_TIMEOUT_SECONDS = 2_419_200  # four weeks
MAX_BLOCK_MESSAGE = 150  # DOCS 150, SPEC 300: the stricter

MAX_WELCOME_CHANNELS = 5
MAX_WELCOME_DESCRIPTION = 140
MAX_WELCOME_CHANNEL_DESCRIPTION = 50

# -- the platform's numbers for the configuration's names ------------------------------------------------------------

Trigger = Literal["keyword", "spam", "keyword_preset", "mention_spam", "member_profile"]
ActionType = Literal["block", "alert", "timeout", "block_interaction"]
Preset = Literal["profanity", "sexual_content", "slurs"]
PromptType = Literal["multiple_choice", "dropdown"]
OnboardingMode = Literal["default", "advanced"]

TRIGGER_TYPES: dict[str, int] = {"keyword": 1, "spam": 3, "keyword_preset": 4, "mention_spam": 5, "member_profile": 6}
ACTION_TYPES: dict[str, int] = {"block": 1, "alert": 2, "timeout": 3, "block_interaction": 4}
PRESETS: dict[str, int] = {"profanity": 1, "sexual_content": 2, "slurs": 3}
PROMPT_TYPES: dict[str, int] = {"multiple_choice": 0, "dropdown": 1}
ONBOARDING_MODES: dict[str, int] = {"default": 0, "advanced": 1}
# The event each trigger listens to: a message, or a member joining or editing their profile.
TRIGGER_EVENTS: dict[str, int] = {"keyword": 1, "spam": 1, "keyword_preset": 1, "mention_spam": 1, "member_profile": 2}

# Which trigger takes which of a rule's optional fields (the platform's trigger metadata).
TRIGGER_FIELDS: dict[str, frozenset[str]] = {
    "keyword": frozenset({"keywords", "regex", "allow"}),
    "spam": frozenset(),
    "keyword_preset": frozenset({"presets", "allow"}),
    "mention_spam": frozenset({"mention_limit", "mention_raid_protection"}),
    "member_profile": frozenset({"keywords", "regex", "allow"}),
}
METADATA_FIELDS = ("keywords", "regex", "allow", "presets", "mention_limit", "mention_raid_protection")
TIMEOUT_TRIGGERS = frozenset({"keyword", "mention_spam"})
BLOCK_INTERACTION_TRIGGERS = frozenset({"member_profile"})

Keyword = Annotated[str, Field(min_length=1, max_length=MAX_KEYWORD_LENGTH)]
Regex = Annotated[str, Field(min_length=1, max_length=MAX_REGEX_LENGTH)]
ChannelName = Name  # a channel of this configuration, by name
RoleName = Name  # a role of this configuration, by name (or '@everyone' where it may be exempt)


# -- onboarding -------------------------------------------------------------------------------------------------------


class OnboardingOption(ConfigModel):
    """One answer of a prompt: what it hands out (roles) and shows (channels)."""

    title: str = Field(min_length=1, max_length=MAX_OPTION_TITLE)
    description: str | None = Field(None, max_length=MAX_OPTION_DESCRIPTION)
    emoji: Emoji | None = None
    roles: list[RoleName] = Field(default_factory=list, max_length=MAX_OPTION_REFERENCES)
    channels: list[ChannelName] = Field(default_factory=list, max_length=MAX_OPTION_REFERENCES)


class OnboardingPrompt(ConfigModel):
    """A question new members answer; matched by title."""

    title: str = Field(min_length=1, max_length=MAX_PROMPT_TITLE)
    type: PromptType = "multiple_choice"
    single_select: StrictBool = False
    required: StrictBool = False
    in_onboarding: StrictBool = True
    options: list[OnboardingOption] = Field(min_length=1, max_length=MAX_OPTIONS)

    @model_validator(mode="after")
    def _unique_options(self) -> Self:
        raise_problems("OnboardingPrompt", list(_duplicates([o.title for o in self.options], ("options",), "title")))
        return self


class Onboarding(ConfigModel):
    """How new members arrive: the channels they see first and the questions that give them roles and channels."""

    enabled: StrictBool = False
    mode: OnboardingMode = "default"
    default_channels: list[ChannelName] = Field(default_factory=list, max_length=MAX_DEFAULT_CHANNELS)
    prompts: list[OnboardingPrompt] = Field(default_factory=list, max_length=MAX_PROMPTS)

    @model_validator(mode="after")
    def _unique_prompts(self) -> Self:
        raise_problems("Onboarding", list(_duplicates([p.title for p in self.prompts], ("prompts",), "title")))
        return self


# -- AutoMod ----------------------------------------------------------------------------------------------------------


class AutomodAction(ConfigModel):
    """What a rule does when it fires: block the message, alert a channel, time the member out, or block their
    interactions."""

    type: ActionType
    channel: ChannelName | None = None
    seconds: int | None = Field(None, ge=0, le=MAX_TIMEOUT_SECONDS)
    message: str | None = Field(None, max_length=MAX_BLOCK_MESSAGE)
    _integers = field_validator("seconds", mode="before")(json_integer)

    @model_validator(mode="after")
    def _fields_of_its_type(self) -> Self:
        problems: list[InitErrorDetails] = []
        owners = {"channel": "alert", "seconds": "timeout", "message": "block"}
        for field, owner in owners.items():
            if getattr(self, field) is not None and self.type != owner:
                problems.append(
                    problem((field,), "action_field", "only a {owner} action takes '{field}'", field, owner=owner)
                )
        for owner, field in (("alert", "channel"), ("timeout", "seconds")):
            if self.type == owner and getattr(self, field) is None:
                problems.append(problem((field,), "missing", "a {owner} action needs '{field}'", None, owner=owner))
        raise_problems("AutomodAction", problems)
        return self


class AutomodRule(ConfigModel):
    """One AutoMod rule, matched to the server's by name (a changed trigger is a delete and a create)."""

    name: str = Field(min_length=1, max_length=MAX_RULE_NAME)
    trigger: Trigger
    enabled: StrictBool = Field(
        True, description="A rule a configuration names is meant to work (the platform's default is off)."
    )
    keywords: list[Keyword] | None = Field(None, max_length=MAX_KEYWORDS)
    regex: list[Regex] | None = Field(None, max_length=MAX_REGEXES)
    allow: list[Keyword] | None = Field(
        None,
        max_length=max(MAX_ALLOW_BY_TRIGGER.values()),
        description="100 (keyword, member_profile), 1000 (keyword_preset).",
    )
    presets: list[Preset] | None = None
    mention_limit: int | None = Field(None, ge=0, le=MAX_MENTION_LIMIT)
    mention_raid_protection: StrictBool | None = None
    actions: list[AutomodAction] = Field(min_length=1, max_length=MAX_ACTIONS)
    exempt_roles: list[RoleName] = Field(default_factory=list, max_length=MAX_EXEMPT_ROLES)
    exempt_channels: list[ChannelName] = Field(default_factory=list, max_length=MAX_EXEMPT_CHANNELS)
    _integers = field_validator("mention_limit", mode="before")(json_integer)

    @model_validator(mode="after")
    def _fits_its_trigger(self) -> Self:
        problems: list[InitErrorDetails] = []
        allowed = TRIGGER_FIELDS[self.trigger]
        for field in METADATA_FIELDS:
            if getattr(self, field) is not None and field not in allowed:
                problems.append(
                    problem(
                        (field,), "trigger_field", "a {trigger} rule takes no '{field}'", field, trigger=self.trigger
                    )
                )
        limit = MAX_ALLOW_BY_TRIGGER.get(self.trigger)
        if self.allow is not None and limit is not None and len(self.allow) > limit:
            problems.append(
                problem(
                    ("allow",),
                    "too_long",
                    "a {trigger} rule's allow list holds at most {limit} entries",
                    len(self.allow),
                    trigger=self.trigger,
                    limit=limit,
                )
            )
        for index, action in enumerate(self.actions):
            if action.type == "timeout" and self.trigger not in TIMEOUT_TRIGGERS:
                message = "a timeout is only for keyword and mention_spam rules"
                problems.append(problem(("actions", index, "type"), "action_trigger", message, action.type))
            if action.type == "block_interaction" and self.trigger not in BLOCK_INTERACTION_TRIGGERS:
                message = "block_interaction is only for member_profile rules"
                problems.append(problem(("actions", index, "type"), "action_trigger", message, action.type))
        raise_problems("AutomodRule", problems)
        return self


# -- the welcome screen -----------------------------------------------------------------------------------------------


class WelcomeChannel(ConfigModel):
    channel: ChannelName
    description: str = Field(min_length=1, max_length=MAX_WELCOME_CHANNEL_DESCRIPTION)
    emoji: Emoji | None = None


class WelcomeScreen(ConfigModel):
    """What a Community server shows a new member: a description and up to five channels."""

    enabled: StrictBool = True
    description: str | None = Field(None, max_length=MAX_WELCOME_DESCRIPTION)
    channels: list[WelcomeChannel] = Field(default_factory=list, max_length=MAX_WELCOME_CHANNELS)


# -- the rules across the configuration (called by ServerConfig) ------------------------------------------------------


def _duplicates(names: list[str], loc: Loc, field: str) -> list[InitErrorDetails]:
    seen: dict[str, int] = {}
    found = []
    for index, name in enumerate(names):
        key = name.casefold()
        if key in seen:
            found.append(
                problem(
                    (*loc, index, field),
                    "duplicate_name",
                    "'{name}' is also [{first}]: they are matched by it, so it must differ",
                    name,
                    name=name,
                    first=seen[key],
                )
            )
        else:
            seen[key] = index
    return found


def automod_counts(rules: list[AutomodRule]) -> list[InitErrorDetails]:
    """Rules by name and per trigger: duplicate names, and more of a trigger than the platform allows."""
    found = _duplicates([rule.name for rule in rules], ("automod",), "name")
    counts: dict[str, int] = {}
    for index, rule in enumerate(rules):
        counts[rule.trigger] = counts.get(rule.trigger, 0) + 1
        limit = MAX_RULES_BY_TRIGGER[rule.trigger]
        if counts[rule.trigger] == limit + 1:
            found.append(
                problem(
                    ("automod", index, "trigger"),
                    "too_many_rules",
                    "the platform allows at most {limit} {trigger} rule(s) in a server",
                    rule.trigger,
                    limit=limit,
                    trigger=rule.trigger,
                )
            )
    return found


def references(
    config_onboarding: Onboarding | None, rules: list[AutomodRule] | None, screen: WelcomeScreen | None
) -> Iterator[tuple[str, Loc, str]]:
    """Every role and channel name the v4 objects give, with its path and what it must be: ("role" (or @everyone),
    "option_role", "channel" or "text", loc, name)."""
    if config_onboarding is not None:
        for n, name in enumerate(config_onboarding.default_channels):
            yield "channel", ("onboarding", "default_channels", n), name
        for p, prompt in enumerate(config_onboarding.prompts):
            for o, option in enumerate(prompt.options):
                base = ("onboarding", "prompts", p, "options", o)
                for n, name in enumerate(option.roles):
                    yield "option_role", (*base, "roles", n), name
                for n, name in enumerate(option.channels):
                    yield "channel", (*base, "channels", n), name
    for r, rule in enumerate(rules or []):
        for a, action in enumerate(rule.actions):
            if action.channel is not None:
                yield "text", ("automod", r, "actions", a, "channel"), action.channel
        for n, name in enumerate(rule.exempt_roles):
            yield "role", ("automod", r, "exempt_roles", n), name
        for n, name in enumerate(rule.exempt_channels):
            yield "channel", ("automod", r, "exempt_channels", n), name
    if screen is not None:
        for n, entry in enumerate(screen.channels):
            yield "channel", ("welcome_screen", "channels", n, "channel"), entry.channel
