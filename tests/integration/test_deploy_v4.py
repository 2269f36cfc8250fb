"""deployToChat with configuration v4 against the sandbox and moto: AutoMod rules, onboarding, the welcome screen and
gradient role colours deploy, export back as deployed, and re-deploy with no write; what the platform would refuse
(a welcome screen without COMMUNITY, onboarding below its minimum, too many rules of a trigger with the ones kept) is
the preflight's 409 naming the field, with no write; a limit of the configuration alone is a 400 naming the field;
a dropped rule goes only with `prune` and `confirm`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from svcconf.config import ServerConfig
from tests.helpers.deploy_worker import DeployQueue, deploy_body, link, writes
from tests.helpers.handlers import bearer

USER = "web-user-1"
BUILD_LAB = "1191000000000001005"  # an empty guild of alice's, with COMMUNITY, NEWS and ROLE_ICONS
V4_PARTS = ("automod", "onboarding", "welcome_screen")
ROOMS = ["general", "lfg", "clips", "memes", "off-topic", "events", "feedback"]
GRADIENT = {"primary": 0xFF0000, "secondary": 0x0000FF}


def community() -> dict[str, Any]:
    """A gaming community: a gradient staff role, region roles, seven open rooms and a staff-only mod log."""
    return {
        "name": "Arcade",
        "roles": [
            {"name": "Mods", "colors": GRADIENT, "permissions": ["MANAGE_MESSAGES", "MODERATE_MEMBERS"]},
            {"name": "EU"},
            {"name": "NA"},
        ],
        "channels": [
            *({"name": room} for room in ROOMS),
            {
                "name": "mod-log",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
                ],
            },
        ],
        "automod": [
            {
                "name": "Invite links",
                "trigger": "keyword",
                "keywords": ["discord.gg*"],
                "actions": [
                    {"type": "block", "message": "No invites here"},
                    {"type": "alert", "channel": "mod-log"},
                    {"type": "timeout", "seconds": 600},
                ],
                "exempt_roles": ["Mods"],
            },
            {"name": "Spam", "trigger": "spam", "actions": [{"type": "block"}]},
            {
                "name": "Mention raids",
                "trigger": "mention_spam",
                "mention_limit": 8,
                "mention_raid_protection": True,
                "actions": [{"type": "block"}, {"type": "alert", "channel": "mod-log"}],
            },
        ],
        "onboarding": {
            "enabled": True,
            "default_channels": ROOMS,
            "prompts": [
                {
                    "title": "Where do you play?",
                    "single_select": True,
                    "options": [
                        {"title": "Europe", "emoji": "🇪🇺", "roles": ["EU"], "channels": ["lfg"]},
                        {"title": "Americas", "roles": ["NA"]},
                    ],
                }
            ],
        },
        "welcome_screen": {
            "description": "Welcome to the Arcade",
            "channels": [{"channel": "general", "description": "Say hello", "emoji": "👋"}],
        },
    }


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def call(invoke, body: dict[str, Any]):
    return invoke("deployToChat", body, headers=bearer(USER))


def deploy(invoke, aws, config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    queued = call(invoke, deploy_body(BUILD_LAB, config, **extra))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = call(invoke, {"action": "info", "project_id": "proj-1", "guild_id": BUILD_LAB})
    assert info.body["status"] == "succeeded", info.body
    return info.body


def exported(invoke) -> dict[str, Any]:
    answer = call(invoke, {"action": "export", "guild_id": BUILD_LAB})
    assert answer.status == 200, answer.body
    return answer.body["config"]


def v4(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration's v4 parts and its roles' colours, as the schema reads them (defaults filled in)."""
    parsed = ServerConfig.model_validate(config).model_dump(mode="json", exclude_none=True)
    colours = {role["name"]: role.get("colors") for role in parsed["roles"]}
    return {"colours": colours, **{part: parsed.get(part) for part in V4_PARTS}}


def with_feature(platform, feature: str, present: bool) -> None:
    with platform.lock:
        guild = platform.guilds[BUILD_LAB]
        features = [f for f in guild["features"] if f != feature]
        guild["features"] = [*features, feature] if present else features


def test_a_community_deploys_exports_back_equal_and_redeploys_with_no_write(invoke, linked, aws):
    # Given a guild with ENHANCED_ROLE_COLORS
    with_feature(linked, "ENHANCED_ROLE_COLORS", True)
    config = community()
    # When the community is deployed
    info = deploy(invoke, aws, config)
    # Then the platform holds the rules, onboarding, the welcome screen and the gradient
    guild = linked.guild(BUILD_LAB)
    rules = {rule["name"]: rule for rule in guild["automod_rules"].values()}
    assert sorted(rules) == ["Invite links", "Mention raids", "Spam"]
    assert [a["type"] for a in rules["Invite links"]["actions"]] == [1, 2, 3]
    assert rules["Invite links"]["enabled"] is True
    assert guild["onboarding"]["enabled"] is True
    assert len(guild["onboarding"]["default_channel_ids"]) == 7
    assert guild["welcome_screen"]["welcome_channels"][0]["description"] == "Say hello"
    mods = next(role for role in guild["roles"].values() if role["name"] == "Mods")
    assert (mods["color"], mods["secondary_color"]) == (0xFF0000, 0x0000FF)
    assert info["steps"]["automod"]["planned"] == 3
    assert info["steps"]["onboarding"]["planned"] == 1
    # And the export is the configuration's v4 parts, as deployed
    back = exported(invoke)
    assert v4(back) == v4(config)
    # And a deploy of the export writes nothing
    linked.clear_log()
    dry = call(invoke, deploy_body(BUILD_LAB, back, dry_run=True))
    assert dry.status == 200, dry.body
    assert [item for item in dry.body["plan"] if item["action"] != "keep"] == []


def test_gradients_without_the_feature_deploy_their_primary_colour_with_a_warning(invoke, linked, aws):
    # Given a guild without ENHANCED_ROLE_COLORS
    with_feature(linked, "ENHANCED_ROLE_COLORS", False)
    config = {"name": "Arcade", "roles": [{"name": "Mods", "colors": GRADIENT}]}
    # When the dry run and the deploy run
    dry = call(invoke, deploy_body(BUILD_LAB, config, dry_run=True))
    deploy(invoke, aws, config)
    # Then the warning says so, the role has its primary colour alone, the export says it as deployed
    assert {"field": "roles[0].colors", "rule": "gradient-unavailable"} in [
        {"field": w["field"], "rule": w["rule"]} for w in dry.body["warnings"]
    ]
    mods = next(role for role in linked.guild(BUILD_LAB)["roles"].values() if role["name"] == "Mods")
    assert (mods["color"], mods.get("secondary_color")) == (0xFF0000, None)
    back = exported(invoke)
    assert [(r["name"], r["color"], r.get("colors")) for r in back["roles"]] == [("Mods", 0xFF0000, None)]
    # And a re-deploy of the same configuration writes nothing
    again = call(invoke, deploy_body(BUILD_LAB, config, dry_run=True))
    assert [item for item in again.body["plan"] if item["action"] != "keep"] == []


def test_what_the_platform_would_refuse_is_the_preflights_409_naming_it_with_no_write(invoke, linked, aws):
    # Given a guild that is no Community server
    with_feature(linked, "COMMUNITY", False)
    config = community()
    config["onboarding"]["default_channels"] = ROOMS[:6]  # one short of the platform's 7
    for role in config["roles"]:
        role.pop("colors", None)
    # When it is deployed
    refused = call(invoke, deploy_body(BUILD_LAB, config))
    # Then 409 names the welcome screen and onboarding's default channels; nothing was written
    assert refused.status == 409, refused.body
    fields = {detail["field"] for detail in refused.body["details"]}
    assert {"welcome_screen", "onboarding.default_channels"} <= fields
    assert writes(linked) == []


def test_onboarding_counts_only_channels_everyone_may_post_in(invoke, linked, aws):
    # Given seven default channels of which three are read-only for @everyone
    config = community()
    del config["welcome_screen"]
    for room in config["channels"][4:7]:
        room["overwrites"] = [{"role": "@everyone", "deny": ["SEND_MESSAGES"]}]
    # When it is deployed, Then the preflight refuses it before any write
    refused = call(invoke, deploy_body(BUILD_LAB, config))
    assert refused.status == 409, refused.body
    assert [d["field"] for d in refused.body["details"]] == ["onboarding.default_channels"]
    assert "4 of them open to @everyone" in refused.body["details"][0]["message"]
    assert writes(linked) == []


def test_a_configuration_at_each_rule_limit_deploys_and_one_past_it_is_a_400_naming_the_field(invoke, linked, aws):
    def keyword(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "trigger": "keyword",
            "keywords": ["x" * 60] * 1000,
            "regex": ["a" * 260] * 10,
            "actions": [{"type": "block"}] * 5,
        }

    # A configuration at the limits (6 keyword rules of 1,000 keywords of 60, 10 regexes of 260, 5 actions) plans
    at_limit = {"name": "Arcade", "automod": [keyword(f"k{n}") for n in range(6)]}
    planned = call(invoke, deploy_body(BUILD_LAB, at_limit, dry_run=True))
    assert planned.status == 200, planned.body
    assert [item["action"] for item in planned.body["plan"] if item["kind"] == "automod_rule"] == ["create"] * 6
    # and deploys: the platform holds the six rules with every keyword
    deploy(invoke, aws, at_limit)
    rules = linked.guilds[BUILD_LAB]["automod_rules"].values()
    assert sorted((r["name"], len(r["trigger_metadata"]["keyword_filter"]), len(r["actions"])) for r in rules) == [
        (f"k{n}", 1000, 5) for n in range(6)
    ]
    past = {"name": "Arcade", "automod": [keyword(f"k{n}") for n in range(6)]}
    past["automod"].append(keyword("k6"))
    refused = call(invoke, deploy_body(BUILD_LAB, past, dry_run=True))
    assert refused.status == 400
    assert [d["field"] for d in refused.body["details"]] == ["config.automod[6].trigger"]
    long = {"name": "Arcade", "automod": [keyword(f"k{n}") for n in range(6)]}
    long["automod"][0]["keywords"] = [*long["automod"][0]["keywords"], "one too many"]
    refused = call(invoke, deploy_body(BUILD_LAB, long, dry_run=True))
    assert [d["field"] for d in refused.body["details"]] == ["config.automod[0].keywords"]


def test_a_dropped_rule_goes_only_with_prune_and_its_count_includes_the_rules_kept(invoke, linked, aws):
    # Given a deployed community
    deploy(invoke, aws, {**community(), "welcome_screen": None})
    config = community()
    config["automod"] = config["automod"][1:]  # "Invite links" dropped
    # When it is re-deployed without prune, Then the rule stays
    plan = call(invoke, deploy_body(BUILD_LAB, config, dry_run=True)).body["plan"]
    assert [i for i in plan if i["kind"] == "automod_rule" and i["action"] == "delete"] == []
    # When with prune, Then the dry run lists its deletion and the deploy without confirm is refused
    pruned = call(invoke, deploy_body(BUILD_LAB, config, dry_run=True, prune=True))
    deletes = [i for i in pruned.body["plan"] if i["kind"] == "automod_rule" and i["action"] == "delete"]
    assert [d["name"] for d in deletes] == ["Invite links"]
    unconfirmed = call(invoke, deploy_body(BUILD_LAB, config, prune=True))
    assert unconfirmed.status in (400, 409), unconfirmed.body
    assert "Invite links" in [r["name"] for r in linked.guild(BUILD_LAB)["automod_rules"].values()]
    # And a new spam rule beside the one the deploy keeps (renamed, without prune) is the preflight's 409
    config["automod"][0]["name"] = "New spam"
    linked.clear_log()
    refused = call(invoke, deploy_body(BUILD_LAB, config))
    assert refused.status == 409, refused.body
    assert [d["field"] for d in refused.body["details"]] == ["automod[0].trigger"]
    assert writes(linked) == []


def test_a_rollback_restores_the_previous_rules_onboarding_and_welcome_screen(invoke, linked, aws):
    # Given a deployed community, then a deploy that changes a rule, adds one, drops one with prune, and changes
    # onboarding and the welcome screen
    deploy(invoke, aws, community())
    before = copy.deepcopy(linked.guilds[BUILD_LAB])
    changed = community()
    changed["automod"][0]["keywords"] = ["discord.gg*", "dsc.gg*"]
    changed["automod"][1] = {
        "name": "Slurs",
        "trigger": "keyword_preset",
        "presets": ["slurs"],
        "actions": [{"type": "block"}],
    }
    del changed["automod"][2]
    changed["onboarding"]["prompts"][0]["options"].append({"title": "Asia", "roles": ["EU"]})
    changed["welcome_screen"]["description"] = "New description"
    dry = call(invoke, deploy_body(BUILD_LAB, changed, dry_run=True, prune=True))
    assert dry.status == 200, dry.body
    deploy(invoke, aws, changed, prune=True, confirm=dry.body["plan_id"])
    assert sorted(r["name"] for r in linked.guilds[BUILD_LAB]["automod_rules"].values()) == ["Invite links", "Slurs"]
    # When the deployment is rolled back
    queued = call(invoke, {"action": "rollback", "project_id": "proj-1", "guild_id": BUILD_LAB})
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    # Then the rules, onboarding and the welcome screen are as they were before it (new ids for rules made again)
    after = linked.guilds[BUILD_LAB]

    def rules(guild: dict[str, Any]) -> list[tuple[Any, ...]]:
        return sorted(
            (r["name"], r["trigger_type"], r["trigger_metadata"], r["actions"], r["enabled"])
            for r in guild["automod_rules"].values()
        )

    assert rules(after) == rules(before)
    assert after["onboarding"] == before["onboarding"]
    assert after["welcome_screen"] == before["welcome_screen"]
