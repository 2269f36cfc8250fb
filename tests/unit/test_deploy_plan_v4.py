"""The plan of configuration version 4: role colours (and their warning without ENHANCED_ROLE_COLORS), AutoMod rules
by name with field-level changes, deletion only with prune (and a confirmed plan's list), a changed trigger as a delete
and a create, onboarding and the welcome screen as one object each; the preflight's v4 problems."""

from __future__ import annotations

from typing import Any

from svcconf.chat.community import AutomodRule, GuildOnboarding, WelcomeScreen
from svcconf.config import ServerConfig
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.preflight import preflight_problems
from svcconf.deploy_engine.steps import CommunityStep, RoleStep
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder

ROOMS = ["general", "lfg", "clips", "memes", "off-topic", "events", "feedback"]


def guild(*features: str) -> tuple[GuildBuilder, dict[str, str]]:
    built = GuildBuilder(features=("COMMUNITY", *features))
    ids = {"Mods": built.role("Mods", "MANAGE_MESSAGES", color=0xFF0000), "EU": built.role("EU")}
    for room in [*ROOMS, "mod-log"]:
        ids[room] = built.channel(room)
    return built, ids


def live_rule(ids: dict[str, str], name: str = "Invites", trigger: int = 1, **fields: Any) -> AutomodRule:
    body = {
        "id": ids.get(f"rule:{name}", "5500"),
        "guild_id": GUILD_ID,
        "name": name,
        "trigger_type": trigger,
        "trigger_metadata": {"keyword_filter": ["discord.gg*"], "regex_patterns": [], "allow_list": []},
        "actions": [{"type": 1, "metadata": {}}],
        "enabled": True,
        **fields,
    }
    return AutomodRule.model_validate(body)


def with_parts(built: GuildBuilder, **parts: Any) -> LiveGuild:
    live = built.build()
    defaults = {"automod_rules": [], "onboarding": GuildOnboarding(guild_id=GUILD_ID), "welcome_screen": None}
    return live.model_copy(update={**defaults, **parts})


def config(**parts: Any) -> ServerConfig:
    body = {
        "name": "Community",
        "roles": [{"name": "Mods", "permissions": ["MANAGE_MESSAGES"], "color": 0xFF0000}, {"name": "EU"}],
        "channels": [{"name": room} for room in [*ROOMS, "mod-log"]],
        **parts,
    }
    return ServerConfig.model_validate(body)


INVITES = {"name": "Invites", "trigger": "keyword", "keywords": ["discord.gg*"], "actions": [{"type": "block"}]}


def community_steps(plan: Any) -> list[tuple[str, str]]:
    return [(s.op, s.name) for s in plan.steps if isinstance(s, CommunityStep)]


# -- colours ------------------------------------------------------------------------------------------------------


def test_a_gradient_is_sent_where_the_guild_has_the_feature_and_its_primary_alone_elsewhere() -> None:
    gradient = {"name": "Vip", "colors": {"primary": 1, "secondary": 2}}
    with_feature = plan_deployment(guild("ENHANCED_ROLE_COLORS")[0].build(), config(roles=[gradient]))
    without = plan_deployment(guild()[0].build(), config(roles=[gradient]))
    created = next(s for s in with_feature.steps if isinstance(s, RoleStep) and s.name == "Vip")
    assert created.payload["colors"] == {"primary_color": 1, "secondary_color": 2, "tertiary_color": None}
    assert created.payload["color"] == 1
    assert with_feature.warnings == []
    plain = next(s for s in without.steps if isinstance(s, RoleStep) and s.name == "Vip")
    assert plain.payload["colors"] == {"primary_color": 1, "secondary_color": None, "tertiary_color": None}
    assert [(w.field, w.rule) for w in without.warnings] == [("roles[0].colors", "gradient-unavailable")]


def test_an_existing_roles_gradient_is_a_colors_change_and_the_same_gradient_none() -> None:
    built, _ = guild("ENHANCED_ROLE_COLORS")
    mods = {"name": "Mods", "permissions": ["MANAGE_MESSAGES"], "colors": {"primary": 0xFF0000, "secondary": 5}}
    plan = plan_deployment(built.build(), config(roles=[mods, {"name": "EU"}]))
    item = next(i for i in plan.items if i.name == "Mods")
    assert [(c.field, c.old, c.new) for c in item.changes if c.field != "position"] == [
        (
            "colors",
            {"primary_color": 0xFF0000, "secondary_color": None, "tertiary_color": None},
            {"primary_color": 0xFF0000, "secondary_color": 5, "tertiary_color": None},
        )
    ]
    # Without the feature the primary colour alone is compared: nothing to write
    plain = plan_deployment(guild()[0].build(), config(roles=[mods, {"name": "EU"}]))
    assert [c.field for c in next(i for i in plain.items if i.name == "Mods").changes] == ["position"]
    assert [s for s in plain.steps if isinstance(s, RoleStep)] == []  # the order is the bulk reorder's


# -- AutoMod ------------------------------------------------------------------------------------------------------


def test_rules_are_created_kept_and_updated_field_by_field() -> None:
    built, ids = guild()
    live = with_parts(built, automod_rules=[live_rule(ids)])
    same = plan_deployment(live, config(automod=[INVITES]))
    assert [(i.name, i.action) for i in same.items if i.kind == "automod_rule"] == [("Invites", "keep")]
    assert community_steps(same) == []
    changed = {**INVITES, "keywords": ["discord.gg*", "dsc.gg*"], "exempt_roles": ["Mods"]}
    spam = {"name": "Spam", "trigger": "spam", "actions": [{"type": "alert", "channel": "mod-log"}]}
    plan = plan_deployment(live, config(automod=[changed, spam]))
    update = next(i for i in plan.items if i.name == "Invites")
    assert [(c.field, c.old, c.new) for c in update.changes] == [
        ("keywords", ["discord.gg*"], ["discord.gg*", "dsc.gg*"]),
        ("exempt_roles", [], ["Mods"]),
    ]
    steps = {s.name: s for s in plan.steps if isinstance(s, CommunityStep)}
    assert steps["Invites"].payload == {
        "trigger_metadata": {"keyword_filter": ["discord.gg*", "dsc.gg*"], "regex_patterns": [], "allow_list": []},
        "exempt_roles": [ids["Mods"]],
    }
    assert steps["Spam"].op == "create_automod_rule"
    assert steps["Spam"].payload["actions"] == [{"type": 2, "metadata": {"channel_id": ids["mod-log"]}}]
    assert steps["Spam"].payload["enabled"] is True


def test_a_rule_naming_a_role_the_deploy_creates_refers_to_it_by_its_key() -> None:
    built, _ = guild()
    body = config(
        roles=[{"name": "Mods"}, {"name": "EU"}, {"name": "Staff"}], automod=[{**INVITES, "exempt_roles": ["Staff"]}]
    )
    plan = plan_deployment(with_parts(built), body)
    step = next(s for s in plan.steps if isinstance(s, CommunityStep))
    assert step.payload["exempt_roles"] == ["@ref:role:staff"]


def test_a_dropped_rule_is_deleted_only_with_prune_and_only_if_a_confirmed_plan_listed_it() -> None:
    built, ids = guild()
    live = with_parts(built, automod_rules=[live_rule(ids, "Old", id="5501"), live_rule(ids)])
    kept = plan_deployment(live, config(automod=[INVITES]))
    assert [i.name for i in kept.items if i.kind == "automod_rule"] == ["Invites"]
    pruned = plan_deployment(live, config(automod=[INVITES]), prune=True)
    assert [(i.name, i.action, i.id) for i in pruned.deletes()] == [("Old", "delete", "5501")]
    assert community_steps(pruned) == [("delete_automod_rule", "Old")]
    unlisted = plan_deployment(live, config(automod=[INVITES]), prune=True, confirmed_deletes=[])
    assert unlisted.deletes() == []
    # Without `automod` the server's rules are left alone, even with prune
    assert community_steps(plan_deployment(live, config(), prune=True)) == []


def test_a_changed_trigger_is_a_delete_then_a_create_and_deletions_come_first() -> None:
    built, ids = guild()
    live = with_parts(built, automod_rules=[live_rule(ids)])
    profile = {**INVITES, "trigger": "member_profile"}
    plan = plan_deployment(
        live, config(automod=[{"name": "First", "trigger": "spam", "actions": [{"type": "block"}]}, profile])
    )
    assert community_steps(plan) == [
        ("delete_automod_rule", "Invites"),
        ("create_automod_rule", "First"),
        ("create_automod_rule", "Invites"),
    ]


# -- onboarding and the welcome screen ----------------------------------------------------------------------------


def onboarding(**fields: Any) -> dict[str, Any]:
    prompt = {"title": "Region?", "options": [{"title": "Europe", "roles": ["EU"], "channels": ["lfg"]}]}
    return {"enabled": True, "default_channels": ROOMS, "prompts": [prompt], **fields}


def test_onboarding_is_one_object_updated_with_its_fields_that_differ() -> None:
    built, ids = guild()
    plan = plan_deployment(with_parts(built), config(onboarding=onboarding()))
    item = next(i for i in plan.items if i.kind == "onboarding")
    assert [c.field for c in item.changes] == ["enabled", "default_channels", "prompts"]
    step = next(s for s in plan.steps if isinstance(s, CommunityStep))
    assert step.payload["default_channel_ids"] == [ids[room] for room in ROOMS]
    assert step.payload["prompts"][0]["options"][0]["role_ids"] == [ids["EU"]]
    assert step.previous["enabled"] is False
    # Once the server has it, the same configuration plans no write
    live_onboarding = GuildOnboarding.model_validate(
        {
            "guild_id": GUILD_ID,
            "enabled": True,
            "mode": 0,
            "default_channel_ids": step.payload["default_channel_ids"],
            "prompts": [
                {**step.payload["prompts"][0], "options": [{**step.payload["prompts"][0]["options"][0], "id": "7"}]}
            ],
        }
    )
    again = plan_deployment(with_parts(built, onboarding=live_onboarding), config(onboarding=onboarding()))
    assert next(i for i in again.items if i.kind == "onboarding").action == "keep"
    assert community_steps(again) == []


def test_the_welcome_screen_is_planned_and_kept_when_it_is_the_same() -> None:
    built, ids = guild()
    screen = {"description": "Hi", "channels": [{"channel": "general", "description": "Say hello", "emoji": "👋"}]}
    live_screen = WelcomeScreen(description=None, welcome_channels=[])
    plan = plan_deployment(with_parts(built, welcome_screen=live_screen), config(welcome_screen=screen))
    step = next(s for s in plan.steps if isinstance(s, CommunityStep))
    assert step.payload == {
        "enabled": True,
        "description": "Hi",
        "welcome_channels": [
            {"channel_id": ids["general"], "description": "Say hello", "emoji_id": None, "emoji_name": "👋"}
        ],
    }
    built.features.append("WELCOME_SCREEN_ENABLED")
    same = WelcomeScreen.model_validate({"description": "Hi", "welcome_channels": step.payload["welcome_channels"]})
    again = plan_deployment(with_parts(built, welcome_screen=same), config(welcome_screen=screen))
    assert community_steps(again) == []


# -- the preflight ------------------------------------------------------------------------------------------------


def test_the_preflight_names_what_the_platform_would_refuse() -> None:
    built, ids = guild()
    built.features.remove("COMMUNITY")
    built.channels[1].permission_overwrites = []
    live = with_parts(built, automod_rules=[live_rule(ids, "Old spam", trigger=3, id="5502", trigger_metadata={})])
    body = config(
        onboarding=onboarding(default_channels=ROOMS[:6]),
        welcome_screen={"channels": [{"channel": "general", "description": "Hi"}]},
        automod=[{"name": "Spam", "trigger": "spam", "actions": [{"type": "block"}]}],
    )
    problems = {p.field: p.message for p in preflight_problems(live, plan_deployment(live, body))}
    assert sorted(problems) == ["automod[0].trigger", "onboarding.default_channels", "welcome_screen"]
    assert "6, 6 of them open to @everyone" in problems["onboarding.default_channels"]
    assert "2 spam rules" in problems["automod[0].trigger"]
    # With prune the old rule goes first: one spam rule, no problem there
    pruned = {p.field for p in preflight_problems(live, plan_deployment(live, body, prune=True))}
    assert "automod[0].trigger" not in pruned


# -- what the caller may do ---------------------------------------------------------------------------------------


def test_a_manager_without_manage_guild_is_refused_each_v4_object_and_a_timeout_needs_moderate_members() -> None:
    from svcconf.caller_rights.checks import plan_refusals
    from svcconf.caller_rights.standing import CallerStanding
    from svcconf.config import to_bitfield

    built, _ = guild()
    live = with_parts(built, welcome_screen=WelcomeScreen())
    timeout = {**INVITES, "actions": [{"type": "timeout", "seconds": 60}]}
    body = config(
        automod=[timeout],
        onboarding=onboarding(),
        welcome_screen={"channels": [{"channel": "general", "description": "Hi"}]},
    )
    plan = plan_deployment(live, body)
    manager = CallerStanding(
        user_id="1",
        owner=False,
        role_ids=frozenset(),
        permissions=int(to_bitfield(["MANAGE_ROLES", "MANAGE_CHANNELS"])),
        top_position=99,
    )
    refusals = {r.field: r.message for r in plan_refusals(manager, live, plan)}
    assert refusals == {
        "automod[0]": "you need MANAGE_GUILD to change AutoMod rules; you need MODERATE_MEMBERS for a timeout action",
        "onboarding": "you need MANAGE_GUILD to change onboarding",
        "welcome_screen": "you need MANAGE_GUILD to change the welcome screen",
    }
    guild_manager = manager.model_copy(update={"permissions": int(to_bitfield(["MANAGE_GUILD"])), "top_position": 1})
    refused = {r.field: r.message for r in plan_refusals(guild_manager, live, plan)}
    assert refused["automod[0].actions"] == "you need MODERATE_MEMBERS for a timeout action"
    assert refused["onboarding"] == (
        "you need MANAGE_ROLES to change onboarding; role 'EU' is not below your highest role: an option cannot hand"
        " it out"
    )
    assert "welcome_screen" not in refused
