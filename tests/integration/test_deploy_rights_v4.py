"""Issue 31's engine findings through deployToChat's HTTP API, against the sandbox (the rights lab unless said):
a move is an access change; rollback items carry their ids and are checked like a deploy's; a rollback restores
the settings its deploy changed even when it deleted the channels they named; a hidden channel is absent, never
refused; acknowledgements per permission and per matched object; a waiting confirmed deletion is re-checked
against its fingerprint; `plan_id` covers every step's payload and the caller."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from svcconf.config import to_bitfield
from tests.helpers.chat_sandbox import ALICE_ID, BOB_ID, BUILD_GUILD, CAROL_ID, DAVE_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import DeployQueue, deploy_body, link, schedules, writes
from tests.helpers.handlers import bearer

DAY = 24 * 3600
LAB_NAME = "Carol's Rights Lab"
MANAGERS, MEMBERS, HELPERS = "1191000000000002063", "1191000000000002062", "1191000000000002061"
LOUNGE, STAFF_SECRETS = "1191000000000003063", "1191000000000003064"
# Each caller a web user of their own, linked to their chat user: the owner, an administrator, MANAGE_GUILD only,
# and a manager (MANAGE_GUILD, MANAGE_ROLES, MANAGE_CHANNELS) under the lab's lowest role.
CALLERS = {"carol": CAROL_ID, "alice": ALICE_ID, "bob": BOB_ID, "dave": DAVE_ID}


@pytest.fixture
def lab(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    for web_user, chat_user in CALLERS.items():
        link(invoke, platform, user=f"web-{web_user}", chat_user=chat_user)
    platform.clear_log()
    return platform


def call(invoke, who: str, body: dict[str, Any]) -> Any:
    return invoke("deployToChat", body, headers=bearer(f"web-{who}"))


def info(invoke, who: str) -> dict[str, Any]:
    return call(invoke, who, {"action": "info", "project_id": "proj-1"}).body


def add_channel(platform, guild_id: str, name: str, kind: int = 0, parent: str | None = None, **fields: Any) -> str:
    """A channel a person made in the platform's client."""
    with platform.lock:
        channel_id = platform.next_id()
        siblings = [c for c in platform.guilds[guild_id]["channels"].values() if c.get("parent_id") == parent]
        platform.guilds[guild_id]["channels"][channel_id] = {
            "id": channel_id,
            "type": kind,
            "name": name,
            "position": len(siblings),
            "parent_id": parent,
            "permission_overwrites": [],
            "guild_id": guild_id,
            **fields,
        }
        platform.channel_guild[channel_id] = guild_id
    return channel_id


def rule(target: str, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"id": target, "type": 0, "allow": to_bitfield(allow), "deny": to_bitfield(deny)}


def grant(platform, guild_id: str, role_id: str, *permissions: str) -> None:
    with platform.lock:
        role = platform.guilds[guild_id]["roles"][role_id]
        role["permissions"] = str(int(role["permissions"]) | int(to_bitfield(permissions)))


def lab_config(**extra: Any) -> dict[str, Any]:
    return {"name": LAB_NAME, **extra}


# ---------------------------------------------------------------- 1. a move is an access change


def private_vault(platform) -> str:
    """Category Vault, closed to @everyone and open to Managers, with `plans` in it carrying the same rules."""
    private = [rule(RIGHTS_LAB, deny=("VIEW_CHANNEL",)), rule(MANAGERS, allow=("VIEW_CHANNEL",))]
    vault = add_channel(platform, RIGHTS_LAB, "Vault", kind=4, permission_overwrites=copy.deepcopy(private))
    return add_channel(platform, RIGHTS_LAB, "plans", parent=vault, permission_overwrites=copy.deepcopy(private))


def moved_out_of_vault(exported: dict[str, Any]) -> dict[str, Any]:
    config = copy.deepcopy(exported)
    vault = next(c for c in config["categories"] if c["name"] == "Vault")
    plans = next(c for c in vault["channels"] if c["name"] == "plans")
    vault["channels"].remove(plans)
    config["channels"].append(plans)
    return config


def test_moving_a_private_channel_out_of_its_category_needs_manage_roles_and_is_shown_as_access_changes(invoke, lab):
    # Given bob with MANAGE_GUILD and MANAGE_CHANNELS but not MANAGE_ROLES, and a private `plans` in Vault
    grant(lab, RIGHTS_LAB, MANAGERS, "MANAGE_CHANNELS")
    plans = private_vault(lab)
    exported = call(invoke, "bob", {"action": "export", "guild_id": RIGHTS_LAB}).body["config"]
    config = moved_out_of_vault(exported)
    field = f"channels[{len(config['channels']) - 1}]"
    assert config["channels"][-1]["id"] == plans

    # When he dry-runs and deploys the move to the top level (keeping its id)
    lab.clear_log()
    planned = call(invoke, "bob", deploy_body(RIGHTS_LAB, config, dry_run=True))
    deployed = call(invoke, "bob", deploy_body(RIGHTS_LAB, config))

    # Then both are refused 403, each overwrite the move would take away its own detail, and nothing is written
    need = "you need MANAGE_ROLES (Manage Permissions) to change overwrites there"
    for refused in (planned, deployed):
        assert refused.status == 403, refused.body
        assert [(d["field"], d["message"]) for d in refused.body["details"]] == [(f"{field}.overwrites", need)] * 2
    assert writes(lab) == []
    assert len(lab.guild(RIGHTS_LAB)["channels"][plans]["permission_overwrites"]) == 2

    # And an administrator's dry run of the same move shows what it takes away, as overwrite items
    shown = call(invoke, "alice", deploy_body(RIGHTS_LAB, config, dry_run=True))
    assert shown.status == 200, shown.body
    left = sorted(
        (i["name"], i["action"], i["changes"][0]["old"])
        for i in shown.body["plan"]
        if i["kind"] == "overwrite" and i["action"] == "delete"
    )
    assert left == [
        ("plans → @everyone", "delete", {"allow": [], "deny": ["VIEW_CHANNEL"]}),
        ("plans → Managers", "delete", {"allow": ["VIEW_CHANNEL"], "deny": []}),
    ]
    assert shown.body["steps"]["overwrites"]["planned"] == 2


# ---------------------------------------------------------------- 2. rollback items: ids, checked like a deploy's


TEMP = lab_config(
    roles=[{"name": "Temp", "permissions": []}],
    channels=[{"name": "temp-chat"}, {"id": LOUNGE, "name": "lounge", "topic": "Rolled out"}],
)


def deployed_by(invoke, lab, aws, who: str) -> None:
    queued = call(invoke, who, deploy_body(RIGHTS_LAB, TEMP))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    assert info(invoke, who)["status"] == "succeeded", info(invoke, who)


def raise_to_the_top(platform, name: str) -> None:
    """The owner moves a role just under the bot's in the platform's client."""
    with platform.lock:
        roles = platform.guilds[RIGHTS_LAB]["roles"]
        role = next(r for r in roles.values() if r["name"] == name)
        bot = next(r for r in roles.values() if r.get("managed"))
        for other in roles.values():
            if other["position"] > role["position"] and other is not bot:
                other["position"] -= 1
        role["position"] = bot["position"] - 1


ROLLBACK = {"action": "rollback", "project_id": "proj-1", "guild_id": RIGHTS_LAB}


@pytest.mark.parametrize("who", ["carol", "alice", "dave"])
def test_a_rollback_as_deployed_is_each_callers_own_and_every_item_carries_its_id(invoke, lab, aws, who):
    # Given a deploy by the owner, an administrator or a manager: a role and a channel created, lounge's topic
    deployed_by(invoke, lab, aws, who)
    guild = lab.guild(RIGHTS_LAB)
    temp = next(r["id"] for r in guild["roles"].values() if r["name"] == "Temp")
    chat = next(c["id"] for c in guild["channels"].values() if c["name"] == "temp-chat")
    # When they dry-run its rollback, Then every item names its object's id
    planned = call(invoke, who, {**ROLLBACK, "dry_run": True})
    assert planned.status == 200, planned.body
    items = {(i["kind"], i["name"], i["action"], i["id"]) for i in planned.body["plan"]}
    assert items == {
        ("role", "Temp", "delete", temp),
        ("channel", "temp-chat", "delete", chat),
        ("channel", "lounge", "update", LOUNGE),
    }
    # And the rollback restores the topic and deletes what the deploy made (alice's own topic rollback included)
    lab.clear_log()
    assert call(invoke, who, ROLLBACK).status == 202
    DeployQueue(aws).drain()
    done = info(invoke, who)
    assert (done["kind"], done["status"], done["steps"]["errors"]) == ("rollback", "succeeded", [])
    guild = lab.guild(RIGHTS_LAB)
    assert guild["channels"][LOUNGE].get("topic") is None
    assert temp not in guild["roles"]
    assert chat not in guild["channels"]


@pytest.mark.parametrize(("who", "refused"), [("carol", False), ("alice", True), ("dave", True)])
def test_a_rollback_may_not_delete_a_role_that_now_stands_above_the_caller(invoke, lab, aws, who, refused):
    # Given the caller's deploy, and the owner raising its role Temp above every member's role since
    deployed_by(invoke, lab, aws, who)
    raise_to_the_top(lab, "Temp")
    temp = next(r["id"] for r in lab.guild(RIGHTS_LAB)["roles"].values() if r["name"] == "Temp")
    lab.clear_log()
    # When they roll it back (dry run and for real)
    answers = [call(invoke, who, {**ROLLBACK, "dry_run": True}), call(invoke, who, ROLLBACK)]
    if not refused:  # the owner passes every hierarchy
        assert [a.status for a in answers] == [200, 202]
        return
    # Then each is a 403 with one detail, naming the role, and nothing is written or queued
    for answer in answers:
        assert answer.status == 403, answer.body
        assert [(d["field"], d["message"]) for d in answer.body["details"]] == [
            ("roles", "role 'Temp': role 'Temp' is not below your highest role")
        ]
    assert writes(lab) == []
    assert DeployQueue(aws).receive() == []
    assert temp in lab.guild(RIGHTS_LAB)["roles"]
    assert info(invoke, who)["kind"] == "deploy"


@pytest.mark.parametrize(("who", "refused"), [("carol", False), ("alice", False), ("dave", True)])
def test_a_rollback_of_channels_needs_manage_channels_as_a_deploy_does(invoke, lab, aws, who, refused):
    # Given the caller's deploy (temp-chat created, lounge's topic changed), and the owner taking MANAGE_CHANNELS
    # from the Helpers role (dave's) since
    deployed_by(invoke, lab, aws, who)
    with lab.lock:
        helpers = lab.guilds[RIGHTS_LAB]["roles"][HELPERS]
        helpers["permissions"] = str(int(helpers["permissions"]) & ~int(to_bitfield(["MANAGE_CHANNELS"])))
    lab.clear_log()
    answers = [call(invoke, who, {**ROLLBACK, "dry_run": True}), call(invoke, who, ROLLBACK)]
    if not refused:  # the owner and an administrator hold it whatever the Helpers role holds
        assert [a.status for a in answers] == [200, 202]
        return
    # Then dave is refused each channel, one detail per object, and nothing is written or queued
    for answer in answers:
        assert answer.status == 403, answer.body
        assert sorted(d["message"] for d in answer.body["details"]) == [
            "channel 'lounge': you need MANAGE_CHANNELS to update channel 'lounge'",
            "channel 'temp-chat': you need MANAGE_CHANNELS to delete channel 'temp-chat'",
        ]
    assert writes(lab) == []
    assert DeployQueue(aws).receive() == []


# ---------------------------------------------------------------- 3. settings its deploy changed, channels it deleted


def test_a_rollback_restores_the_name_and_the_afk_and_system_channels_its_pruning_deploy_deleted(invoke, lab, aws):
    # Given alice's Build Lab with an AFK and a system channel, and her pruning deploy that renames the server and
    # deletes both channels (the platform clears the settings that named them)
    afk = add_channel(lab, BUILD_GUILD, "afk-room", kind=2)
    welcome = add_channel(lab, BUILD_GUILD, "welcome")
    with lab.lock:
        lab.guilds[BUILD_GUILD].update(afk_channel_id=afk, system_channel_id=welcome)
    config = {"name": "Build Lab (renamed)", "channels": [{"name": "general"}]}
    planned = call(invoke, "alice", deploy_body(BUILD_GUILD, config, dry_run=True, prune=True))
    assert planned.status == 200, planned.body
    deployed = call(invoke, "alice", deploy_body(BUILD_GUILD, config, prune=True, confirm=planned.body["plan_id"]))
    assert deployed.status == 202, deployed.body
    DeployQueue(aws).drain()
    guild = lab.guild(BUILD_GUILD)
    assert (guild["name"], guild["afk_channel_id"], guild["system_channel_id"]) == ("Build Lab (renamed)", None, None)

    # When she rolls it back, nobody having touched the server since
    assert call(invoke, "alice", {"action": "rollback", "project_id": "proj-1"}).status == 202
    DeployQueue(aws).drain()

    # Then nothing is left "changed since", and the name and both settings are back, on the re-created channels
    done = info(invoke, "alice")
    assert (done["kind"], done["status"], done["steps"]["errors"]) == ("rollback", "succeeded", [])
    guild = lab.guild(BUILD_GUILD)
    names = {c["id"]: c["name"] for c in guild["channels"].values()}
    assert guild["name"] == "Alice's Build Lab"
    assert (names.get(guild["afk_channel_id"]), names.get(guild["system_channel_id"])) == ("afk-room", "welcome")


def test_a_rollback_leaves_only_the_setting_someone_else_changed(invoke, lab, aws):
    # Given alice's deploy that renames the Build Lab and sets its verification level, and a person who changes
    # the verification level again afterwards
    config = {"name": "Renamed", "settings": {"verification_level": "medium"}}
    assert call(invoke, "alice", deploy_body(BUILD_GUILD, config)).status == 202
    DeployQueue(aws).drain()
    with lab.lock:
        lab.guilds[BUILD_GUILD]["verification_level"] = 3
    # When she rolls it back
    assert call(invoke, "alice", {"action": "rollback", "project_id": "proj-1"}).status == 202
    DeployQueue(aws).drain()
    # Then the name is restored and only the person's field is left, and named
    done = info(invoke, "alice")
    assert [e["message"] for e in done["steps"]["errors"]] == [
        "changed since the deployment (verification_level): left as it is"
    ]
    guild = lab.guild(BUILD_GUILD)
    assert (guild["name"], guild["verification_level"]) == ("Alice's Build Lab", 3)


# ---------------------------------------------------------------- 4. a hidden channel is absent, never refused


def test_a_channel_the_caller_cannot_view_is_treated_as_one_the_server_does_not_have(invoke, lab):
    # dave manages channels but cannot view staff-secrets: naming it, by name or by id, answers exactly what naming
    # a channel the server does not have answers
    by_name = call(
        invoke, "dave", deploy_body(RIGHTS_LAB, lab_config(channels=[{"name": "staff-secrets"}]), dry_run=True)
    )
    assert by_name.status == 200, by_name.body
    [item] = [i for i in by_name.body["plan"] if i["kind"] == "channel" and i["action"] != "keep"]
    assert (item["name"], item["action"]) == ("staff-secrets", "create")

    hidden = lab_config(channels=[{"id": STAFF_SECRETS, "name": "x"}])
    unknown = lab_config(channels=[{"id": "1191000000000009999", "name": "x"}])
    answers = [call(invoke, "dave", deploy_body(RIGHTS_LAB, c, dry_run=True)) for c in (hidden, unknown)]
    assert [a.status for a in answers] == [200, 200]
    assert answers[0].body == answers[1].body
    assert "names a channel you cannot view" not in str(answers[0].body)
    assert STAFF_SECRETS not in str(answers[0].body)


# ---------------------------------------------------------------- 9. acknowledgements per permission and object

EVERYDAY = [
    "VIEW_CHANNEL",
    "SEND_MESSAGES",
    "READ_MESSAGE_HISTORY",
    "ADD_REACTIONS",
    "EMBED_LINKS",
    "ATTACH_FILES",
    "CONNECT",
    "SPEAK",
    "MENTION_EVERYONE",
]
# Template-like configurations of our own, as imported public templates look: @everyone keeps MENTION_EVERYONE.
TEMPLATES: dict[str, dict[str, Any]] = {
    "study group": {
        "everyone_permissions": EVERYDAY,
        "roles": [{"name": "Tutor", "permissions": ["MANAGE_MESSAGES", "MUTE_MEMBERS"]}, {"name": "Student"}],
        "categories": [
            {"name": "Classes", "channels": [{"name": "homework-help"}, {"name": "Study Room", "type": "voice"}]}
        ],
    },
    "gaming clan": {
        "everyone_permissions": [*EVERYDAY, "USE_EXTERNAL_EMOJIS", "STREAM"],
        "roles": [{"name": "Officer", "permissions": ["KICK_MEMBERS", "MANAGE_NICKNAMES"]}, {"name": "Recruit"}],
        "channels": [{"name": "lfg"}, {"name": "Squad 1", "type": "voice"}],
    },
    "art community": {
        "everyone_permissions": EVERYDAY,
        "roles": [{"name": "Curator", "permissions": ["MANAGE_THREADS"]}],
        "channels": [{"name": "showcase", "type": "forum"}, {"name": "critique"}],
    },
    "support desk": {  # grants more: @everyone may manage the threads of #tickets
        "everyone_permissions": EVERYDAY,
        "channels": [
            {"name": "faq"},
            {"name": "tickets", "overwrites": [{"role": "@everyone", "allow": ["MANAGE_THREADS"], "deny": []}]},
        ],
    },
}


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_a_template_needs_an_acknowledgement_only_for_what_the_server_does_not_already_grant(
    invoke, lab, aws, template
):
    # Given alice's Build Lab, whose @everyone holds MANAGE_MESSAGES and MENTION_EVERYONE
    grant(lab, BUILD_GUILD, BUILD_GUILD, "MANAGE_MESSAGES", "MENTION_EVERYONE")
    config = {"name": "Alice's Build Lab", **TEMPLATES[template]}
    answer = call(invoke, "alice", deploy_body(BUILD_GUILD, config))
    if template != "support desk":
        # Then keeping MENTION_EVERYONE on @everyone (while the server grants more) needs no acknowledgement
        assert answer.status == 202, answer.body
        return
    # Then a grant on a new object names exactly that one permission there, and nothing about @everyone's base
    assert answer.status == 409, answer.body
    assert [(d["field"], d["rule"], d["message"]) for d in answer.body["details"]] == [
        (
            "channels[1].overwrites[0].allow",
            "everyone-dangerous-permission",
            "On channel 'tickets', @everyone would be allowed MANAGE_THREADS, which it is not allowed there now, so "
            "every member would get it: allow a staff role instead.",
        )
    ]
    acknowledged = call(
        invoke, "alice", deploy_body(BUILD_GUILD, config, acknowledge=["everyone-dangerous-permission"])
    )
    assert acknowledged.status == 202, acknowledged.body


def add_role(platform, guild_id: str, name: str, *permissions: str) -> str:
    """A role a person made in the platform's client, just above @everyone."""
    with platform.lock:
        role_id = platform.next_id()
        roles = platform.guilds[guild_id]["roles"]
        for role in roles.values():
            if role["position"] > 0:
                role["position"] += 1
        roles[role_id] = {
            "id": role_id,
            "name": name,
            "permissions": to_bitfield(permissions),
            "position": 1,
            "color": 0,
            "hoist": False,
            "mentionable": False,
            "managed": False,
        }
    return role_id


def test_a_dangerous_grant_copied_from_other_roles_of_the_server_needs_an_acknowledgement(invoke, lab):
    # Given alice's Build Lab, whose two roles both grant KICK_MEMBERS
    add_role(lab, BUILD_GUILD, "Mods", "KICK_MEMBERS")
    add_role(lab, BUILD_GUILD, "Hosts", "KICK_MEMBERS")
    # When a configuration makes two new roles that grant it too (the same finding, word for word, as the server's)
    copied = {
        "name": "Alice's Build Lab",
        "roles": [
            {"name": "Wardens", "permissions": ["KICK_MEMBERS"]},
            {"name": "Guards", "permissions": ["KICK_MEMBERS"]},
        ],
    }
    answer = call(invoke, "alice", deploy_body(BUILD_GUILD, copied))
    # Then the new roles' grant needs an acknowledgement: the same grant on other objects is a new one
    assert answer.status == 409, answer.body
    [detail] = answer.body["details"]
    assert (detail["field"], detail["rule"]) == ("roles", "every-role-dangerous-permission")
    assert "would grant KICK_MEMBERS" in detail["message"]
    # And the server's own two roles, stated as they are, need none
    kept = {
        **copied,
        "roles": [
            {"name": "Mods", "permissions": ["KICK_MEMBERS"]},
            {"name": "Hosts", "permissions": ["KICK_MEMBERS"]},
        ],
    }
    assert call(invoke, "alice", deploy_body(BUILD_GUILD, kept)).status == 202


# ---------------------------------------------------------------- 10. a waiting confirmed deletion, re-checked


def test_a_waiting_prune_keeps_what_a_person_renamed_and_repurposed_since_it_was_confirmed(invoke, lab, aws):
    # Given carol's pruning deploy of the lab that deletes `old-news` and creates three roles, confirmed, and
    # waiting for the platform's role quota (used up a day ago)
    old_news = add_channel(lab, RIGHTS_LAB, "old-news", topic="2024 news")
    exported = call(invoke, "carol", {"action": "export", "guild_id": RIGHTS_LAB}).body["config"]
    config = copy.deepcopy(exported)
    config["channels"] = [c for c in config["channels"] if c["name"] != "old-news"]
    config["roles"] += [{"name": f"Crew {n}", "permissions": ["SEND_MESSAGES"]} for n in range(3)]
    planned = call(invoke, "carol", deploy_body(RIGHTS_LAB, config, dry_run=True, prune=True)).body
    assert [(i["kind"], i["id"]) for i in planned["plan"] if i["action"] == "delete"] == [("channel", old_news)]
    lab.use_quota(RIGHTS_LAB, roles=250, age_seconds=DAY)
    queue = DeployQueue(aws)
    queued = call(invoke, "carol", deploy_body(RIGHTS_LAB, config, prune=True, confirm=planned["plan_id"]))
    assert queued.status == 202, queued.body
    queue.drain()
    assert info(invoke, "carol")["status"] == "waiting"
    [schedule] = schedules()

    # When a person renames it and gives it a new purpose before the deploy resumes
    with lab.lock:
        lab.guilds[RIGHTS_LAB]["channels"][old_news].update(name="events", topic="This week's events")
    lab.advance_clock(DAY + 5)
    lab.clear_log()
    queue.sqs.send_message(QueueUrl=queue.url, MessageBody=schedule["Target"]["Input"])
    queue.drain()

    # Then the deploy finishes without deleting it, and names it in steps.errors
    done = info(invoke, "carol")
    assert done["status"] in ("succeeded", "partial"), done
    assert old_news in lab.guild(RIGHTS_LAB)["channels"]
    assert ("DELETE", "/channels/{channel_id}") not in writes(lab)
    [error] = done["steps"]["errors"]
    assert (error["kind"], error["name"]) == ("channel", "events")  # as it is named now
    assert error["message"].startswith("changed since its deletion was confirmed (")
    assert "name" in error["message"]
    assert "topic" in error["message"]


# ---------------------------------------------------------------- 11. plan_id over every payload and the caller


def test_two_plans_that_would_write_differently_never_share_a_plan_id(invoke, lab):
    quiet = lab_config(roles=[{"name": "Crew", "permissions": ["SEND_MESSAGES"]}], channels=[{"name": "crew-chat"}])
    loud = lab_config(
        roles=[{"name": "Crew", "permissions": ["SEND_MESSAGES", "ADD_REACTIONS"], "color": 0xFF0000, "hoist": True}],
        channels=[{"name": "crew-chat", "topic": "All hands", "nsfw": True}],
    )
    ids = {
        (who, name): call(invoke, who, deploy_body(RIGHTS_LAB, config, dry_run=True)).body["plan_id"]
        for who in ("carol", "alice")
        for name, config in (("quiet", quiet), ("loud", loud))
    }
    assert len(set(ids.values())) == 4, ids
    # the same caller and configuration: the same id
    again = call(invoke, "carol", deploy_body(RIGHTS_LAB, quiet, dry_run=True)).body["plan_id"]
    assert again == ids[("carol", "quiet")]
