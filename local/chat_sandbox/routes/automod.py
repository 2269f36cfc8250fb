"""A guild's AutoMod rules (`/guilds/{id}/auto-moderation/rules[/{rule_id}]`), as the platform's docs and OpenAPI
description give them; where the two disagree the stricter is enforced (a block message <= 150, actions 1-5).

MANAGE_GUILD for all; a timeout action also needs MODERATE_MEMBERS. At most 6 keyword rules and 1 of each other
trigger (50035 with the leaf code AUTO_MODERATION_MAX_RULES_OF_TYPE_EXCEEDED [obs]); a rule's trigger cannot
change; `enabled` defaults to false.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from local.chat_sandbox.access import bot_guild, require
from local.chat_sandbox.bodies import Body, Snowflake, _between, _length, _one_of, parse
from local.chat_sandbox.protocol import (
    MANAGE_GUILD,
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
MODERATE_MEMBERS = 1 << PERMISSION_BITS["MODERATE_MEMBERS"]
MAX_RULES = {1: 6, 3: 1, 4: 1, 5: 1, 6: 1}
TIMEOUT, BLOCK_INTERACTION, ALERT, BLOCK = 3, 4, 2, 1

# -- bodies -----------------------------------------------------------------------------------------------------------

Word = Annotated[str, _length(1, 60)]


class TriggerMetadataBody(Body):
    keyword_filter: list[Word] | None = Field(None, max_length=1000)
    regex_patterns: list[Annotated[str, _length(1, 260)]] | None = Field(None, max_length=10)
    allow_list: list[Word] | None = Field(None, max_length=1000)  # 100 but for keyword presets: by the route
    presets: list[Annotated[int, _one_of((1, 2, 3))]] | None = None
    mention_total_limit: Annotated[int, _between(0, 50)] | None = None
    mention_raid_protection_enabled: bool | None = None


class ActionMetadataBody(Body):
    channel_id: Snowflake | None = None
    duration_seconds: Annotated[int, _between(0, 2_419_200)] | None = None
    custom_message: Annotated[str, _length(0, 150)] | None = None


class ActionBody(Body):
    type: Annotated[int, _one_of((1, 2, 3, 4))]
    metadata: ActionMetadataBody | None = None


class RuleBody(Body):
    """A create body; a modify body is the same with every field optional (`trigger_type` only as it is)."""

    name: Annotated[str, _length(1, 100)] | None = None
    event_type: Annotated[int, _one_of((1, 2))] | None = None
    trigger_type: Annotated[int, _one_of(tuple(MAX_RULES))] | None = None
    trigger_metadata: TriggerMetadataBody | None = None
    actions: list[ActionBody] | None = Field(None, min_length=1, max_length=5)
    enabled: bool | None = None
    exempt_roles: list[Snowflake] | None = Field(None, max_length=20)
    exempt_channels: list[Snowflake] | None = Field(None, max_length=50)


# -- AutoMod ----------------------------------------------------------------------------------------------------------

_METADATA_BY_TRIGGER: dict[int, tuple[str, ...]] = {
    1: ("keyword_filter", "regex_patterns", "allow_list"),
    3: (),
    4: ("allow_list", "presets"),
    5: ("mention_total_limit", "mention_raid_protection_enabled"),
    6: ("keyword_filter", "regex_patterns", "allow_list"),
}
_METADATA_DEFAULTS: dict[str, Any] = {
    "keyword_filter": [],
    "regex_patterns": [],
    "allow_list": [],
    "presets": [],
    "mention_total_limit": 0,
    "mention_raid_protection_enabled": False,
}


def _rules(guild: Guild) -> dict[str, dict[str, Any]]:
    rules: dict[str, dict[str, Any]] = guild.setdefault("automod_rules", {})
    return rules


def list_rules(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_GUILD)
    return 200, list(_rules(guild).values())


def get_rule(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_GUILD)
    return 200, _rule(guild, call.params["rule_id"])


def _rule(guild: Guild, rule_id: str) -> dict[str, Any]:
    rule = _rules(guild).get(rule_id)
    if rule is None:
        raise error(404, 10066, "Unknown Auto Moderation Rule")
    return rule


def create_rule(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    permissions = require(state, guild, MANAGE_GUILD)
    body = parse(call, RuleBody)
    missing = [f for f in ("name", "event_type", "trigger_type") if getattr(body, f) is None]
    if body.trigger_type in (4, 6) and body.trigger_metadata is None:
        missing.append("trigger_metadata")
    if missing:
        raise invalid_form({f: field_error("BASE_TYPE_REQUIRED", "This field is required") for f in missing})
    trigger = body.trigger_type
    assert trigger is not None
    same = [rule for rule in _rules(guild).values() if rule["trigger_type"] == trigger]
    if len(same) >= MAX_RULES[trigger]:
        message = f"Maximum number of rules with trigger type {trigger} is {MAX_RULES[trigger]}"
        raise invalid_form({"trigger_type": field_error("AUTO_MODERATION_MAX_RULES_OF_TYPE_EXCEEDED", message)})
    rule = {
        "id": state.next_id(),
        "guild_id": guild["id"],
        "creator_id": state.bot["id"],
        "name": "",
        "event_type": 1,
        "trigger_type": trigger,
        "trigger_metadata": {key: _METADATA_DEFAULTS[key] for key in _METADATA_BY_TRIGGER[trigger]},
        "actions": [],
        "enabled": False,
        "exempt_roles": [],
        "exempt_channels": [],
    }
    _update_rule(guild, rule, body, permissions)
    _rules(guild)[rule["id"]] = rule
    return 200, rule


def modify_rule(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    permissions = require(state, guild, MANAGE_GUILD)
    rule = _rule(guild, call.params["rule_id"])
    body = parse(call, RuleBody)
    if body.trigger_type is not None and body.trigger_type != rule["trigger_type"]:
        raise invalid_form({"trigger_type": field_error("BASE_TYPE_INVALID", "A rule's trigger type cannot change.")})
    updated = {**rule}
    _update_rule(guild, updated, body, permissions)
    rule.update(updated)
    return 200, rule


def delete_rule(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_GUILD)
    _rule(guild, call.params["rule_id"])
    del _rules(guild)[call.params["rule_id"]]
    return 204, None


def _update_rule(guild: Guild, rule: dict[str, Any], body: RuleBody, permissions: int) -> None:
    """Checks the body against the guild and the rule's trigger, then writes it into `rule`."""
    trigger = rule["trigger_type"]
    errors: dict[str, Any] = {}
    if body.trigger_metadata is not None:
        sent = body.trigger_metadata.model_dump(exclude_none=True)
        limit = 1000 if trigger == 4 else 100
        if len(sent.get("allow_list", [])) > limit:
            errors["trigger_metadata"] = {
                "allow_list": field_error("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")
            }
        allowed = _METADATA_BY_TRIGGER[trigger]
        rule["trigger_metadata"] = {
            key: sent.get(key, rule["trigger_metadata"].get(key, _METADATA_DEFAULTS[key])) for key in allowed
        }
    if body.actions is not None:
        actions = []
        for index, action in enumerate(body.actions):
            metadata = (action.metadata or ActionMetadataBody()).model_dump(exclude_none=True)
            problem = _action_problem(guild, trigger, action.type, metadata)
            if problem:
                errors.setdefault("actions", {})[str(index)] = field_error("BASE_TYPE_INVALID", problem)
            if action.type == TIMEOUT and not permissions & MODERATE_MEMBERS:
                raise error(403, 50013, "Missing Permissions")
            kept = {"channel_id"} if action.type == ALERT else {"duration_seconds"} if action.type == TIMEOUT else set()
            if action.type == BLOCK and "custom_message" in metadata:
                kept = {"custom_message"}
            actions.append({"type": action.type, "metadata": {k: v for k, v in metadata.items() if k in kept}})
        rule["actions"] = actions
    for field, table in (("exempt_roles", guild["roles"]), ("exempt_channels", guild["channels"])):
        value = getattr(body, field)
        if value is None:
            continue
        for index, ref in enumerate(value):
            if ref not in table:
                errors.setdefault(field, {})[str(index)] = field_error("BASE_TYPE_INVALID", "Unknown id.")
        rule[field] = list(dict.fromkeys(value))
    if errors:
        raise invalid_form(errors)
    for field in ("name", "event_type", "enabled"):
        if getattr(body, field) is not None:
            rule[field] = getattr(body, field)


def _action_problem(guild: Guild, trigger: int, kind: int, metadata: dict[str, Any]) -> str | None:
    if kind == TIMEOUT and trigger not in (1, 5):
        return "A timeout is only for keyword and mention spam rules."
    if kind == TIMEOUT and metadata.get("duration_seconds") is None:
        return "A timeout needs its duration_seconds."
    if kind == BLOCK_INTERACTION and trigger != 6:
        return "Blocking interactions is only for member profile rules."
    if kind == ALERT:
        channel = guild["channels"].get(metadata.get("channel_id") or "")
        if channel is None or channel["type"] not in TEXT_LIKE:
            return "An alert needs a text channel of the guild."
    return None
