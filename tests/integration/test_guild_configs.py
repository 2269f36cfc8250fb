"""deployToChat export and import against the sandbox and moto: a hand-built guild read as a configuration and
deployed back with no write, or to an empty guild that then reads the same; each native template of the
sandbox imported, deployed, and read back as it was imported."""

from __future__ import annotations

from typing import Any

import pytest

from local.chat_sandbox.routes.templates import templates as sandbox_templates
from svcconf.chat import get_chat_client
from svcconf.config import ServerConfig, to_bitfield
from svcconf.config.access import SEND_MESSAGES_BIT, VIEW_CHANNEL_BIT, access_differences
from svcconf.deploy_engine.live import guild_access, read_live_guild
from tests.helpers.deploy_worker import ALICE, DEMO, QUIET, USER, DeployQueue, deploy_body, link, without_ids, writes
from tests.helpers.handlers import bearer

BUILD_LAB = "1191000000000001005"  # an empty guild of alice's, with COMMUNITY and NEWS
MODERATOR = "1191000000000002012"
LOUNGE, WELCOME = "1191000000000003015", "1191000000000003012"
KINDS = ("role", "category", "channel", "overwrite")


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def call(invoke, body: dict[str, Any]):
    return invoke("deployToChat", body, headers=bearer(USER))


def build_by_hand(platform) -> None:
    """The demo guild as someone made it in the app: settings, a private category, a forum with tags."""
    with platform.lock:
        guild = platform.guilds[DEMO]
        guild |= {
            "verification_level": 2,
            "default_message_notifications": 1,
            "explicit_content_filter": 1,
            "afk_channel_id": LOUNGE,
            "afk_timeout": 900,
            "system_channel_id": WELCOME,
            "system_channel_flags": 1,
            "preferred_locale": "en-GB",
        }
        view = to_bitfield(["VIEW_CHANNEL"])
        private = [
            {"id": DEMO, "type": 0, "allow": "0", "deny": view},
            {"id": MODERATOR, "type": 0, "allow": view, "deny": "0"},
        ]
        staff = platform.next_id()
        channels = [
            {"id": staff, "type": 4, "name": "Staff", "position": 3, "parent_id": None,
             "permission_overwrites": private},
            {"id": platform.next_id(), "type": 0, "name": "mod-log", "position": 0, "parent_id": staff,
             "permission_overwrites": private, "topic": "Who did what", "rate_limit_per_user": 30},
            {"id": platform.next_id(), "type": 2, "name": "Mod Call", "position": 1, "parent_id": staff,
             "permission_overwrites": private, "bitrate": 64000, "user_limit": 4},
            {"id": platform.next_id(), "type": 15, "name": "help", "position": 4, "parent_id": None,
             "permission_overwrites": [], "topic": "One question per post", "default_thread_rate_limit_per_user": 60,
             "default_sort_order": 1, "default_forum_layout": 2, "flags": 1 << 4,
             "default_reaction_emoji": {"emoji_id": None, "emoji_name": "👍"},
             "available_tags": [{"id": platform.next_id(), "name": "Bug", "moderated": False, "emoji_name": "🐛"},
                                {"id": platform.next_id(), "name": "Solved", "moderated": True}]},
        ]  # fmt: skip
        for channel in channels:
            guild["channels"][channel["id"]] = {**channel, "guild_id": DEMO}
            platform.channel_guild[channel["id"]] = DEMO


def expressed(config: dict[str, Any]) -> dict[str, Any]:
    """What a configuration expresses of a guild: all of it, ids aside."""
    return without_ids(ServerConfig.model_validate(config).model_dump(mode="json"))


def deploy_and_drain(invoke, aws, guild_id: str, config: dict[str, Any]) -> dict[str, Any]:
    queued = call(invoke, deploy_body(guild_id, config))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = call(invoke, {"action": "info", "project_id": "proj-1", "guild_id": guild_id}).body
    assert info["status"] == "succeeded", info
    return info


def test_export_reads_a_hand_built_guild_and_deploying_it_back_sends_no_write(invoke, linked, aws):
    build_by_hand(linked)

    exported = call(invoke, {"action": "export", "guild_id": DEMO})

    assert exported.status == 200, exported.body
    body = exported.body
    assert body["status"] == "exported"
    config = body["config"]
    assert [role["name"] for role in config["roles"]] == ["Moderator", "Member"]  # the bot's managed role left out
    staff = next(category for category in config["categories"] if category["name"] == "Staff")
    assert staff["overwrites"] == [
        {"role": "@everyone", "allow": [], "deny": ["VIEW_CHANNEL"]},
        {"role": "Moderator", "allow": ["VIEW_CHANNEL"], "deny": []},
    ]
    assert [(c["name"], c["type"], c["overwrites"]) for c in staff["channels"]] == [
        ("mod-log", "text", []),
        ("Mod Call", "voice", []),
    ]
    forum = next(channel for channel in config["channels"] if channel["name"] == "help")
    assert forum["type"] == "forum"
    assert [tag["name"] for tag in forum["tags"]] == ["Bug", "Solved"]
    assert (forum["default_reaction"], forum["require_tag"], forum["default_layout"]) == ("👍", True, "gallery")
    assert config["settings"]["afk_channel"] == "Lounge"
    assert config["settings"]["system_channel"] == "welcome"
    assert config["settings"]["verification_level"] == "medium"
    linked.clear_log()

    deploy_and_drain(invoke, aws, DEMO, config)

    sent = writes(linked)
    print(f"\nexport of the hand-built guild deployed back: {len(sent)} non-GET requests, "
          f"{len(linked.requests('GET'))} GETs")  # fmt: skip
    assert sent == []


def test_the_export_deployed_to_an_empty_guild_makes_the_two_guilds_read_the_same(invoke, linked, aws):
    build_by_hand(linked)
    source = call(invoke, {"action": "export", "guild_id": DEMO}).body["config"]

    deploy_and_drain(invoke, aws, BUILD_LAB, source)

    copy = call(invoke, {"action": "export", "guild_id": BUILD_LAB})
    assert copy.status == 200, copy.body
    assert expressed(copy.body["config"]) == expressed(source)


def test_export_needs_a_guild_the_caller_manages_and_the_bot_is_in(invoke, linked):
    with linked.lock:
        linked.guilds[QUIET]["owner_id"] = ALICE  # alice manages it, but the bot is not there

    not_managed = call(invoke, {"action": "export", "guild_id": "1191000000000001002"})
    no_bot = call(invoke, {"action": "export", "guild_id": QUIET})
    missing = call(invoke, {"action": "export"})

    assert not_managed.status == 403, not_managed.body
    assert no_bot.status == 409, no_bot.body
    assert "install_url" in no_bot.body
    assert missing.status == 400
    assert [detail["field"] for detail in missing.body["details"]] == ["guild_id"]


@pytest.mark.parametrize("code", list(sandbox_templates()))
def test_each_sandbox_template_imports_deploys_and_reads_back_as_imported(invoke, linked, aws, code):
    template = sandbox_templates()[code]

    imported = call(invoke, {"action": "import", "template": f"https://discord.new/{code}"})

    assert imported.status == 200, imported.body
    body = imported.body
    assert body["status"] == "imported"
    assert body["source"] == {
        "code": code,
        "name": template["name"],
        "description": template["description"],
        "usage_count": template["usage_count"],
    }
    config = ServerConfig.model_validate(body["config"])
    snapshot = template["serialized_source_guild"]
    assert len(config.roles) == len(snapshot["roles"]) - 1  # all but @everyone
    assert config.channel_count() == len(snapshot["channels"])
    dry = call(invoke, deploy_body(BUILD_LAB, body["config"], dry_run=True))
    assert dry.status == 200, dry.body
    # Every object is new to the empty guild (its settings and @everyone may change, once the deploy states them).
    objects = [item for item in dry.body["plan"] if item["kind"] in KINDS and item["name"] != "@everyone"]
    assert {item["action"] for item in objects} == {"create"}

    deploy_and_drain(invoke, aws, BUILD_LAB, body["config"])

    read_back = expressed(call(invoke, {"action": "export", "guild_id": BUILD_LAB}).body["config"])
    assert snapshot["description"] is None  # the sandbox's templates leave it out: it stays as the guild has it
    read_back["settings"]["description"] = None
    assert read_back == expressed(body["config"])


@pytest.mark.parametrize(
    "template",
    ["svcStudyHall", "discord.new/svcStudyHall", "https://discord.com/template/svcStudyHall",
     "http://discordapp.com/template/svcStudyHall/", "  https://www.discord.new/svcStudyHall  "],
)  # fmt: skip
def test_a_template_is_named_by_code_or_by_any_of_the_platforms_links(invoke, linked, template):
    response = call(invoke, {"action": "import", "template": template})

    assert response.status == 200, response.body
    assert response.body["source"]["code"] == "svcStudyHall"


@pytest.mark.parametrize(
    "template",
    ["https://discord.gg/svcStudyHall", "https://example.com/template/svcStudyHall", "discord.new/a/b",
     "discord.new:8080/svcStudyHall", "svc Study", "https://discord.new/", "ftp://discord.new/svcStudyHall", "é"],
)  # fmt: skip
def test_anything_else_is_400_on_template(invoke, linked, template):
    response = call(invoke, {"action": "import", "template": template})

    assert response.status == 400, response.body
    assert [detail["field"] for detail in response.body["details"]] == ["template"]


def test_an_unknown_template_is_404(invoke, linked):
    response = call(invoke, {"action": "import", "template": "discord.new/noSuchTemplate"})

    assert response.status == 404, response.body
    assert "template" in response.body["message"].lower()


def test_a_template_in_the_older_serialisation_imports_with_its_overwrites(invoke, linked):
    response = call(invoke, {"action": "import", "template": "discord.new/svcOldGuard"})

    assert response.status == 200, response.body
    (hall,) = response.body["config"]["categories"]
    veterans = next(channel for channel in hall["channels"] if channel["name"] == "veterans")
    assert veterans["overwrites"] == [
        {"role": "@everyone", "allow": [], "deny": ["VIEW_CHANNEL"]},
        {"role": "Veteran", "allow": ["VIEW_CHANNEL"], "deny": []},
    ]


def test_a_template_answer_the_service_cannot_read_is_a_502_with_the_error_body_never_a_500(invoke, linked):
    response = call(invoke, {"action": "import", "template": "discord.new/svcOddShape"})

    assert response.status == 502, response.body
    assert (response.body["error"], response.body["code"]) == ("Error", 502)  # the contract's phrase for a 502
    assert "serialized_source_guild.channels.2.permission_overwrites.0.type" in response.body["message"]


def test_the_alliance_template_keeps_its_managers_channel_from_moderators_imported_deployed_and_exported(
    invoke, linked, aws
):
    admin, suggestions = "text 'admin' in category 'Administration'", "text 'suggestions' in category 'Community'"
    imported = call(invoke, {"action": "import", "template": "discord.new/svcAllianceHub"}).body
    assert [w for w in imported["warnings"] if w["rule"] == "unrepresentable"] == []

    deploy_and_drain(invoke, aws, BUILD_LAB, imported["config"])
    exported = call(invoke, {"action": "export", "guild_id": BUILD_LAB}).body["config"]
    deployed = guild_access(read_live_guild(get_chat_client(), BUILD_LAB))
    linked.reset()  # the guild empty again; its tokens too, so the account is linked again
    link(invoke, linked)
    deploy_and_drain(invoke, aws, BUILD_LAB, exported)
    copied = guild_access(read_live_guild(get_chat_client(), BUILD_LAB))

    for access in (deployed, copied):
        assert not access[admin, "Moderator"] & VIEW_CHANNEL_BIT
        assert access[admin, "Alliance Manager"] & VIEW_CHANNEL_BIT
        assert access[suggestions, "Muted"] & SEND_MESSAGES_BIT  # denied in its category, not in this channel
        assert not access["text 'general' in category 'Community'", "Muted"] & SEND_MESSAGES_BIT
    assert access_differences(deployed, copied) == []
