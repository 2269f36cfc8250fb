"""Dangerous grants to every member, compared per permission and per matched object (docs/05-deploy-engine.md,
"Dangerous grants need an acknowledgement"): what the server already grants on the same object needs none, whatever
else it grants; the same grant on another object, or a new one, does; each detail names what is new there."""

from __future__ import annotations

from typing import Any

from svcconf.caller_rights.grants import new_grants
from svcconf.config import ServerConfig, to_bitfield
from svcconf.deploy_engine.plan import plan_deployment
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, overwrite

BASE = ["VIEW_CHANNEL", "SEND_MESSAGES", "MENTION_EVERYONE"]


def server() -> GuildBuilder:
    """@everyone holds MENTION_EVERYONE and MANAGE_MESSAGES; Mods and Hosts KICK_MEMBERS; #news lets @everyone
    manage threads."""
    guild = GuildBuilder()
    guild.roles[0] = guild.roles[0].model_copy(update={"permissions": to_bitfield([*BASE, "MANAGE_MESSAGES"])})
    guild.role("Mods", "KICK_MEMBERS")
    guild.role("Hosts", "KICK_MEMBERS", "BAN_MEMBERS")
    guild.channel("news", overwrites=[overwrite(GUILD_ID, allow=("MANAGE_THREADS",))])
    guild.channel("chat")
    return guild


def grants(config: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    live = server().build()
    parsed = ServerConfig.model_validate({"name": live.name, **config})
    return [(d.field, d.rule, d.message) for d in new_grants(parsed, live, plan_deployment(live, parsed).ids)]


def test_keeping_part_of_what_everyone_holds_needs_none_and_adding_names_only_the_new_permission() -> None:
    assert grants({"everyone_permissions": BASE}) == []
    assert grants({"everyone_permissions": [*BASE, "MANAGE_MESSAGES"]}) == []
    [(field, rule, message)] = grants({"everyone_permissions": [*BASE, "BAN_MEMBERS", "KICK_MEMBERS"]})
    assert (field, rule) == ("everyone_permissions", "everyone-permissions-dangerous")
    assert message.startswith("@everyone's server-wide permissions would gain BAN_MEMBERS and KICK_MEMBERS, which")
    [(_, _, message)] = grants({"everyone_permissions": ["ADMINISTRATOR"]})
    assert "would gain ADMINISTRATOR, which" in message


def test_an_everyone_overwrite_is_compared_with_the_same_channels_and_copied_elsewhere_is_new() -> None:
    own = [{"role": "@everyone", "allow": ["MANAGE_THREADS"], "deny": []}]
    assert grants({"channels": [{"name": "news", "overwrites": own}]}) == []
    [(field, rule, message)] = grants({"channels": [{"name": "news"}, {"name": "chat", "overwrites": own}]})
    assert (field, rule) == ("channels[1].overwrites[0].allow", "everyone-dangerous-permission")
    assert message.startswith("On channel 'chat', @everyone would be allowed MANAGE_THREADS, which")
    [(field, _, message)] = grants({"categories": [{"name": "Info", "channels": [{"name": "new", "overwrites": own}]}]})
    assert field == "categories[0].channels[0].overwrites[0].allow"
    assert "On channel 'new' in category 'Info'" in message
    [(field, _, _)] = grants({"categories": [{"name": "Info", "overwrites": own}]})
    assert field == "categories[0].overwrites[0].allow"
    # what @everyone holds server-wide anyway is no one's new grant in an overwrite
    mention = [{"role": "@everyone", "allow": ["MENTION_EVERYONE"], "deny": []}]
    assert grants({"channels": [{"name": "chat", "overwrites": mention}]}) == []


def test_every_roles_grant_needs_none_only_when_each_role_is_a_live_one_that_holds_it() -> None:
    kick = {"permissions": ["KICK_MEMBERS"]}
    assert grants({"roles": [{"name": "Mods", **kick}, {"name": "Hosts", **kick}]}) == []
    [(field, rule, message)] = grants({"roles": [{"name": "Wardens", **kick}, {"name": "Guards", **kick}]})
    assert (field, rule) == ("roles", "every-role-dangerous-permission")
    assert message.startswith("All 2 roles of this configuration would grant KICK_MEMBERS, which")
    [(_, _, message)] = grants({"roles": [{"name": "Mods", **kick}, {"name": "Guards", **kick}]})
    assert "would grant KICK_MEMBERS," in message
    ban = {"permissions": ["KICK_MEMBERS", "BAN_MEMBERS"]}
    [(_, _, message)] = grants({"roles": [{"name": "Mods", **ban}, {"name": "Hosts", **ban}]})
    assert "would grant BAN_MEMBERS," in message  # Hosts holds it, Mods does not
    admins = [{"name": "A", "permissions": ["ADMINISTRATOR"]}, {"name": "B", "permissions": ["ADMINISTRATOR"]}]
    [(_, _, message)] = grants({"roles": admins})
    assert "would grant ADMINISTRATOR," in message
    assert grants({"roles": [{"name": "Solo", **kick}]}) == []  # one role is not every member's
    mention = {"permissions": ["MENTION_EVERYONE"]}
    assert grants({"roles": [{"name": "A", **mention}, {"name": "B", **mention}]}) == []  # @everyone holds it


def test_without_a_live_server_every_grant_is_new() -> None:
    parsed = ServerConfig.model_validate({"name": "x", "everyone_permissions": ["MENTION_EVERYONE"]})
    assert [d.rule for d in new_grants(parsed, None, {})] == ["everyone-permissions-dangerous"]
