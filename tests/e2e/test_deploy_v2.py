"""Configuration version 2 end to end through `make run`: every v2 field deploys, the sandbox guild holds it, the same
deploy again writes nothing, an update touches only what changed and its rollback restores the settings before it."""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Any

import pytest

from svcconf.config import to_bitfield
from tests.helpers.e2e_deployer import BUILD_GUILD, Deployer

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

pytestmark = pytest.mark.e2e

PROJECT = "e2e-v2"
REQUIRE_TAG = 1 << 4
EVERYONE = ["VIEW_CHANNEL", "SEND_MESSAGES", "READ_MESSAGE_HISTORY", "ADD_REACTIONS", "CONNECT", "SPEAK"]


@pytest.fixture(scope="module")
def deployer(local_service: LocalService) -> Deployer:
    deployer = Deployer(local_service)
    deployer.link()
    return deployer


def full_v2() -> dict[str, Any]:
    """A configuration with every field version 2 adds."""
    return {
        "name": "V2 Lab",
        "everyone_permissions": EVERYONE,
        "settings": {
            "verification_level": "medium",
            "default_notifications": "only_mentions",
            "explicit_content_filter": "all_members",
            "afk_channel": "V2 Quiet",
            "afk_timeout": 900,
            "system_channel": "v2-welcome",
            "system_channel_flags": ["SUPPRESS_JOIN_NOTIFICATION_REPLIES", "SUPPRESS_GUILD_REMINDER_NOTIFICATIONS"],
            "preferred_locale": "en-GB",
            "description": "Everything version 2 can say",
        },
        "roles": [
            {"name": "V2 Helper", "emoji": "🛟", "color": "#2ECC71", "permissions": ["SEND_MESSAGES"]},
            {"name": "V2 Guide", "emoji": "🧭", "permissions": ["MANAGE_THREADS"]},
        ],
        "categories": [
            {
                "name": "V2 Hall",
                "channels": [
                    {"name": "v2-welcome", "topic": "Say hello"},
                    {"name": "V2 Quiet", "type": "voice", "bitrate": 48000, "video_quality": "full", "user_limit": 5},
                    {
                        "name": "v2-ideas",
                        "type": "forum",
                        "topic": "One idea per post",
                        "tags": [
                            {"name": "Bug", "emoji": "🐛"},
                            {"name": "Idea", "emoji": "💡"},
                            {"name": "Staff pick", "moderated": True},
                        ],
                        "default_reaction": "👍",
                        "default_thread_slowmode_seconds": 60,
                        "default_sort": "creation_date",
                        "default_layout": "gallery",
                        "require_tag": True,
                    },
                ],
            }
        ],
    }


def named(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    [found] = [item for item in objects if item["name"] == name]
    return found


def tag_id(guild: dict[str, Any], name: str) -> str:
    return str(named(named(guild["channels"], "v2-ideas")["available_tags"], name)["id"])


def assert_guild_holds_v2(guild: dict[str, Any], config: dict[str, Any]) -> None:
    """Each setting, role emoji, voice and forum field of the configuration, as the sandbox holds it."""
    settings = config["settings"]
    channels = guild["channels"]
    assert guild["settings"] == {
        "verification_level": {"medium": 2, "high": 3}[settings["verification_level"]],
        "default_message_notifications": 1,
        "explicit_content_filter": 2,
        "afk_channel_id": named(channels, settings["afk_channel"])["id"],
        "afk_timeout": settings["afk_timeout"],
        "system_channel_id": named(channels, settings["system_channel"])["id"],
        "system_channel_flags": 0b1100,
        "preferred_locale": settings["preferred_locale"],
        "description": settings["description"],
    }
    assert named(guild["roles"], "@everyone")["permissions"] == to_bitfield(config["everyone_permissions"])
    for role in config["roles"]:
        assert named(guild["roles"], role["name"])["unicode_emoji"] == role["emoji"]
    quiet = named(channels, "V2 Quiet")
    assert (quiet["type"], quiet["bitrate"], quiet["video_quality_mode"], quiet["user_limit"]) == (2, 48000, 2, 5)
    forum_config = config["categories"][0]["channels"][2]
    forum = named(channels, "v2-ideas")
    assert forum["type"] == 15
    assert [(t["name"], t["emoji_name"], t["moderated"]) for t in forum["available_tags"]] == [
        (tag["name"], tag.get("emoji"), tag.get("moderated", False)) for tag in forum_config["tags"]
    ]
    assert forum["default_reaction_emoji"] == {"emoji_id": None, "emoji_name": "👍"}
    assert forum["default_thread_rate_limit_per_user"] == 60
    assert (forum["default_sort_order"], forum["default_forum_layout"]) == (1, 2)
    assert bool(forum["flags"] & REQUIRE_TAG) == forum_config["require_tag"]


def test_every_v2_field_deploys_converges_and_its_update_rolls_back(deployer: Deployer) -> None:
    config = full_v2()

    # A fresh deploy: settings, @everyone, role emoji, voice and forum fields.
    start, began = deployer.log_size(), time.monotonic()
    first = deployer.deploy(config, project_id=PROJECT)
    assert first["status"] == "succeeded", first
    writes = deployer.writes_since(start)
    print(f"\nv2 first deploy: {len(writes)} writes in {time.monotonic() - began:.1f} s: {sorted(set(writes))}")
    assert first["steps"]["settings"]["updated"] == 1
    assert ("PATCH", "/guilds/{guild_id}") in writes
    assert first["steps"]["errors"] == []
    assert_guild_holds_v2(deployer.guild(), config)

    # The same deploy again sends no write request at all.
    start = deployer.log_size()
    again = deployer.deploy(config, project_id=PROJECT)
    assert again["status"] == "succeeded"
    print(f"v2 second deploy: {len(deployer.writes_since(start))} writes")
    assert deployer.writes_since(start) == []
    assert again["steps"]["settings"]["existing"] == 1

    # A changed setting and changed forum tags: one guild PATCH and one channel PATCH.
    held = deployer.guild()
    changed = copy.deepcopy(config)
    changed["settings"]["verification_level"] = "high"
    changed["categories"][0]["channels"][2]["tags"] = [{"name": "Idea", "emoji": "💡"}, {"name": "Question"}]
    start = deployer.log_size()
    updated = deployer.deploy(changed, project_id=PROJECT)
    assert updated["status"] == "succeeded", updated
    patches = sorted(deployer.writes_since(start))
    assert patches == [("PATCH", "/channels/{channel_id}"), ("PATCH", "/guilds/{guild_id}")]
    assert_guild_holds_v2(deployer.guild(), changed)
    assert tag_id(deployer.guild(), "Idea") == tag_id(held, "Idea"), "a tag the forum keeps keeps its id"

    # Rolling the update back restores the settings and the forum as they were before it.
    rolled_back = deployer.rollback(project_id=PROJECT)
    assert rolled_back["status"] == "succeeded", rolled_back
    restored = deployer.guild()
    assert restored["settings"] == held["settings"]
    assert_guild_holds_v2(restored, config)
    assert tag_id(restored, "Idea") == tag_id(held, "Idea")
    print(f"v2 rollback: settings restored to verification_level {restored['settings']['verification_level']}")


def test_an_unknown_field_inside_a_configuration_is_a_400_naming_it(deployer: Deployer) -> None:
    config = full_v2()
    config["settings"]["colour_scheme"] = "dark"
    config["categories"][0]["channels"][2]["tags"][0]["colour"] = "red"
    body = {"action": "deploy", "guild_id": BUILD_GUILD, "project_id": PROJECT, "project_name": "E2E", "config": config}

    answer = deployer.call("deployToChat", body)

    assert answer.status_code == 400, answer.text
    assert sorted(detail["field"] for detail in answer.json()["details"]) == [
        "config.categories[0].channels[2].tags[0].colour",
        "config.settings.colour_scheme",
    ]
