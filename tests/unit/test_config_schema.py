"""The server-configuration schema: what it accepts, and where and how it says what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from svcconf.config import (
    ALL_PERMISSIONS,
    CHANNEL_TYPES,
    MAX_CHANNELS,
    MAX_CHANNELS_PER_CATEGORY,
    MAX_ROLES,
    PERMISSION_BITS,
    ChannelType,
    Permission,
    ServerConfig,
    from_bitfield,
    has_permission,
    to_bitfield,
)
from svcconf.errors import field_path


class CreateRequest(BaseModel):
    """How request bodies embed the configuration."""

    config: ServerConfig


def realistic_config() -> dict[str, Any]:
    """A small community server: 3 roles, 2 categories with channels and overwrites, 2 loose channels."""
    return {
        "name": "Makers Guild",
        "description": "A place for people who build things",
        "roles": [
            {
                "name": "Admin",
                "color": "#FF0000",
                "hoist": True,
                "permissions": ["ADMINISTRATOR"],
            },
            {
                "name": "Mods",
                "color": 0x3498DB,
                "hoist": True,
                "mentionable": True,
                "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES", "MODERATE_MEMBERS"],
            },
            {"name": "Members", "permissions": ["VIEW_CHANNEL", "SEND_MESSAGES", "CONNECT", "SPEAK"]},
        ],
        "categories": [
            {
                "name": "General",
                "channels": [
                    {"name": "welcome", "topic": "Read this first", "slowmode_seconds": 30},
                    {"name": "Lounge", "type": "voice", "user_limit": 10},
                ],
            },
            {
                "name": "Staff",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
                ],
                "channels": [
                    {
                        "name": "mod-log",
                        "overwrites": [{"role": "Mods", "allow": ["READ_MESSAGE_HISTORY"], "deny": ["SEND_MESSAGES"]}],
                    },
                    {"name": "staff-forum", "type": "forum", "nsfw": False},
                ],
            },
        ],
        "channels": [
            {
                "name": "announcements",
                "type": "announcement",
                "overwrites": [{"role": "@everyone", "deny": ["SEND_MESSAGES"]}],
            },
            {"name": "Town Hall", "type": "stage", "user_limit": 50},
        ],
    }


def problems(body: dict[str, Any], model: type[BaseModel] = ServerConfig) -> list[tuple[str, str]]:
    """Every (path, message) the model reports for the body; fails the test if the body is valid."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    return [(field_path(error["loc"]), error["msg"]) for error in caught.value.errors()]


def channels(count: int, prefix: str = "c") -> list[dict[str, Any]]:
    return [{"name": f"{prefix}-{index}"} for index in range(count)]


# --- Valid configurations -------------------------------------------------------------------------


def test_realistic_config_validates_and_normalises_hex_color_to_an_integer() -> None:
    # Given a realistic configuration with a "#RRGGBB" color
    body = realistic_config()

    # When it is validated
    config = ServerConfig.model_validate(body)

    # Then the color is the integer the platform expects, defaults are filled and nothing is lost
    assert config.roles[0].color == 16711680
    assert config.roles[1].color == 0x3498DB
    assert config.roles[2].color == 0
    assert config.roles[2].hoist is False
    assert config.roles[2].mentionable is False
    assert config.role_names() == ["Admin", "Mods", "Members"]
    assert config.channel_count() == 2 + 4 + 2
    assert config.categories[0].channels[0].type == "text"
    assert config.categories[0].channels[0].nsfw is False
    assert config.categories[1].overwrites[0].role == "@everyone"
    assert config.channels[1].user_limit == 50


@pytest.mark.parametrize("spelling", ["#ff0000", "#FF0000", "#Ff0000"])
def test_hex_color_is_read_ignoring_case(spelling: str) -> None:
    # Given a role color in any letter case
    body = {"name": "S", "roles": [{"name": "Red", "color": spelling}]}

    # When validated, Then it is the same integer
    assert ServerConfig.model_validate(body).roles[0].color == 0xFF0000


def test_permissions_serialise_as_plain_names_that_make_a_bitfield() -> None:
    # Given a validated configuration
    config = ServerConfig.model_validate(realistic_config())

    # When it is dumped to JSON and its permissions turned into a bitfield
    dumped = config.model_dump(mode="json")
    bitfield = to_bitfield(config.roles[2].permissions)

    # Then the names are plain strings and the bitfield is the platform's decimal string
    assert dumped["roles"][2]["permissions"] == ["VIEW_CHANNEL", "SEND_MESSAGES", "CONNECT", "SPEAK"]
    assert bitfield == str((1 << 10) | (1 << 11) | (1 << 20) | (1 << 21))
    assert json.loads(config.model_dump_json())["roles"][0]["color"] == 16711680


def test_duplicate_permission_names_are_kept_as_given() -> None:
    # Given a permission listed twice (harmless in a bitfield)
    body = {"name": "S", "roles": [{"name": "R", "permissions": ["VIEW_CHANNEL", "VIEW_CHANNEL"]}]}

    # When validated
    role = ServerConfig.model_validate(body).roles[0]

    # Then the list is kept as written, so error indexes always match the input
    assert role.permissions == ["VIEW_CHANNEL", "VIEW_CHANNEL"]
    assert to_bitfield(role.permissions) == str(1 << 10)


def test_unknown_fields_are_refused_at_every_level_with_their_paths() -> None:
    # Given extra fields on the configuration, a role, a category, a channel and an overwrite
    body = realistic_config()
    body["icon"] = "data:..."
    body["roles"][0]["position"] = 3
    body["categories"][1]["position"] = 1
    body["categories"][1]["channels"][0]["archived"] = True
    body["categories"][1]["overwrites"][0]["type"] = 0

    # When validated
    found = {field for field, _ in problems(body)}

    # Then each is named, never silently dropped (a dropped field never reaches the guild)
    assert found == {
        "icon",
        "roles[0].position",
        "categories[1].position",
        "categories[1].channels[0].archived",
        "categories[1].overwrites[0].type",
    }


def version_2_config() -> dict[str, Any]:
    """The realistic server with every field of version 2."""
    body = realistic_config()
    body["settings"] = {
        "verification_level": "medium",
        "default_notifications": "only_mentions",
        "explicit_content_filter": "all_members",
        "afk_channel": "Lounge",
        "afk_timeout": 900,
        "system_channel": "Welcome",
        "system_channel_flags": ["SUPPRESS_JOIN_NOTIFICATIONS"],
        "preferred_locale": "en-GB",
        "description": "Makers building things together",
    }
    body["everyone_permissions"] = ["VIEW_CHANNEL", "READ_MESSAGE_HISTORY"]
    body["roles"][1]["emoji"] = "🛡️"
    lounge = body["categories"][0]["channels"][1]
    lounge.update(bitrate=64000, video_quality="full")
    forum = body["categories"][1]["channels"][1]
    forum.update(
        tags=[{"name": "bug", "emoji": "🐛"}, {"name": "decided", "moderated": True}],
        default_reaction="👍",
        default_thread_slowmode_seconds=60,
        default_sort="creation_date",
        default_layout="gallery",
        require_tag=True,
    )
    return body


def test_a_version_2_configuration_keeps_every_field() -> None:
    # Given a configuration with every field of version 2
    body = version_2_config()

    # When validated and dumped as it was stated
    dumped = ServerConfig.model_validate(body).model_dump(mode="json", exclude_unset=True)

    # Then nothing is dropped: settings, @everyone's permissions, role emoji, voice and forum fields
    assert dumped["settings"] == body["settings"]
    assert dumped["everyone_permissions"] == ["VIEW_CHANNEL", "READ_MESSAGE_HISTORY"]
    assert dumped["roles"][1]["emoji"] == "🛡️"
    assert dumped["categories"][0]["channels"][1] | {"bitrate": 64000} == dumped["categories"][0]["channels"][1]
    forum = dumped["categories"][1]["channels"][1]
    assert forum["tags"] == [{"name": "bug", "emoji": "🐛"}, {"name": "decided", "moderated": True}]
    assert (forum["default_sort"], forum["default_layout"], forum["require_tag"]) == ("creation_date", "gallery", True)


def test_a_version_1_configuration_means_what_it_meant() -> None:
    # Given a configuration without any field of version 2
    body = realistic_config()

    # When validated and dumped as stated
    dumped = ServerConfig.model_validate(body).model_dump(mode="json", exclude_unset=True)

    # Then no setting appears that the caller did not state (a deploy leaves those as the guild has them)
    assert "settings" not in dumped
    assert "everyone_permissions" not in dumped
    assert all("tags" not in channel for category in dumped["categories"] for channel in category["channels"])


@pytest.mark.parametrize(
    ("where", "change", "field", "message"),
    [
        ("text", {"tags": [{"name": "x"}]}, "tags", "tags applies to forum channels, not to text channels"),
        ("text", {"require_tag": True}, "require_tag", "require_tag applies to forum channels"),
        ("text", {"bitrate": 64000}, "bitrate", "bitrate applies to voice and stage channels"),
        ("text", {"video_quality": "full"}, "video_quality", "video_quality applies to voice and stage channels"),
        ("stage", {"bitrate": 96000}, "bitrate", "stage channels allow a bitrate of at most 64000"),
        ("voice", {"bitrate": 4000}, "bitrate", "greater than or equal to 8000"),
        ("forum", {"tags": [{"name": "a"}, {"name": "A"}]}, "tags[1].name", "a second tag named 'A'"),
        ("forum", {"tags": [{"name": "x" * 21}]}, "tags[0].name", "at most 20 characters"),
        ("forum", {"default_reaction": ":)"}, "default_reaction", "an emoji is one unicode emoji"),
        ("forum", {"default_layout": "grid"}, "default_layout", "'list' or 'gallery'"),
    ],
)
def test_a_version_2_channel_field_that_does_not_fit_is_named(
    where: str, change: dict[str, Any], field: str, message: str
) -> None:
    # Given a channel of one type with a field of version 2 that does not fit it
    body = realistic_config()
    body["channels"] = [{"name": "probe", "type": where, **change}]

    # When validated
    found = problems(body)

    # Then the field is named with what is wrong
    assert len(found) == 1, found
    assert found[0][0] == f"channels[0].{field}"
    assert message in found[0][1]


@pytest.mark.parametrize(
    ("settings", "field", "message"),
    [
        ({"afk_channel": "nowhere"}, "settings.afk_channel", "names no voice channel of this configuration"),
        ({"afk_channel": "welcome"}, "settings.afk_channel", "names no voice channel"),
        ({"system_channel": "Lounge"}, "settings.system_channel", "names no text channel"),
        ({"afk_timeout": 120}, "settings.afk_timeout", "60, 300, 900, 1800 or 3600"),
        ({"preferred_locale": "en"}, "settings.preferred_locale", "'en-US'"),
        ({"system_channel_flags": ["QUIET"]}, "settings.system_channel_flags[0]", "SUPPRESS_JOIN_NOTIFICATIONS"),
        ({"description": "x" * 121}, "settings.description", "at most 120 characters"),
    ],
)
def test_a_setting_that_does_not_fit_is_named(settings: dict[str, Any], field: str, message: str) -> None:
    # Given settings that break one rule
    body = realistic_config()
    body["settings"] = settings

    # When validated
    found = problems(body)

    # Then the setting is named
    assert len(found) == 1, found
    assert found[0][0] == field
    assert message in found[0][1]


def test_a_settings_channel_named_twice_is_ambiguous() -> None:
    # Given two voice channels of one name in two categories, and the AFK channel naming that name
    body = realistic_config()
    body["categories"][1]["channels"].append({"name": "Lounge", "type": "voice"})
    body["settings"] = {"afk_channel": "Lounge"}

    # When validated
    found = problems(body)

    # Then the setting is refused as ambiguous rather than matched by chance
    assert found == [("settings.afk_channel", "names 2 voice channels; give the one it means a name of its own")]


# --- Rules on single fields ---------------------------------------------------------------------


def test_unknown_permission_is_rejected_with_its_path_and_a_suggestion() -> None:
    # Given a role permission with a typo
    body = realistic_config()
    body["roles"][2]["permissions"][1] = "SEND_MESAGES"

    # When validated
    found = problems(body)

    # Then the one error names the exact element and the misspelt name, without listing every permission
    assert found == [("roles[2].permissions[1]", "unknown permission 'SEND_MESAGES' (did you mean 'SEND_MESSAGES'?)")]


def test_unknown_permission_in_an_overwrite_is_rejected_with_its_path() -> None:
    # Given an overwrite denying a permission that does not exist
    body = realistic_config()
    body["categories"][1]["channels"][0]["overwrites"][0]["deny"] = ["SEND_MESSAGES", "SHOUT"]

    # When validated
    found = problems(body)

    # Then the path reaches into the category's channel's overwrite
    assert found == [("categories[1].channels[0].overwrites[0].deny[1]", "unknown permission 'SHOUT'")]


def test_permission_given_as_a_number_is_rejected_with_its_path() -> None:
    # Given a bit number where a name belongs
    body = {"name": "S", "roles": [{"name": "R", "permissions": [10]}]}

    # When validated, Then the message says permissions are names
    assert problems(body) == [("roles[0].permissions[0]", "a permission is given by its name, e.g. 'VIEW_CHANNEL'")]


@pytest.mark.parametrize(
    ("color", "message_part"),
    [
        ("red", "'#RRGGBB', not 'red'"),
        ("FF0000", "'#RRGGBB', not 'FF0000'"),
        ("#FF00001", "'#RRGGBB', not '#FF00001'"),
        (True, "a color is an integer 0-16777215 or '#RRGGBB'"),
        (-1, "greater than or equal to 0"),
        (0x1000000, "less than or equal to 16777215"),
    ],
)
def test_color_outside_the_two_accepted_forms_is_rejected_with_its_path(color: object, message_part: str) -> None:
    # Given a role color that is neither 0..0xFFFFFF nor "#RRGGBB"
    body = {"name": "S", "roles": [{"name": "R", "color": color}]}

    # When validated
    [(path, message)] = problems(body)

    # Then the error is on that role's color and says what is accepted
    assert path == "roles[0].color"
    assert message_part in message


def test_duplicate_role_name_is_rejected_with_its_path_and_the_first_occurrence() -> None:
    # Given a fourth role named like the second
    body = realistic_config()
    body["roles"].append({"name": "Mods"})

    # When validated
    found = problems(body)

    # Then the later one is reported, pointing back at the earlier one
    assert found == [("roles[3].name", "duplicate role name 'Mods' (also roles[1])")]


def test_role_names_differing_only_in_case_are_duplicates() -> None:
    # Given "mods" next to "Mods": overwrites and the deployer could not tell them apart reliably
    body = realistic_config()
    body["roles"].append({"name": "mods"})

    # When validated
    found = problems(body)

    # Then it is a duplicate, and the message says case is ignored
    assert found == [("roles[3].name", "duplicate role name 'mods' (also roles[1], 'Mods'; case is ignored)")]


@pytest.mark.parametrize("name", ["@everyone", "@Everyone"])
def test_everyone_cannot_be_defined_as_a_role(name: str) -> None:
    # Given a role definition named like the platform's built-in role
    body = realistic_config()
    body["roles"][1]["name"] = name

    # When validated
    [(path, message)] = problems(body)

    # Then the role's name is rejected with the reason
    assert path == "roles[1].name"
    assert "'@everyone' is the platform's built-in role and cannot be defined" in message


@pytest.mark.parametrize(
    ("place", "expected_path"),
    [
        (lambda body: body["categories"][1]["overwrites"][1], "categories[1].overwrites[1].role"),
        (
            lambda body: body["categories"][1]["channels"][0]["overwrites"][0],
            "categories[1].channels[0].overwrites[0].role",
        ),
        (lambda body: body["channels"][0]["overwrites"][0], "channels[0].overwrites[0].role"),
    ],
    ids=["category", "channel-in-category", "loose-channel"],
)
def test_overwrite_naming_an_undefined_role_is_rejected_with_its_path(place: Any, expected_path: str) -> None:
    # Given an overwrite (on a category, a channel in it, or a loose channel) naming an undefined role
    body = realistic_config()
    place(body)["role"] = "Ghost"

    # When validated
    found = problems(body)

    # Then the error points at that overwrite's role
    assert found == [(expected_path, "overwrite names role 'Ghost', which this configuration does not define")]


@pytest.mark.parametrize(("written", "meant"), [("mods", "Mods"), ("everyone", "@everyone")])
def test_overwrite_role_must_match_exactly_and_near_misses_get_a_hint(written: str, meant: str) -> None:
    # Given an overwrite naming a role with the wrong case or without "@"
    body = realistic_config()
    body["channels"][0]["overwrites"][0]["role"] = written

    # When validated
    found = problems(body)

    # Then it is rejected, suggesting the intended name
    assert found == [
        (
            "channels[0].overwrites[0].role",
            f"overwrite names role '{written}', which this configuration does not define (did you mean '{meant}'?)",
        )
    ]


def test_every_cross_field_problem_is_reported_once_with_its_own_path() -> None:
    # Given a duplicate role and two overwrites naming undefined roles
    body = realistic_config()
    body["roles"].append({"name": "Admin"})
    body["categories"][1]["overwrites"][1]["role"] = "Ghost"
    body["channels"][0]["overwrites"][0]["role"] = "Phantom"

    # When validated
    found = problems(body)

    # Then there is one entry per invalid field
    assert found == [
        ("roles[3].name", "duplicate role name 'Admin' (also roles[0])"),
        ("categories[1].overwrites[1].role", "overwrite names role 'Ghost', which this configuration does not define"),
        ("channels[0].overwrites[0].role", "overwrite names role 'Phantom', which this configuration does not define"),
    ]


def test_permission_both_allowed_and_denied_is_rejected_with_its_path() -> None:
    # Given an overwrite that allows and denies the same permission
    body = realistic_config()
    body["categories"][1]["overwrites"][1]["deny"] = ["SEND_MESSAGES", "VIEW_CHANNEL"]

    # When validated
    found = problems(body)

    # Then the contradicting deny entry is reported
    assert found == [
        ("categories[1].overwrites[1].deny[1]", "'VIEW_CHANNEL' is both allowed and denied in this overwrite")
    ]


def test_second_overwrite_for_the_same_role_on_one_channel_is_rejected_with_its_path() -> None:
    # Given two overwrites for Mods on the same category
    body = realistic_config()
    body["categories"][1]["overwrites"].append({"role": "Mods", "deny": ["SPEAK"]})

    # When validated
    found = problems(body)

    # Then the second one is reported, pointing at the first
    assert found == [
        ("categories[1].overwrites[2].role", "a second overwrite for role 'Mods' (the first is overwrites[1])")
    ]


@pytest.mark.parametrize(
    ("place", "path"),
    [
        (lambda body: body, "name"),
        (lambda body: body["roles"][0], "roles[0].name"),
        (lambda body: body["categories"][1], "categories[1].name"),
        (lambda body: body["categories"][1]["channels"][1], "categories[1].channels[1].name"),
        (lambda body: body["channels"][1], "channels[1].name"),
    ],
    ids=["server", "role", "category", "channel-in-category", "loose-channel"],
)
def test_names_must_have_1_to_100_characters(place: Any, path: str) -> None:
    # Given a name of exactly 100 characters
    body = realistic_config()
    place(body)["name"] = "n" * 100
    # Then it is valid
    ServerConfig.model_validate(body)

    # When the name is empty or 101 characters, Then that name is rejected with its path
    place(body)["name"] = ""
    assert problems(body) == [(path, "String should have at least 1 character")]
    place(body)["name"] = "n" * 101
    assert problems(body) == [(path, "String should have at most 100 characters")]


def test_text_channel_topic_is_limited_to_1024_characters() -> None:
    # Given a text channel topic at the limit, Then it is valid
    body = realistic_config()
    body["categories"][0]["channels"][0]["topic"] = "t" * 1024
    ServerConfig.model_validate(body)

    # When it is one character longer, Then the topic is rejected with the limit for its type
    body["categories"][0]["channels"][0]["topic"] = "t" * 1025
    assert problems(body) == [
        ("categories[0].channels[0].topic", "text channel topics have at most 1024 characters, not 1025")
    ]


def test_forum_channel_topic_is_limited_to_4096_characters() -> None:
    # Given a forum topic at the platform's forum limit, Then it is valid
    body = realistic_config()
    body["categories"][1]["channels"][1]["topic"] = "t" * 4096
    ServerConfig.model_validate(body)

    # When it is one character longer, Then it is rejected
    body["categories"][1]["channels"][1]["topic"] = "t" * 4097
    assert problems(body) == [("categories[1].channels[1].topic", "String should have at most 4096 characters")]


@pytest.mark.parametrize("channel_type", ["text", "announcement", "forum"])
def test_user_limit_on_a_channel_without_voice_is_rejected_with_its_path(channel_type: str) -> None:
    # Given a user limit on a channel nobody joins by voice
    body = {"name": "S", "channels": [{"name": "c", "type": channel_type, "user_limit": 5}]}

    # When validated, Then the user_limit field is named with the reason
    assert problems(body) == [
        ("channels[0].user_limit", f"user_limit applies to voice and stage channels, not to {channel_type} channels")
    ]


def test_voice_user_limit_is_0_to_99() -> None:
    # Given voice user limits at both ends, Then they are valid
    for limit in (0, 99):
        ServerConfig.model_validate({"name": "S", "channels": [{"name": "v", "type": "voice", "user_limit": limit}]})

    # When the limit is 100, Then it is rejected with its path
    body = {"name": "S", "channels": [{"name": "v", "type": "voice", "user_limit": 100}]}
    assert problems(body) == [("channels[0].user_limit", "Input should be less than or equal to 99")]


@pytest.mark.parametrize(
    ("seconds", "message"),
    [(-1, "Input should be greater than or equal to 0"), (21601, "Input should be less than or equal to 21600")],
)
def test_slowmode_outside_0_to_21600_seconds_is_rejected_with_its_path(seconds: int, message: str) -> None:
    # Given a slowmode at both limits, Then it is valid
    for valid in (0, 21600):
        ServerConfig.model_validate({"name": "S", "channels": [{"name": "c", "slowmode_seconds": valid}]})

    # When it is outside them, Then it is rejected with its path
    body = {"name": "S", "channels": [{"name": "c", "slowmode_seconds": seconds}]}
    assert problems(body) == [("channels[0].slowmode_seconds", message)]


def test_category_is_not_a_channel_type() -> None:
    # Given a channel typed "category" (categories are written as categories)
    body = {"name": "S", "channels": [{"name": "c", "type": "category"}]}

    # When validated
    [(path, message)] = problems(body)

    # Then the type is rejected and the message lists the channel types
    assert path == "channels[0].type"
    assert "'text', 'voice', 'announcement', 'stage' or 'forum'" in message


# --- Limits at their boundary ---------------------------------------------------------------------


def test_500_channels_including_categories_pass_and_501_fail_at_channels() -> None:
    # Given 10 categories of 49 channels: 10 + 490 = exactly 500
    body = {"name": "Big", "categories": [{"name": f"cat-{i}", "channels": channels(49)} for i in range(10)]}
    config = ServerConfig.model_validate(body)
    assert config.channel_count() == MAX_CHANNELS

    # When one loose channel is added
    body["channels"] = channels(1, "loose")
    found = problems(body)

    # Then the total is rejected at "channels", saying categories count
    assert found == [
        ("channels", "the configuration has 501 channels, categories included; the platform allows at most 500")
    ]


def test_50_channels_in_a_category_pass_and_51_fail_at_that_category() -> None:
    # Given a category holding exactly the platform's 50 channels, Then it is valid
    body = {
        "name": "S",
        "categories": [{"name": "a"}, {"name": "full", "channels": channels(MAX_CHANNELS_PER_CATEGORY)}],
    }
    ServerConfig.model_validate(body)

    # When it holds 51
    body["categories"][1]["channels"].append({"name": "one-too-many"})
    found = problems(body)

    # Then that category's channel list is rejected
    assert found == [("categories[1].channels", "List should have at most 50 items after validation, not 51")]


def test_250_roles_pass_and_251_fail_at_roles() -> None:
    # Given exactly 250 distinct roles, Then they are valid
    body = {"name": "S", "roles": [{"name": f"role-{i}"} for i in range(MAX_ROLES)]}
    ServerConfig.model_validate(body)

    # When there are 251, Then the role list is rejected
    body["roles"].append({"name": "extra"})
    assert problems(body) == [("roles", "List should have at most 250 items after validation, not 251")]


# --- Nested in a request body ---------------------------------------------------------------------


def test_errors_inside_a_request_body_carry_the_full_loc() -> None:
    # Given a request body whose configuration has a cross-field problem
    body = realistic_config()
    body["roles"].append({"name": "Mods"})
    body["categories"][1]["channels"][0]["overwrites"][0]["role"] = "Ghost"

    # When the request model validates it
    with pytest.raises(ValidationError) as caught:
        CreateRequest.model_validate({"config": body})

    # Then each loc starts at the request's field and pinpoints the offending value
    assert [(error["loc"], error["input"]) for error in caught.value.errors()] == [
        (("config", "roles", 3, "name"), "Mods"),
        (("config", "categories", 1, "channels", 0, "overwrites", 0, "role"), "Ghost"),
    ]


def test_field_errors_inside_a_request_body_carry_the_full_loc() -> None:
    # Given a request body with an unknown permission and a misplaced user limit
    body = realistic_config()
    body["roles"][0]["permissions"] = ["ADMINSTRATOR"]
    body["channels"][0]["user_limit"] = 3

    # When the request model validates it
    found = problems({"config": body}, CreateRequest)

    # Then both are reported under the request's field
    assert found == [
        ("config.roles[0].permissions[0]", "unknown permission 'ADMINSTRATOR' (did you mean 'ADMINISTRATOR'?)"),
        (
            "config.channels[0].user_limit",
            "user_limit applies to voice and stage channels, not to announcement channels",
        ),
    ]


def test_errors_in_a_list_of_configurations_carry_the_list_index() -> None:
    # Given configurations nested in a list (as a batch body would hold them)
    class Batch(BaseModel):
        configs: list[ServerConfig]

    second = realistic_config()
    second["channels"][1]["overwrites"] = [{"role": "Nobody"}]

    # When validated
    found = problems({"configs": [realistic_config(), second]}, Batch)

    # Then the path includes the list index
    assert found == [
        (
            "configs[1].channels[1].overwrites[0].role",
            "overwrite names role 'Nobody', which this configuration does not define",
        )
    ]


@pytest.mark.parametrize(
    ("loc", "path"),
    [
        (("categories", 2, "channels", 0, "name"), "categories[2].channels[0].name"),
        (("body", "config", "roles", 3, "name"), "config.roles[3].name"),
        (("channels",), "channels"),
        (("body",), "body"),
        ((), "body"),
    ],
)
def test_field_path_writes_the_contract_path(loc: tuple[str | int, ...], path: str) -> None:
    # Given a pydantic loc, When formatted, Then it reads like the contract's paths
    assert field_path(loc) == path


# --- JSON schema ------------------------------------------------------------------------------------


def test_json_schema_shows_the_constraints_and_stays_small() -> None:
    # Given the schema that goes into the OpenAPI document and the AI's structured output
    schema = ServerConfig.model_json_schema()
    defs = schema["$defs"]

    # Then the limits are visible and permissions are one shared enum
    assert schema["properties"]["roles"]["maxItems"] == MAX_ROLES
    assert defs["Category"]["properties"]["channels"]["maxItems"] == MAX_CHANNELS_PER_CATEGORY
    assert defs["Role"]["properties"]["name"] == {"maxLength": 100, "minLength": 1, "title": "Name", "type": "string"}
    assert defs["Channel"]["properties"]["slowmode_seconds"]["anyOf"][0] == {
        "maximum": 21600,
        "minimum": 0,
        "type": "integer",
    }
    assert {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"} in defs["Role"]["properties"]["color"]["anyOf"]
    assert defs["Permission"]["enum"] == list(PERMISSION_BITS)
    # version 2 (settings, locales, forum fields) was under 12,000; version 4 (onboarding, AutoMod, the welcome screen,
    # role colours) adds about 6,300
    assert len(json.dumps(schema)) < 19000


# --- Permissions and channel types --------------------------------------------------------------


def test_all_permissions_is_the_or_of_every_named_bit() -> None:
    # Given every permission name, When combined, Then it is the platform's full set
    assert ALL_PERMISSIONS == 8866461766385663
    assert to_bitfield(PERMISSION_BITS) == "8866461766385663"
    assert [member.value for member in Permission] == list(PERMISSION_BITS)


def test_bitfield_round_trips_through_names() -> None:
    # Given some permission names
    names = ["VIEW_CHANNEL", "SEND_MESSAGES", "BYPASS_SLOWMODE", "SET_VOICE_CHANNEL_STATUS"]

    # When turned into a bitfield and back
    bitfield = to_bitfield(names)

    # Then the same names come back, in bit order, from the string or the integer
    expected = ["VIEW_CHANNEL", "SEND_MESSAGES", "SET_VOICE_CHANNEL_STATUS", "BYPASS_SLOWMODE"]
    assert from_bitfield(bitfield) == expected
    assert from_bitfield(int(bitfield)) == expected
    assert from_bitfield(str(ALL_PERMISSIONS)) == list(PERMISSION_BITS)


def test_from_bitfield_ignores_bits_without_a_name() -> None:
    # Given the undocumented bit 47 and a future bit 60 next to VIEW_CHANNEL
    bitfield = str((1 << 47) | (1 << 60) | (1 << 10))

    # When read, Then only the named flag comes back
    assert from_bitfield(bitfield) == ["VIEW_CHANNEL"]
    assert 47 not in PERMISSION_BITS.values()


def test_to_bitfield_rejects_an_unknown_name() -> None:
    # Given a misspelt name, When converted, Then it is an error rather than a silently missing bit
    with pytest.raises(ValueError, match="unknown permission 'SEND_MESAGES'"):
        to_bitfield(["SEND_MESAGES"])


def test_has_permission_reads_the_bit_and_administrator_implies_all() -> None:
    # Given a bitfield with SEND_MESSAGES only, and one with ADMINISTRATOR only
    sender = to_bitfield(["SEND_MESSAGES"])
    admin = to_bitfield(["ADMINISTRATOR"])

    # Then each answers as the platform would
    assert has_permission(sender, "SEND_MESSAGES")
    assert not has_permission(sender, "BAN_MEMBERS")
    assert has_permission(admin, "BAN_MEMBERS")
    assert has_permission(int(admin), "PIN_MESSAGES")
    assert not has_permission("0", "VIEW_CHANNEL")
    with pytest.raises(ValueError, match="unknown permission"):
        has_permission(admin, "FLY")


def test_every_configurable_channel_type_has_a_platform_number() -> None:
    # Given the channel types a configuration may use, Then each maps to the platform's number
    assert {name: CHANNEL_TYPES[name] for name in ChannelType.__args__} == {
        "text": 0,
        "voice": 2,
        "announcement": 5,
        "stage": 13,
        "forum": 15,
    }
    assert CHANNEL_TYPES["category"] == 4
