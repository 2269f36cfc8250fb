"""Backup formats: each shape told apart, converted to a configuration, and what it loses named.

One fixture per format, written for these tests (tests/data/backups/): a configuration with members, discord-backup's
BackupData, a native template's GET answer, the platform's own GET answers.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from svcconf.backups.formats import detect_format, read_backup
from svcconf.chat.templates import TemplateSnapshot
from svcconf.config.access import config_access
from svcconf.deploy_engine.live import guild_access
from svcconf.deploy_engine.native_template import template_guild

DATA = Path(__file__).parents[1] / "data" / "backups"


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("name", ["configuration", "discord-backup", "template", "platform"])
def test_each_fixture_is_told_apart_and_restorable(name: str) -> None:
    reading = read_backup(fixture(name))
    assert (reading.format, reading.restorable, reading.problems) == (name, True, [])
    assert reading.config is not None
    assert reading.config.roles


def test_configuration_keeps_ids_members_owner_and_administrators() -> None:
    reading = read_backup(fixture("configuration"))
    assert reading.config is not None
    assert [role.id for role in reading.config.roles] == ["1180000000000000411", "1180000000000000410"]
    assert [(m.user_id, m.roles) for m in reading.members] == [
        ("1180000000000000420", ["1180000000000000411", "1180000000000000410"]),
        ("1180000000000000421", ["1180000000000000410"]),
    ]
    assert (reading.owner_id, reading.administrator_ids) == ("1180000000000000420", ["1180000000000000420"])


def test_a_member_role_the_configuration_does_not_hold_is_left_out() -> None:
    data = fixture("configuration")
    data["members"][1]["roles"].append("1180000000000009999")
    assert read_backup(data).members[1].roles == ["1180000000000000410"]


def test_an_invalid_configuration_names_its_fields_and_is_not_restorable() -> None:
    data = fixture("configuration")
    data["roles"][0]["permissions"].append("FLY")
    data["members"] = [{"user_id": "1180000000000000420"}]
    reading = read_backup(data)
    assert (reading.format, reading.restorable, reading.config) == ("configuration", False, None)
    assert "roles[0].permissions[4]" in {problem.field for problem in reading.problems}


def test_discord_backup_converts_roles_channels_overwrites_and_settings() -> None:
    reading = read_backup(fixture("discord-backup"))
    config = reading.config
    assert config is not None
    assert [role.name for role in config.roles] == ["Admins", "Moderators", "Members"]  # highest first
    assert config.roles[1].mentionable
    assert config.roles[0].color == 0xE74C3C
    staff = next(category for category in config.categories if category.name == "Staff")
    assert [(channel.name, channel.type) for channel in staff.channels] == [
        ("mod-chat", "text"),
        ("Staff Voice", "voice"),
    ]
    denied = {o.role: o.deny for o in staff.overwrites}
    assert [str(p) for p in denied["@everyone"]] == ["VIEW_CHANNEL"]
    welcome = next(category for category in config.categories if category.name == "Welcome")
    assert [channel.type for channel in welcome.channels] == ["text", "announcement"]
    assert config.settings is not None
    assert (config.settings.verification_level, config.settings.afk_channel, config.settings.afk_timeout) == (
        "medium",
        "AFK",
        900,
    )
    lost = {warning.field: warning.message for warning in reading.warnings}
    assert {"bans", "emojis", "iconURL", "channels.categories[0].children[0].messages"} <= set(lost)
    assert "1 message(s) of 'rules'" in lost["channels.categories[0].children[0].messages"]
    assert all(warning.rule in ("unrestorable", "not-carried") for warning in reading.warnings)
    assert [w.field for w in reading.warnings if w.rule == "not-carried"] == [
        "automod",
        "onboarding",
        "welcome_screen",
        "roles",
    ]


def test_discord_backup_of_numbered_channel_types_reads_the_same() -> None:
    data = fixture("discord-backup")
    numbered = copy.deepcopy(data)
    names = {"GUILD_TEXT": 0, "GUILD_VOICE": 2, "GUILD_NEWS": 5}
    for category in numbered["channels"]["categories"]:
        for child in category["children"]:
            child["type"] = names[child["type"]]
    for channel in numbered["channels"]["others"]:
        channel["type"] = names[channel["type"]]
    assert read_backup(numbered).config == read_backup(data).config


def test_template_reads_the_same_whole_or_as_its_snapshot() -> None:
    whole = read_backup(fixture("template"))
    snapshot = read_backup(fixture("template")["serialized_source_guild"])
    assert (whole.format, snapshot.format) == ("template", "template")
    assert whole.config == snapshot.config
    assert whole.config is not None
    assert whole.config.roles[0].name == "Tutors"
    assert all(role.id is None for role in whole.config.roles)  # placeholders name no server's object


def test_template_access_is_the_snapshots() -> None:
    """0 differences of effective access (place × role) between the template and the configuration read from it."""
    data = fixture("template")
    reading = read_backup(data)
    assert reading.config is not None
    snapshot = TemplateSnapshot.model_validate(data["serialized_source_guild"])
    assert config_access(reading.config) == guild_access(template_guild(snapshot))


def test_platform_keeps_ids_reads_members_and_says_what_it_leaves_out() -> None:
    reading = read_backup(fixture("platform"))
    config = reading.config
    assert config is not None
    assert [(role.id, role.name) for role in config.roles] == [
        ("1180000000000000211", "Captains"),
        ("1180000000000000210", "Crew"),
    ]
    assert config.settings is not None
    assert config.settings.system_channel == "general"
    assert [(m.user_id, m.roles) for m in reading.members] == [
        ("1180000000000000201", ["1180000000000000211"]),
        ("1180000000000000202", ["1180000000000000210"]),
        ("1180000000000000250", []),  # the bot's managed role is not the configuration's
    ]
    assert (reading.owner_id, reading.administrator_ids) == ("1180000000000000201", ["1180000000000000201"])
    assert {warning.field for warning in reading.warnings} == {
        "roles[3]",
        "guild.emojis",
        *("automod", "onboarding", "welcome_screen"),  # the platform format holds none of them
    }


def test_platform_without_guild_leaves_settings_out() -> None:
    data = fixture("platform")
    guild = data.pop("guild")
    data["roles"] = guild["roles"]
    reading = read_backup(data)
    assert reading.format == "platform"
    assert reading.config is not None
    assert reading.config.settings is None
    assert reading.owner_id is None


def test_platform_without_everyone_is_not_restorable() -> None:
    data = fixture("platform")
    guild = data.pop("guild")
    data["roles"] = guild["roles"][1:]
    reading = read_backup(data)
    assert (reading.format, reading.restorable) == ("platform", False)
    assert reading.problems[0].field == "roles"


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"hello": "world"}, {"roles", "categories", "name"}),
        ({"name": "x", "roles": "admins", "categories": []}, {"roles"}),
        ({"name": "x", "roles": [{"name": "a", "permissions": 8}], "channels": [{"name": "c"}]}, {"backup_data"}),
    ],
)
def test_unknown_shapes_are_never_restorable_and_say_what_is_missing(data: dict[str, Any], fields: set[str]) -> None:
    reading = read_backup(data)
    assert (reading.format, reading.restorable, reading.config) == ("unknown", False, None)
    assert {problem.field for problem in reading.problems} == fields


def test_detection_follows_the_contracts_order() -> None:
    assert detect_format(
        {"name": "n", "categories": [], "roles": [{"name": "r", "permissions": ["VIEW_CHANNEL"]}]}
    ) == ("configuration")
    platform = fixture("platform")
    platform["roles"] = platform["guild"]["roles"]
    assert detect_format(platform) == "platform"
    for role in platform["roles"]:
        role["id"] = str(len(role["name"]))  # small integers: a template's placeholders
    for channel in platform["channels"]:
        channel["id"], channel["parent_id"] = "7", None
    assert detect_format(platform) == "template"
