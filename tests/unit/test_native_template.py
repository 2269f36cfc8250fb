"""import: a native server template's snapshot as a configuration; placeholders resolved, lenient about types."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from svcconf.chat.templates import GuildTemplate, TemplateSnapshot
from svcconf.config import to_bitfield
from svcconf.deploy_engine.native_template import template_config, template_guild
from svcconf.deploy_engine.plan import plan_deployment
from tests.helpers.live_settings import with_settings

VIEW, SEND = to_bitfield(["VIEW_CHANNEL"]), to_bitfield(["SEND_MESSAGES"])


def snapshot(**changes: Any) -> dict[str, Any]:
    """A snapshot in the platform's form: placeholders for ids, @everyone = 0, roles bottom up."""
    body: dict[str, Any] = {
        "name": "Study Hall",
        "description": None,
        "region": None,
        "verification_level": 1,
        "default_message_notifications": 1,
        "explicit_content_filter": 1,
        "preferred_locale": "en-GB",
        "afk_channel_id": 5,
        "afk_timeout": 300,
        "system_channel_id": 2,
        "system_channel_flags": 1,
        "roles": [
            {"id": 0, "name": "@everyone", "permissions": to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES"]), "color": 0,
             "colors": None, "hoist": False, "mentionable": False, "icon": None, "unicode_emoji": None},
            {"id": 1, "name": "Student", "permissions": "0", "color": 0x2ECC71, "colors": None, "hoist": True,
             "mentionable": True, "icon": None, "unicode_emoji": "📚"},
            {"id": 2, "name": "Tutor", "permissions": to_bitfield(["MANAGE_MESSAGES"]), "color": 0, "colors": None,
             "hoist": True, "mentionable": False, "icon": None, "unicode_emoji": None},
        ],
        "channels": [
            {"id": 1, "type": 4, "name": "Tutors", "position": 1, "parent_id": None,
             "permission_overwrites": [{"id": 0, "type": 0, "allow": "0", "deny": VIEW},
                                       {"id": 2, "type": 0, "allow": VIEW, "deny": "0"}]},
            {"id": 2, "type": 0, "name": "lobby", "position": 0, "parent_id": None, "topic": "Hi",
             "permission_overwrites": []},
            {"id": 3, "type": 0, "name": "tutor-chat", "position": 0, "parent_id": 1, "rate_limit_per_user": 5,
             "permission_overwrites": [{"id": 0, "type": 0, "allow": "0", "deny": VIEW},
                                       {"id": 2, "type": 0, "allow": VIEW, "deny": "0"},
                                       {"id": 1, "type": 0, "allow": "0", "deny": SEND}]},
            {"id": 4, "type": 15, "name": "questions", "position": 2, "parent_id": None, "topic": "One per post",
             "permission_overwrites": [], "default_thread_rate_limit_per_user": 10, "default_sort_order": 0,
             "default_forum_layout": 1, "default_reaction_emoji": {"emoji_id": None, "emoji_name": "✅"},
             "available_tags": [{"id": 1, "name": "Maths", "emoji_id": None, "emoji_name": "➗", "moderated": None},
                                {"id": 2, "name": "Answered", "emoji_id": None, "emoji_name": None,
                                 "moderated": True}]},
            {"id": 5, "type": 2, "name": "Silent Study", "position": 3, "parent_id": None, "bitrate": 64000,
             "user_limit": 8, "permission_overwrites": []},
        ],
    }  # fmt: skip
    return body | changes


def test_placeholders_become_names_roles_come_top_down_and_channels_sit_under_their_categories():
    config = template_config(TemplateSnapshot.model_validate(snapshot())).config

    assert [(r.name, r.emoji, r.hoist) for r in config.roles] == [("Tutor", None, True), ("Student", "📚", True)]
    assert config.everyone_permissions == ["VIEW_CHANNEL", "SEND_MESSAGES"]
    tutors = config.categories[0]
    assert [(o.role, o.allow, o.deny) for o in tutors.overwrites] == [
        ("@everyone", [], ["VIEW_CHANNEL"]),
        ("Tutor", ["VIEW_CHANNEL"], []),
    ]
    [tutor_chat] = tutors.channels
    assert [(o.role, o.deny) for o in tutor_chat.overwrites] == [("Student", ["SEND_MESSAGES"])]
    assert tutor_chat.slowmode_seconds == 5
    assert [c.name for c in config.channels] == ["lobby", "questions", "Silent Study"]


def test_settings_forum_fields_and_voice_fields_are_mapped():
    config = template_config(TemplateSnapshot.model_validate(snapshot())).config

    settings = config.settings
    assert settings is not None
    assert (settings.verification_level, settings.default_notifications) == ("low", "only_mentions")
    assert (settings.explicit_content_filter, settings.preferred_locale) == ("members_without_roles", "en-GB")
    assert (settings.afk_channel, settings.afk_timeout, settings.system_channel) == ("Silent Study", 300, "lobby")
    assert settings.system_channel_flags == ["SUPPRESS_JOIN_NOTIFICATIONS"]
    _, forum, voice = config.channels
    assert [(t.name, t.emoji, t.moderated) for t in forum.tags or []] == [
        ("Maths", "➗", False),
        ("Answered", None, True),
    ]
    assert (forum.default_reaction, forum.default_thread_slowmode_seconds) == ("✅", 10)
    assert (forum.default_sort, forum.default_layout, forum.topic) == ("latest_activity", "list", "One per post")
    assert (voice.type, voice.bitrate, voice.user_limit) == ("voice", 64000, 8)


def as_strings(value: Any) -> Any:
    """The snapshot with every id and bitfield written as a string, as the description types some of them."""
    if isinstance(value, dict):
        return {k: str(v) if k.endswith("id") and isinstance(v, int) else as_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_strings(item) for item in value]
    return value


def as_integers(value: Any) -> Any:
    """The snapshot with permission bitfields as JSON numbers, as the platform's own docs example shows them."""
    if isinstance(value, dict):
        return {k: int(v) if k in ("permissions", "allow", "deny") else as_integers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_integers(item) for item in value]
    return value


@pytest.mark.parametrize("spelling", [as_strings, as_integers], ids=["string ids", "integer bitfields"])
def test_ids_and_bitfields_read_the_same_as_integers_or_strings(spelling):
    expected = template_config(TemplateSnapshot.model_validate(snapshot())).config

    config = template_config(TemplateSnapshot.model_validate(spelling(snapshot()))).config

    assert config == expected


def older_serialisation(value: Any) -> Any:
    """The snapshot as templates made before permissions passed 32 bits keep it: an overwrite's type by name, each
    bitfield as an integer cut to 32 bits beside its whole string (`<field>_new`)."""
    if isinstance(value, dict):
        value = {k: older_serialisation(v) for k, v in value.items()}
        for field in ("permissions", "allow", "deny"):
            if field in value:
                value[f"{field}_new"] = str(value[field])
                value[field] = int(value[field]) & 0xFFFFFFFF
        if value.get("type") in (0, 1) and "allow" in value:
            value["type"] = ("role", "member")[value["type"]]
        return value
    if isinstance(value, list):
        return [older_serialisation(item) for item in value]
    return value


def test_the_older_serialisation_reads_the_same_its_whole_bitfields_not_the_cut_ones():
    # Given Tutor's role granting a permission past bit 31 (the 32-bit integer loses it), in the older serialisation
    body = snapshot()
    body["roles"][2]["permissions"] = to_bitfield(["MANAGE_MESSAGES", "MODERATE_MEMBERS"])
    body["channels"][2]["permission_overwrites"][1]["allow"] = to_bitfield(["VIEW_CHANNEL", "SEND_POLLS"])
    expected = template_config(TemplateSnapshot.model_validate(body)).config
    older = older_serialisation(body)
    assert older["channels"][0]["permission_overwrites"][0]["type"] == "role"
    assert older["roles"][2]["permissions"] != int(older["roles"][2]["permissions_new"])  # the cut lost a bit

    config = template_config(TemplateSnapshot.model_validate(older)).config

    assert config == expected
    assert "MODERATE_MEMBERS" in next(role for role in config.roles if role.name == "Tutor").permissions


def test_null_lists_and_flags_read_as_empty_and_false():
    body = snapshot()
    body["channels"][1] |= {"permission_overwrites": None, "nsfw": None}
    body["channels"][3]["available_tags"] = None

    config = template_config(TemplateSnapshot.model_validate(body)).config

    assert config.channels[0].overwrites == []
    assert config.channels[1].tags == []


def test_a_custom_emoji_on_a_tag_is_left_out_and_named():
    body = snapshot()
    body["channels"][3]["available_tags"][0] |= {"emoji_id": "1191000000000009999", "emoji_name": "blobmaths"}

    exported = template_config(TemplateSnapshot.model_validate(body))

    assert exported.config.channels[1].tags is not None
    assert exported.config.channels[1].tags[0].emoji is None
    assert ("channels[1].tags[0].emoji", "unrepresentable") in {(w.field, w.rule) for w in exported.warnings}


def test_a_snapshot_without_everyone_leaves_everyones_permissions_unstated():
    body = snapshot()
    body["roles"] = body["roles"][1:]

    config = template_config(TemplateSnapshot.model_validate(body)).config

    assert config.everyone_permissions is None
    assert [r.name for r in config.roles] == ["Tutor", "Student"]


def test_the_configuration_plans_no_write_against_the_guild_the_snapshot_describes():
    parsed = TemplateSnapshot.model_validate(snapshot())

    plan = plan_deployment(with_settings(template_guild(parsed), parsed), template_config(parsed).config)

    assert plan.steps == []


def test_the_template_object_parses_with_its_source():
    template = GuildTemplate.model_validate(
        {
            "code": "hgM48av5Q69A",
            "name": "Study Hall",
            "description": "For study groups",
            "usage_count": 49605,
            "creator_id": "132837293881950208",
            "creator": None,
            "created_at": "2026-04-12T17:05:46+00:00",
            "updated_at": "2026-04-12T17:05:46+00:00",
            "source_guild_id": "678070694164299796",
            "serialized_source_guild": snapshot(),
            "is_dirty": None,
        }
    )

    assert (template.code, template.usage_count) == ("hgM48av5Q69A", 49605)
    assert json.loads(template.serialized_source_guild.model_dump_json())["afk_channel_id"] == "5"


@pytest.mark.parametrize("written", [[], {"role": 0}, "moderator", None])
def test_an_overwrite_type_of_no_known_name_is_a_validation_error_naming_it_never_a_crash(written):
    body = snapshot()
    body["channels"][0]["permission_overwrites"][0]["type"] = written

    with pytest.raises(ValidationError) as refused:
        TemplateSnapshot.model_validate(body)

    assert [error["loc"] for error in refused.value.errors()] == [("channels", 0, "permission_overwrites", 0, "type")]


def test_a_templates_gradient_and_holographic_colours_come_through_and_what_it_cannot_hold_is_said_once_each():
    body = snapshot()
    body["roles"][1]["colors"] = {"primary_color": 0x2ECC71, "secondary_color": 0x0000FF, "tertiary_color": None}
    body["roles"][2] |= {"color": 0xA9C9FF, "colors": {"primary_color": 0xA9C9FF, "secondary_color": 0xFFBBEC,
                                                       "tertiary_color": 0xFFC3A0}}  # fmt: skip

    exported = template_config(TemplateSnapshot.model_validate(body))

    colours = {
        role.name: role.colors.model_dump(exclude_none=True, exclude_defaults=True) if role.colors else None
        for role in exported.config.roles
    }
    assert colours == {
        "Student": {"primary": 0x2ECC71, "secondary": 0x0000FF},
        "Tutor": {"primary": 0xA9C9FF, "holographic": True},
    }
    assert [(w.field, w.rule) for w in exported.warnings if w.rule == "not-carried"] == [
        ("automod", "not-carried"),
        ("onboarding", "not-carried"),
        ("welcome_screen", "not-carried"),
    ]
    assert (exported.config.automod, exported.config.onboarding, exported.config.welcome_screen) == (None, None, None)
