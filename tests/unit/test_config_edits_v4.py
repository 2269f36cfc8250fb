"""Edits to configuration version 4's objects (svcconf.config.community_edits): an AutoMod rule by name, an onboarding
prompt by title, onboarding's own fields; a role's or channel's rename or removal keeps what they name right; and the
local model's gaming first build (onboarding, AutoMod) whose "turn off the invite-link filter" is one edit."""

from __future__ import annotations

import json

import pytest

from local.ai_model.chat import chat_turn
from local.ai_model.responders import Request
from svcconf.config import ServerConfig
from svcconf.config.apply_edits import apply_edits
from svcconf.config.compact import expand
from svcconf.config.edits import Edit, EditsRejected
from svcconf.conversation.envelope import ChatTurn, build_of, edits_of
from svcconf.conversation.models import ChatMessage
from svcconf.conversation.prompt import build_messages


def gaming_build() -> ServerConfig:
    prompt = build_messages([], None, None, {"purpose": "a gaming community for our clan"}, [])
    return expand(build_of(ChatTurn.model_validate(chat_turn(Request({"messages": prompt})))) or {})


def edit(**fields) -> Edit:
    return Edit.model_validate(fields)


def test_the_local_models_gaming_build_proposes_onboarding_and_an_automod_set_within_the_platforms_rules():
    config = gaming_build()

    assert config.onboarding is not None
    assert config.onboarding.enabled
    assert len(config.onboarding.default_channels) == 7
    [games] = config.onboarding.prompts
    assert [(o.title, o.roles) for o in games.options] == [(g, [g]) for g in ("Minecraft", "Valorant", "Fortnite")]
    rules = {rule.trigger: rule for rule in config.automod or []}
    assert sorted(rules) == ["keyword", "keyword_preset", "mention_spam", "spam"]
    invites = rules["keyword"]
    assert invites.name == "Invite links"
    assert "*discord.gg/*" in (invites.keywords or [])
    assert [(a.type, a.channel) for a in invites.actions] == [("block", None), ("alert", "mod-log")]
    assert invites.exempt_roles == ["Admin", "Moderator"]


def test_turn_off_the_invite_link_filter_is_one_edit_that_changes_that_rule_alone():
    start = gaming_build()
    current = start.model_dump(mode="json", exclude_defaults=True)
    prompt = build_messages(
        [ChatMessage(role="user", content="Turn off the invite-link filter")], current, None, None, []
    )

    turn = ChatTurn.model_validate(chat_turn(Request({"messages": prompt})))
    result = apply_edits(start, edits_of(turn.edits or []))

    assert [e.model_dump(exclude_none=True) for e in edits_of(turn.edits or [])] == [
        {"op": "update", "kind": "automod", "name": "Invite links", "set": {"enabled": False}}
    ]
    assert turn.build is None
    assert [c.model_dump() for c in result.changes] == [
        {"op": "update", "path": "automod[3].enabled", "old": True, "new": False}
    ]
    before, after = start.model_dump(mode="json"), result.config.model_dump(mode="json")
    after["automod"][3]["enabled"] = True
    assert after == before  # nothing else changed
    assert len(json.dumps([e.model_dump(exclude_none=True) for e in turn.edits or []])) // 4 < 40


def test_prompts_are_added_renamed_and_removed_by_title_and_onboarding_updated():
    start = gaming_build()
    region = {"single_select": True, "options": [{"title": "Europe", "roles": ["EU"]}, {"title": "Americas"}]}
    edits = [
        edit(op="add", kind="role", name="EU"),
        edit(op="add", kind="prompt", name="Where do you play?", set=region),
        edit(op="rename", kind="prompt", name="which games do you play?", to="Your games"),
        edit(op="update", kind="onboarding", set={"mode": "advanced"}),
        edit(
            op="add",
            kind="automod",
            name="Scam links",
            set={"trigger": "keyword", "keywords": ["*free nitro*"], "actions": [{"type": "block"}]},
            at=0,
        ),
    ]

    result = apply_edits(start, edits)

    onboarding = result.config.onboarding
    assert onboarding is not None
    assert onboarding.mode == "advanced"
    assert [p.title for p in onboarding.prompts] == ["Your games", "Where do you play?"]
    assert onboarding.prompts[1].options[0].roles == ["EU"]
    assert [rule.name for rule in result.config.automod or []][:2] == ["Scam links", "Spam"]
    removed = apply_edits(result.config, [edit(op="remove", kind="prompt", name="Your games")])
    assert [p.title for p in removed.config.onboarding.prompts] == ["Where do you play?"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("edits", "field", "words"),
    [
        ([edit(op="update", kind="automod", name="No such rule", set={"enabled": False})], "edits[0]", "no AutoMod"),
        (
            [edit(op="add", kind="automod", name="spam", set={"trigger": "spam", "actions": [{"type": "block"}]})],
            "edits[0]",
            "already exists",
        ),
        ([edit(op="update", kind="automod", name="Spam", set={"mention_limit": 3})], "edits[0]", "mention_limit"),
        ([edit(op="update", kind="onboarding", set={"prompts": []})], "edits[0]", "'prompts'"),
        (
            [edit(op="add", kind="automod", name="Spam 2", set={"trigger": "spam", "actions": [{"type": "block"}]})],
            "automod[4].trigger",
            "at most 1 spam",
        ),
        (
            [edit(op="add", kind="prompt", name="Region", set={"options": [{"title": "EU", "roles": ["Nobody"]}]})],
            "onboarding.prompts[1].options[0].roles[0]",
            "Nobody",
        ),
    ],
)
def test_an_edit_that_does_not_apply_is_refused_naming_it(edits, field, words):
    with pytest.raises(EditsRejected) as refused:
        apply_edits(gaming_build(), edits)
    assert refused.value.problems[0].field == field
    assert words in refused.value.problems[0].message


def test_a_channel_rename_follows_and_a_removed_alert_channel_takes_its_alerts_with_it():
    start = gaming_build()
    renamed = apply_edits(start, [edit(op="rename", kind="channel", name="mod-log", cat="Staff", to="alerts")])
    invites = next(r for r in renamed.config.automod or [] if r.name == "Invite links")
    assert invites.actions[1].channel == "alerts"
    gone = apply_edits(start, [edit(op="remove", kind="channel", name="clips", cat="Gaming")])
    assert "clips" not in gone.config.onboarding.default_channels  # type: ignore[union-attr]
    assert {"op": "remove", "path": "onboarding.default_channels[5]", "old": "clips", "new": None} in [
        c.model_dump() for c in gone.changes
    ]


def test_a_removed_role_leaves_the_options_and_exemptions_that_named_it_and_nothing_else():
    gone = apply_edits(gaming_build(), [edit(op="remove", kind="role", name="Moderator")])

    exempt = {rule.name: rule.exempt_roles for rule in gone.config.automod or []}
    assert exempt == {"Spam": [], "Mention spam": ["Admin"], "Slurs": [], "Invite links": ["Admin"]}
    assert [(o.title, o.roles) for o in gone.config.onboarding.prompts[0].options] == [  # type: ignore[union-attr]
        (g, [g]) for g in ("Minecraft", "Valorant", "Fortnite")
    ]
    removed = [c.model_dump() for c in gone.changes if c.op == "remove" and c.path.startswith("automod")]
    assert removed == [
        {"op": "remove", "path": "automod[1].exempt_roles[1]", "old": "Moderator", "new": None},
        {"op": "remove", "path": "automod[3].exempt_roles[1]", "old": "Moderator", "new": None},
    ]
    handed_out = apply_edits(gaming_build(), [edit(op="remove", kind="role", name="Valorant")])
    options = handed_out.config.onboarding.prompts[0].options  # type: ignore[union-attr]
    assert [(o.title, o.roles) for o in options] == [
        ("Minecraft", ["Minecraft"]),
        ("Valorant", []),
        ("Fortnite", ["Fortnite"]),
    ]


def test_a_removed_category_takes_its_channels_out_of_onboarding_and_leaves_the_others():
    gone = apply_edits(gaming_build(), [edit(op="remove", kind="category", name="Gaming")])

    onboarding = gone.config.onboarding
    assert onboarding is not None
    assert onboarding.default_channels == ["rules", "announcements", "general", "off-topic"]
    assert [o.channels for o in onboarding.prompts[0].options] == [[], [], []]  # looking-for-group was in Gaming


def test_a_build_too_long_for_the_output_budget_leaves_onboarding_and_automod_to_go_on_which_adds_them_as_edits():
    questionnaire = {"purpose": "gaming", "roles": 20, "channels": 60}
    prompt = build_messages([], None, None, questionnaire, [], 850)  # what a 26 s turn may write, a repair kept
    first = ChatTurn.model_validate(chat_turn(Request({"messages": prompt})))
    start = expand(build_of(first) or {})
    assert (start.onboarding, start.automod) == (None, None)
    assert first.rest is not None
    assert first.quick_replies[0] == "Go on"
    assert len(first.model_dump_json(exclude_none=True)) // 4 <= 850

    current = start.model_dump(mode="json", exclude_defaults=True)
    go_on = build_messages([ChatMessage(role="user", content="Go on")], current, None, None, [], 850)
    second = ChatTurn.model_validate(chat_turn(Request({"messages": go_on})))
    config = apply_edits(start, edits_of(second.edits or [])).config

    full = gaming_build()
    assert config.onboarding == full.onboarding
    assert config.automod == full.automod
