"""A guild's onboarding and welcome screen, as the platform's docs and OpenAPI description give them (its AutoMod
rules: `automod.py`).

Where the two disagree the stricter is enforced (an option's title 1-50).
- Onboarding (`GET`/`PUT /guilds/{id}/onboarding`): PUT needs MANAGE_GUILD and MANAGE_ROLES; GET needs MANAGE_GUILD
  while onboarding is disabled [obs]. Enabled, it needs at least 7 default channels of which 5 let @everyone send
  messages (the docs), prompts' channels counting too in advanced mode: below that, 350000 (enabling) or 350001
  (already enabled). The status of those answers is not documented: 400 here. A field left out stays as it is.
- The welcome screen (`GET`/`PATCH /guilds/{id}/welcome-screen`): MANAGE_GUILD (for GET only while it is disabled);
  only a COMMUNITY guild has one: elsewhere 10069 "Unknown Guild Welcome Screen" (its status is not documented: 404).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from local.chat_sandbox.access import bot_guild, require
from local.chat_sandbox.bodies import Body, EmojiName, Snowflake, _length, _one_of, parse
from local.chat_sandbox.protocol import (
    ADMINISTRATOR,
    MANAGE_GUILD,
    MANAGE_ROLES,
    TEXT_LIKE,
    Call,
    error,
    field_error,
    invalid_form,
)
from svcconf.config.permissions import PERMISSION_BITS

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

Guild = dict[str, Any]
VIEW_CHANNEL = 1 << PERMISSION_BITS["VIEW_CHANNEL"]
SEND_MESSAGES = 1 << PERMISSION_BITS["SEND_MESSAGES"]

MIN_DEFAULT_CHANNELS, MIN_POSTABLE_CHANNELS = 7, 5

# -- bodies -----------------------------------------------------------------------------------------------------------


class OptionBody(Body):
    id: Snowflake | None = None
    title: Annotated[str, _length(1, 50)]
    description: Annotated[str, _length(0, 100)] | None = None
    emoji_id: Snowflake | None = None
    emoji_name: EmojiName | None = None
    emoji_animated: bool | None = None
    role_ids: list[Snowflake] | None = Field(None, max_length=50)
    channel_ids: list[Snowflake] | None = Field(None, max_length=50)


class PromptBody(Body):
    id: Snowflake
    title: Annotated[str, _length(1, 100)]
    options: list[OptionBody] = Field(min_length=1, max_length=50)
    single_select: bool | None = None
    required: bool | None = None
    in_onboarding: bool | None = None
    type: Annotated[int, _one_of((0, 1))] | None = None


class OnboardingBody(Body):
    prompts: list[PromptBody] | None = Field(None, max_length=15)
    enabled: bool | None = None
    default_channel_ids: list[Snowflake] | None = Field(None, max_length=500)
    mode: Annotated[int, _one_of((0, 1))] | None = None


class WelcomeChannelBody(Body):
    channel_id: Snowflake
    description: Annotated[str, _length(1, 50)]
    emoji_id: Snowflake | None = None
    emoji_name: EmojiName | None = None


class WelcomeScreenBody(Body):
    description: Annotated[str, _length(0, 140)] | None = None
    welcome_channels: list[WelcomeChannelBody] | None = Field(None, max_length=5)
    enabled: bool | None = None


# -- onboarding -------------------------------------------------------------------------------------------------------


def _onboarding(guild: Guild) -> dict[str, Any]:
    stored: dict[str, Any] = guild.setdefault(
        "onboarding", {"prompts": [], "default_channel_ids": [], "enabled": False, "mode": 0}
    )
    return stored


def onboarding_json(guild: Guild) -> dict[str, Any]:
    return {"guild_id": guild["id"], **_onboarding(guild)}


def get_onboarding(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    if not _onboarding(guild)["enabled"]:
        require(state, guild, MANAGE_GUILD)
    return 200, onboarding_json(guild)


def put_onboarding(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_GUILD, MANAGE_ROLES)
    body = parse(call, OnboardingBody)
    current = _onboarding(guild)
    errors: dict[str, Any] = {}
    for index, channel_id in enumerate(body.default_channel_ids or []):
        if channel_id not in guild["channels"]:
            errors.setdefault("default_channel_ids", {})[str(index)] = field_error(
                "BASE_TYPE_INVALID", "Unknown channel."
            )
    prompts = current["prompts"]
    if body.prompts is not None:
        prompts = []
        for p, prompt in enumerate(body.prompts):
            options = []
            for o, option in enumerate(prompt.options):
                where = errors.setdefault("prompts", {}).setdefault(str(p), {}).setdefault("options", {})
                for field, table in (("role_ids", guild["roles"]), ("channel_ids", guild["channels"])):
                    for n, ref in enumerate(getattr(option, field) or []):
                        if ref not in table or ref == guild["id"]:
                            where.setdefault(str(o), {}).setdefault(field, {})[str(n)] = field_error(
                                "BASE_TYPE_INVALID", "Unknown role." if field == "role_ids" else "Unknown channel."
                            )
                options.append(
                    {
                        "id": option.id or state.next_id(),
                        "title": option.title,
                        "description": option.description or "",
                        "emoji": {
                            "id": option.emoji_id,
                            "name": option.emoji_name,
                            "animated": bool(option.emoji_animated),
                        },
                        "role_ids": list(option.role_ids or []),
                        "channel_ids": list(option.channel_ids or []),
                    }
                )
            prompts.append(
                {
                    "id": prompt.id,
                    "title": prompt.title,
                    "options": options,
                    "single_select": bool(prompt.single_select),
                    "required": bool(prompt.required),
                    "in_onboarding": True if prompt.in_onboarding is None else prompt.in_onboarding,
                    "type": prompt.type or 0,
                }
            )
    errors = _pruned(errors)
    if errors:
        raise invalid_form(errors)
    updated = {
        "prompts": prompts,
        "default_channel_ids": current["default_channel_ids"]
        if body.default_channel_ids is None
        else list(dict.fromkeys(body.default_channel_ids)),
        "enabled": current["enabled"] if body.enabled is None else body.enabled,
        "mode": current["mode"] if body.mode is None else body.mode,
    }
    if updated["enabled"] and not _meets_requirements(guild, updated):
        if current["enabled"]:
            raise error(400, 350001, "Cannot update onboarding while below requirements")
        raise error(400, 350000, "Cannot enable onboarding, requirements are not met")
    guild["onboarding"] = updated
    return 200, onboarding_json(guild)


def _meets_requirements(guild: Guild, onboarding: dict[str, Any]) -> bool:
    """At least 7 default channels, 5 of which @everyone may send messages in; advanced mode counts prompts' too."""
    counted = list(onboarding["default_channel_ids"])
    if onboarding["mode"] == 1:
        counted += [
            c for prompt in onboarding["prompts"] for option in prompt["options"] for c in option["channel_ids"]
        ]
    channels = [guild["channels"][c] for c in dict.fromkeys(counted) if c in guild["channels"]]
    postable = [c for c in channels if c["type"] in TEXT_LIKE and _everyone_can_post(guild, c)]
    return len(channels) >= MIN_DEFAULT_CHANNELS and len(postable) >= MIN_POSTABLE_CHANNELS


def _everyone_can_post(guild: Guild, channel: dict[str, Any]) -> bool:
    value = int(guild["roles"][guild["id"]]["permissions"])
    if value & ADMINISTRATOR:
        return True
    for overwrite in channel.get("permission_overwrites", []):
        if overwrite["id"] == guild["id"]:
            value = (value & ~int(overwrite["deny"])) | int(overwrite["allow"])
    return value & (VIEW_CHANNEL | SEND_MESSAGES) == VIEW_CHANNEL | SEND_MESSAGES


def _pruned(errors: dict[str, Any]) -> dict[str, Any]:
    """The error tree without its empty branches."""
    kept = {}
    for key, value in errors.items():
        if isinstance(value, dict) and key != "_errors":
            value = _pruned(value)
            if value:
                kept[key] = value
        elif value:
            kept[key] = value
    return kept


# -- the welcome screen -----------------------------------------------------------------------------------------------


def _welcome_screen(guild: Guild) -> dict[str, Any]:
    if "COMMUNITY" not in guild.get("features", []):
        raise error(404, 10069, "Unknown Guild Welcome Screen")
    screen: dict[str, Any] = guild.setdefault("welcome_screen", {"description": None, "welcome_channels": []})
    return screen


def get_welcome_screen(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    screen = _welcome_screen(guild)
    if "WELCOME_SCREEN_ENABLED" not in guild.get("features", []):
        require(state, guild, MANAGE_GUILD)
    return 200, screen


def modify_welcome_screen(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_GUILD)
    screen = _welcome_screen(guild)
    body = parse(call, WelcomeScreenBody)
    sent = body.model_fields_set
    errors: dict[str, Any] = {}
    for index, entry in enumerate(body.welcome_channels or []):
        if entry.channel_id not in guild["channels"]:
            errors.setdefault("welcome_channels", {})[str(index)] = {
                "channel_id": field_error("BASE_TYPE_INVALID", "Unknown channel.")
            }
    if errors:
        raise invalid_form(errors)
    if "description" in sent:
        screen["description"] = body.description
    if "welcome_channels" in sent:
        screen["welcome_channels"] = [entry.model_dump() for entry in body.welcome_channels or []]
    if body.enabled is not None:
        features = [f for f in guild.get("features", []) if f != "WELCOME_SCREEN_ENABLED"]
        guild["features"] = [*features, "WELCOME_SCREEN_ENABLED"] if body.enabled else features
    return 200, screen
