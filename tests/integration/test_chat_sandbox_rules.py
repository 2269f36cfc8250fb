"""The sandbox's platform rules, seen over raw HTTP: refusal bodies, codes and rate-limit headers as the platform's.

The client's tests (test_chat_client_*.py) show what the service gets; these show what the platform says.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from local.chat_sandbox import SandboxServer, SandboxState
from local.chat_sandbox.config import MEMBER_ROLE_LIMITS
from tests.helpers.chat_sandbox import (
    BOB_GUILD,
    BOT_ID,
    BOT_TOKEN,
    BUILD_GUILD,
    DEMO_GUILD,
    INFO_CATEGORY,
)

GENERAL, LOUNGE, WELCOME = "1191000000000003014", "1191000000000003015", "1191000000000003012"
BOB_GENERAL, BOB_VOICE = "1191000000000003021", "1191000000000003022"


class Platform:
    """Bot-token requests to the sandbox's API root, answers kept whole."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bot {BOT_TOKEN}"

    def __call__(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None) -> requests.Response:
        headers = {"Content-Type": "application/json"} if body is not None or raw is not None else {}
        data = raw if raw is not None else (None if body is None else json.dumps(body))
        return self.session.request(method, self.base_url + path, data=data, headers=headers, timeout=5)


@pytest.fixture
def platform(chat_sandbox: SandboxServer, chat_state: SandboxState):
    caller = Platform(chat_sandbox.base_url)
    yield caller
    caller.session.close()


def leaf(code: str, message: str) -> dict[str, Any]:
    return {"_errors": [{"code": code, "message": message}]}


def invalid_form(errors: dict[str, Any]) -> dict[str, Any]:
    return {"message": "Invalid Form Body", "code": 50035, "errors": errors}


# -- request bodies -----------------------------------------------------------------------------------


def test_a_role_body_is_refused_field_by_field(platform: Platform):
    answer = platform(
        "PATCH",
        f"/guilds/{DEMO_GUILD}/roles/1191000000000002013",
        {"name": "", "permissions": "lots", "color": 16777216, "hoist": "yes", "mentionable": 1},
    )
    assert answer.status_code == 400
    assert answer.json() == invalid_form(
        {
            "name": leaf("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."),
            "permissions": leaf("NUMBER_TYPE_COERCE", 'Value "lots" is not int.'),
            "color": leaf("NUMBER_TYPE_MAX", "int value should be less than or equal to 16777215."),
            "hoist": leaf("BOOLEAN_TYPE_COERCE", "Must be either true or false."),
            "mentionable": leaf("BOOLEAN_TYPE_COERCE", "Must be either true or false."),
        }
    )


def test_overwrite_items_are_named_by_index(platform: Platform):
    answer = platform(
        "PATCH",
        f"/channels/{GENERAL}",
        {"permission_overwrites": [{"id": DEMO_GUILD, "type": 0}, {"type": 3, "allow": "x"}], "user_limit": -1},
    )
    assert answer.json() == invalid_form(
        {
            "permission_overwrites": {
                "1": {
                    "id": leaf("BASE_TYPE_REQUIRED", "This field is required"),
                    "type": leaf("BASE_TYPE_CHOICES", "Value must be one of {0, 1}."),
                    "allow": leaf("NUMBER_TYPE_COERCE", 'Value "x" is not int.'),
                }
            },
            "user_limit": leaf("NUMBER_TYPE_MIN", "int value should be greater than or equal to 0."),
        }
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"[1, 2]", invalid_form(leaf("DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType"))),
        (b"{not json", {"message": "The request body contains invalid JSON.", "code": 50109}),
        (b"", invalid_form(leaf("BASE_TYPE_REQUIRED", "This field is required"))),
    ],
)
def test_a_body_that_is_no_object_is_refused_as_a_whole(platform: Platform, raw: bytes, expected: dict[str, Any]):
    answer = platform("PATCH", f"/channels/{GENERAL}", raw=raw)
    assert (answer.status_code, answer.json()) == (400, expected)


def test_a_list_body_is_refused_item_by_item(platform: Platform):
    answer = platform("PATCH", f"/guilds/{DEMO_GUILD}/roles", [{"position": 2}, "x"])
    assert answer.json() == invalid_form(
        {
            "0": {"id": leaf("BASE_TYPE_REQUIRED", "This field is required")},
            "1": leaf("DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType"),
        }
    )


# -- roles ----------------------------------------------------------------------------------------------


def test_managed_roles_and_everyone_cannot_be_deleted(platform: Platform, chat_state: SandboxState):
    # Given another bot's managed role below bob's bot (which is ADMINISTRATOR at the top)
    with chat_state.lock:
        roles = chat_state.guilds[BOB_GUILD]["roles"]
        roles["1191000000000002021"]["position"] = 3
        roles["1191000000000002029"] = {
            "id": "1191000000000002029",
            "name": "other-bot",
            "permissions": "0",
            "position": 2,
            "managed": True,
            "tags": {"bot_id": "1191000000000000999"},
        }
    # When the bot deletes or edits it, or deletes @everyone, Then the platform answers 50028 Invalid Role
    for method, path in [
        ("DELETE", f"/guilds/{BOB_GUILD}/roles/1191000000000002029"),
        ("PATCH", f"/guilds/{BOB_GUILD}/roles/1191000000000002029"),
        ("DELETE", f"/guilds/{BOB_GUILD}/roles/{BOB_GUILD}"),
    ]:
        answer = platform(method, path, {"name": "x"} if method == "PATCH" else None)
        assert (answer.status_code, answer.json()) == (400, {"message": "Invalid Role", "code": 50028}), path
    assert chat_state.guild(BOB_GUILD)["roles"]["1191000000000002029"]["name"] == "other-bot"


def test_the_role_cap_is_30005(platform: Platform, chat_state: SandboxState):
    with chat_state.lock:
        roles = chat_state.guilds[BOB_GUILD]["roles"]
        for index in range(250 - len(roles)):
            role_id = str(1191000000000007000 + index)
            roles[role_id] = {"id": role_id, "name": f"r{index}", "permissions": "0", "position": 1}
    answer = platform("POST", f"/guilds/{BOB_GUILD}/roles", {"name": "one too many"})
    assert (answer.status_code, answer.json()["code"]) == (400, 30005)


def test_everyone_may_be_edited_but_only_with_permissions_the_bot_holds(platform: Platform):
    answer = platform("PATCH", f"/guilds/{DEMO_GUILD}/roles/{DEMO_GUILD}", {"permissions": "1024"})
    assert (answer.status_code, answer.json()["permissions"], answer.json()["position"]) == (200, "1024", 0)
    refused = platform("PATCH", f"/guilds/{DEMO_GUILD}/roles/{DEMO_GUILD}", {"permissions": str(1024 | 8)})
    assert (refused.status_code, refused.json()) == (403, {"message": "Missing Permissions", "code": 50013})


# -- channels ---------------------------------------------------------------------------------------------


def test_a_channel_cannot_move_into_a_full_category(platform: Platform, chat_state: SandboxState):
    with chat_state.lock:
        channels = chat_state.guilds[DEMO_GUILD]["channels"]
        for index in range(50 - 2):
            channel_id = str(1191000000000008000 + index)
            channels[channel_id] = {
                "id": channel_id,
                "type": 0,
                "guild_id": DEMO_GUILD,
                "name": f"c{index}",
                "position": index,
                "parent_id": INFO_CATEGORY,
                "permission_overwrites": [],
            }
    full = leaf("CHANNEL_PARENT_MAX_CHANNELS", "Maximum number of channels in category reached (50)")
    moved = platform("PATCH", f"/channels/{GENERAL}", {"parent_id": INFO_CATEGORY})
    assert moved.json() == invalid_form({"parent_id": full})
    bulk = platform("PATCH", f"/guilds/{DEMO_GUILD}/channels", [{"id": GENERAL, "parent_id": INFO_CATEGORY}])
    assert bulk.json() == invalid_form({"0": {"parent_id": full}})
    # A channel already in the category may be edited without counting itself
    assert platform("PATCH", f"/channels/{WELCOME}", {"parent_id": INFO_CATEGORY}).status_code == 200


def test_a_category_cannot_have_a_parent(platform: Platform):
    answer = platform("PATCH", f"/channels/{INFO_CATEGORY}", {"parent_id": INFO_CATEGORY})
    assert answer.json() == invalid_form({"parent_id": leaf("CHANNEL_PARENT_INVALID_TYPE", "Not a category.")})


def test_bulk_moves_change_at_most_one_parent(platform: Platform, chat_state: SandboxState):
    answer = platform(
        "PATCH",
        f"/guilds/{DEMO_GUILD}/channels",
        [{"id": GENERAL, "parent_id": INFO_CATEGORY}, {"id": LOUNGE, "parent_id": INFO_CATEGORY}],
    )
    assert (answer.status_code, answer.json()["code"]) == (400, 40009)
    assert chat_state.guild(DEMO_GUILD)["channels"][GENERAL]["parent_id"] is None


def test_bitrate_past_the_types_ceiling_is_30052(platform: Platform):
    answer = platform("PATCH", f"/channels/{BOB_VOICE}", {"bitrate": 128000})
    assert (answer.status_code, answer.json()["code"]) == (400, 30052)
    assert platform("PATCH", f"/channels/{BOB_VOICE}", {"bitrate": 96000}).json()["bitrate"] == 96000


def test_text_converts_to_announcement_only_where_news_is_on(platform: Platform):
    converted = platform("PATCH", f"/channels/{GENERAL}", {"type": 5})
    assert (converted.status_code, converted.json()["type"]) == (200, 5)
    refused = platform("PATCH", f"/channels/{BOB_GENERAL}", {"type": 5})  # bob's guild has no NEWS
    assert refused.status_code == 400
    assert list(refused.json()["errors"]) == ["type"]
    to_voice = platform("PATCH", f"/channels/{GENERAL}", {"type": 2})
    assert list(to_voice.json()["errors"]) == ["type"]


def test_a_deleted_channels_invites_are_gone(platform: Platform):
    assert platform("GET", "/invites/svcDemo").status_code == 200
    assert platform("DELETE", f"/channels/{WELCOME}").status_code == 200
    assert platform("GET", "/invites/svcDemo").json() == {"message": "Unknown Invite", "code": 10006}


# -- rate limits on creation ------------------------------------------------------------------------------


def test_role_and_channel_creation_are_limited_per_guild_with_headers(platform: Platform, chat_state: SandboxState):
    # When 6 roles are created in the build guild within a second, by a caller that ignores the headers
    answers = [platform("POST", f"/guilds/{BUILD_GUILD}/roles", {"name": f"r{n}"}) for n in range(6)]
    # Then the headers counted down from 5 and the sixth was answered 429 with the wait it needs
    assert [a.headers["X-RateLimit-Limit"] for a in answers] == ["5"] * 6
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["4", "3", "2", "1", "0", "0"]
    assert [a.status_code for a in answers] == [200] * 5 + [429]
    assert 0 < answers[-1].json()["retry_after"] <= 1.0
    # And another guild's bucket, and the channel route's, are their own
    assert (
        platform("POST", f"/guilds/{DEMO_GUILD}/roles", {"name": "elsewhere"}).headers["X-RateLimit-Remaining"] == "4"
    )
    channel = platform("POST", f"/guilds/{BUILD_GUILD}/channels", {"name": "first"})
    assert (channel.status_code, channel.headers["X-RateLimit-Limit"]) == (201, "5")


def test_route_limits_merge_and_null_removes_one(chat_state: SandboxState):
    settings = chat_state.configure(route_limits={"GET /invites/{code}": [3, 0.5]})
    assert settings["route_limits"] == {
        "POST /guilds/{guild_id}/roles": (5, 1.0),
        "POST /guilds/{guild_id}/channels": (5, 1.0),
        **MEMBER_ROLE_LIMITS,
        "GET /invites/{code}": (3, 0.5),
    }
    settings = chat_state.configure(route_limits={"POST /guilds/{guild_id}/roles": None})
    assert set(settings["route_limits"]) == {
        "POST /guilds/{guild_id}/channels",
        *MEMBER_ROLE_LIMITS,
        "GET /invites/{code}",
    }


def test_the_bot_is_in_the_build_guild_with_everything_but_administrator(platform: Platform):
    guild = platform("GET", f"/guilds/{BUILD_GUILD}").json()
    everyone, bot_role = sorted(guild["roles"], key=lambda role: role["position"])
    assert (guild["name"], guild["features"]) == ("Alice's Build Lab", ["COMMUNITY", "NEWS", "ROLE_ICONS"])
    assert (everyone["id"], bot_role["position"], bot_role["managed"], bot_role["tags"]) == (
        BUILD_GUILD,
        1,
        True,
        {"bot_id": BOT_ID},
    )
    assert int(bot_role["permissions"]) == 8866461766385663 & ~8  # every documented permission but ADMINISTRATOR
    assert platform("GET", f"/guilds/{BUILD_GUILD}/channels").json() == []


# -- guild settings and forum fields ------------------------------------------------------------------


def test_guild_settings_name_channels_of_the_right_type_and_a_description_needs_community(platform: Platform):
    wrong = platform("PATCH", f"/guilds/{DEMO_GUILD}", {"afk_channel_id": GENERAL, "system_channel_id": LOUNGE})
    unknown = platform("PATCH", f"/guilds/{BOB_GUILD}", {"afk_channel_id": LOUNGE, "description": "Hi"})
    right = platform("PATCH", f"/guilds/{BOB_GUILD}", {"afk_channel_id": BOB_VOICE, "system_channel_id": None})

    assert wrong.status_code == 400
    assert wrong.json() == invalid_form(
        {
            "afk_channel_id": leaf("BASE_TYPE_INVALID", "Invalid channel type."),
            "system_channel_id": leaf("BASE_TYPE_INVALID", "Invalid channel type."),
        }
    )
    assert unknown.json() == invalid_form(
        {
            "afk_channel_id": leaf("BASE_TYPE_INVALID", "Unknown channel."),  # the demo guild's, not Bob's
            "description": leaf("BASE_TYPE_INVALID", "Only community servers may have a description."),
        }
    )
    assert (right.status_code, right.json()["afk_channel_id"], right.json()["system_channel_id"]) == (
        200,
        BOB_VOICE,
        None,
    )


def test_guild_settings_take_only_the_platforms_values(platform: Platform):
    answer = platform(
        "PATCH",
        f"/guilds/{DEMO_GUILD}",
        {"afk_timeout": 600, "verification_level": 5, "preferred_locale": "xx", "default_message_notifications": True},
    )
    assert answer.status_code == 400
    assert set(answer.json()["errors"]) == {
        "afk_timeout",
        "verification_level",
        "preferred_locale",
        "default_message_notifications",
    }
    assert answer.json()["errors"]["afk_timeout"] == leaf(
        "BASE_TYPE_CHOICES", "Value must be one of {60, 300, 900, 1800, 3600}."
    )


def test_deleting_the_afk_channel_unsets_it(platform: Platform):
    assert platform("GET", f"/guilds/{DEMO_GUILD}").json()["afk_channel_id"] == LOUNGE
    platform("DELETE", f"/channels/{LOUNGE}")
    assert platform("GET", f"/guilds/{DEMO_GUILD}").json()["afk_channel_id"] is None


def test_a_forum_takes_at_most_twenty_tags_of_at_most_twenty_characters(platform: Platform):
    tags = [{"name": f"tag {n}"} for n in range(21)]
    too_many = platform("POST", f"/guilds/{BUILD_GUILD}/channels", {"name": "f", "type": 15, "available_tags": tags})
    long_name = [{"name": "x" * 21}]
    too_long = platform(
        "POST", f"/guilds/{BUILD_GUILD}/channels", {"name": "f", "type": 15, "available_tags": long_name}
    )

    assert too_many.json() == invalid_form(
        {"available_tags": leaf("BASE_TYPE_MAX_LENGTH", "Must be 20 or fewer in length.")}
    )
    assert too_long.json() == invalid_form(
        {"available_tags": {"0": {"name": leaf("BASE_TYPE_BAD_LENGTH", "Must be between 0 and 20 in length.")}}}
    )


def test_forum_fields_stay_off_other_channel_types_and_flags_off_the_create_body(platform: Platform):
    text = platform("POST", f"/guilds/{BUILD_GUILD}/channels", {"name": "t", "available_tags": [{"name": "a"}]}).json()
    forum = platform("POST", f"/guilds/{BUILD_GUILD}/channels", {"name": "f", "type": 15, "flags": 16}).json()

    assert "available_tags" not in text
    assert forum["flags"] == 0  # the create body has no flags: set them with a modify
    assert platform("PATCH", f"/channels/{forum['id']}", {"flags": 16}).json()["flags"] == 16
