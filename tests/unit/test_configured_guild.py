"""A configuration read as the guild it describes (`deploy_engine/configured.py`, the "before" of manageBackup
`diff` against another backup): planning the same configuration against it writes nothing, every access (place x
role) is the configuration's, and a difference between two configurations is planned as a deploy would plan it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from svcconf.backups.formats import read_backup
from svcconf.config import ServerConfig
from svcconf.config.access import config_access
from svcconf.deploy_engine.configured import PLACEHOLDER_BASE, configured_guild
from svcconf.deploy_engine.live import guild_access
from svcconf.deploy_engine.plan import plan_deployment

DATA = Path(__file__).parents[1] / "data" / "backups"
GUILD = "1191000000000009000"
RICH: dict[str, Any] = {
    "name": "Rich",
    "everyone_permissions": ["VIEW_CHANNEL", "SEND_MESSAGES", "CONNECT"],
    "settings": {
        "verification_level": "medium",
        "afk_channel": "Quiet Room",
        "afk_timeout": 900,
        "system_channel": "welcome",
        "system_channel_flags": ["SUPPRESS_JOIN_NOTIFICATIONS"],
        "description": "A server with everything",
    },
    "roles": [
        {"id": "1191000000000009101", "name": "Mods", "color": 0xFF0000, "hoist": True, "permissions": ["BAN_MEMBERS"]},
        {"name": "Crew", "colors": {"primary": 0x00FF00, "secondary": 0x0000FF}, "mentionable": True},
        {"name": "Guests", "emoji": "👋"},
    ],
    "categories": [
        {
            "id": "1191000000000009201",
            "name": "Staff",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [
                {"name": "mod-log", "topic": "what mods did", "slowmode_seconds": 10},
                {"name": "open-desk", "overwrites": [{"role": "@everyone", "allow": ["VIEW_CHANNEL"]}]},
                {"name": "mods-only", "overwrites": [{"role": "@everyone", "allow": [], "deny": []}]},
                {"name": "Staff Room", "type": "voice", "bitrate": 64000, "user_limit": 5},
            ],
        },
        {"name": "Lobby", "channels": [{"name": "welcome"}, {"name": "Quiet Room", "type": "voice"}]},
    ],
    "channels": [
        {
            "name": "ideas",
            "type": "forum",
            "tags": [{"name": "bug", "moderated": True}, {"name": "idea", "emoji": "💡"}],
            "require_tag": True,
            "default_sort": "creation_date",
        },
        {"name": "announcements", "nsfw": True, "overwrites": [{"role": "Crew", "deny": ["SEND_MESSAGES"]}]},
    ],
    "automod": [
        {"name": "Invites", "trigger": "keyword", "keywords": ["discord.gg*"], "actions": [{"type": "block"}]},
        {
            "name": "Spam",
            "trigger": "spam",
            "actions": [{"type": "alert", "channel": "mod-log"}],
            "exempt_roles": ["Mods"],
            "exempt_channels": ["announcements"],
        },
    ],
    "onboarding": {
        "enabled": True,
        "default_channels": ["welcome", "announcements"],
        "prompts": [
            {
                "title": "Region?",
                "options": [
                    {"title": "Europe", "emoji": "🇪🇺", "roles": ["Crew"], "channels": ["ideas"]},
                    {"title": "Elsewhere", "roles": ["Guests"]},
                ],
            }
        ],
    },
    "welcome_screen": {
        "description": "Hello",
        "channels": [{"channel": "welcome", "description": "start here", "emoji": "👋"}],
    },
}


def fixtures() -> list[tuple[str, ServerConfig]]:
    configs = [("rich", ServerConfig.model_validate(RICH))]
    for name in ("configuration", "discord-backup", "platform", "template"):
        config = read_backup(json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))).config
        assert config is not None
        configs.append((name, config))
    return configs


@pytest.mark.parametrize(("name", "config"), fixtures(), ids=[name for name, _ in fixtures()])
def test_a_configuration_planned_against_the_guild_it_describes_writes_nothing(name, config):
    guild = configured_guild(config, GUILD)

    plan = plan_deployment(guild, config, prune=True)

    assert [(i.kind, i.name, i.action) for i in plan.items if i.action != "keep"] == []
    assert plan.steps == []
    assert guild_access(guild) == config_access(config)  # every place x role grants what the configuration says


def test_objects_keep_their_ids_and_the_rest_get_placeholders_below_any_snowflake():
    guild = configured_guild(ServerConfig.model_validate(RICH), GUILD)

    roles = {role.name: role for role in guild.roles}
    assert roles["Mods"].id == "1191000000000009101"
    assert PLACEHOLDER_BASE < int(roles["Crew"].id) < 10**12
    assert roles["@everyone"].id == GUILD
    assert guild.bot_top_position > max(r.position for r in guild.roles if not r.managed)  # a prune may delete any
    staff = next(c for c in guild.channels if c.name == "Staff")
    assert staff.id == "1191000000000009201"
    assert guild.settings.afk_channel_id == next(c.id for c in guild.channels if c.name == "Quiet Room")
    assert guild.settings.afk_timeout == 900


def test_a_difference_between_two_configurations_is_planned_as_a_deploy_plans_it():
    # `against`: Crew renamed Team (same id), ideas gone, a channel added; the backup: RICH with Crew's id
    backup = copy.deepcopy(RICH)
    backup["roles"][1]["id"] = "1191000000000009102"
    against = copy.deepcopy(backup)
    against["roles"][1]["name"] = "Team"
    against["channels"] = [c for c in against["channels"] if c["name"] != "ideas"] + [{"name": "memes"}]
    for channel in against["channels"]:
        for overwrite in channel.get("overwrites", []):
            overwrite["role"] = "Team" if overwrite["role"] == "Crew" else overwrite["role"]
    europe = against["onboarding"]["prompts"][0]["options"][0]
    europe |= {"roles": ["Team"], "channels": []}

    plan = plan_deployment(
        configured_guild(ServerConfig.model_validate(against), GUILD), ServerConfig.model_validate(backup), prune=True
    )

    changed = sorted((i.kind, i.name, i.action) for i in plan.items if i.action != "keep")
    assert changed == [
        ("channel", "announcements", "update"),  # after ideas again
        ("channel", "ideas", "create"),
        ("channel", "memes", "delete"),
        ("onboarding", "onboarding", "update"),  # Europe leads to ideas again (Team is Crew: the same role)
        ("role", "Crew", "update"),  # its overwrite on announcements is the same object's: no change
    ]
    crew = next(i for i in plan.items if i.name == "Crew")
    assert crew.id == "1191000000000009102"
    assert [(c.field, c.old, c.new) for c in crew.changes] == [("name", "Team", "Crew")]
