"""What a caller may do to a server, through `make run`: each seeded caller of the sandbox's rights lab (the owner,
an administrator, a MANAGE_GUILD-only manager, a manager with MANAGE_ROLES and MANAGE_CHANNELS too but a low role) ×
each kind of change, answered as the platform's own client would answer that person, with zero writes on every
refusal; bob's escalations, the hidden channel, and a dangerous grant that needs an acknowledgement."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
import requests

from local.settings import LOCAL_JWT_SECRET
from local.tokens import issue_token
from tests.helpers.e2e_deployer import DEPLOY_TIMEOUT_SECONDS, REDIRECT_URI, WRITES
from tests.helpers.sign_in import http_link

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

pytestmark = pytest.mark.e2e

LAB = "1191000000000001006"
CALLERS = {  # name -> (chat user id, standing)
    "carol": ("1191000000000000103", "owner"),
    "alice": ("1191000000000000101", "administrator"),
    "bob": ("1191000000000000102", "MANAGE_GUILD only"),
    "dave": ("1191000000000000104", "manager, low top role"),
}
HIDDEN_NAME, HIDDEN_TOPIC = "staff-secrets", "the raise list"

Config = dict[str, Any]


class Caller:
    """One seeded user of the sandbox, signed in to the service with their own bearer token and linked."""

    def __init__(self, service: LocalService, name: str):
        self.service, self.name = service, name
        self.chat_id = CALLERS[name][0]
        self.sandbox = service.state["chat_api_base_url"].removesuffix("/api/v10")
        env = service.state["env"]
        token = issue_token(
            LOCAL_JWT_SECRET,
            f"rights-{name}",
            issuer=env.get("SVC_JWT_ISSUER") or None,
            audience=env.get("SVC_JWT_AUDIENCE") or None,
        )
        self.bearer = {"Authorization": f"Bearer {token}"}
        http_link(self.service.url("chatAuth"), self.bearer, self.sandbox, self.chat_id, redirect_uri=REDIRECT_URI)

    def call(self, operation: str, body: Config) -> requests.Response:
        return requests.post(self.service.url(operation), json=body, headers=self.bearer, timeout=60)

    def export(self) -> requests.Response:
        return self.call("deployToChat", {"action": "export", "guild_id": LAB})

    def deploy(self, config: Config, *, dry_run: bool = False, **extra: Any) -> requests.Response:
        body = {"action": "deploy", "guild_id": LAB, "project_id": f"rights-{self.name}", "project_name": "Rights"}
        return self.call("deployToChat", {**body, "config": config, "dry_run": dry_run, **extra})

    def finished(self) -> dict[str, Any]:
        deadline = time.monotonic() + DEPLOY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            info = self.call("deployToChat", {"action": "info", "project_id": f"rights-{self.name}"}).json()
            if info["status"] in ("succeeded", "partial", "failed"):
                return info
            time.sleep(0.5)
        raise AssertionError(f"not finished within {DEPLOY_TIMEOUT_SECONDS} s")


@pytest.fixture(scope="module")
def callers(local_service: LocalService) -> dict[str, Caller]:
    return {name: Caller(local_service, name) for name in CALLERS}


def sandbox_log(caller: Caller) -> list[dict[str, Any]]:
    return requests.get(f"{caller.sandbox}/_sandbox/log", timeout=30).json()["requests"]


def lab_guild(caller: Caller) -> dict[str, Any]:
    return requests.get(f"{caller.sandbox}/_sandbox/guilds/{LAB}", timeout=30).json()


def named(objects: list[Config], name: str) -> Config:
    [found] = [item for item in objects if item["name"] == name]
    return found


def _role(config: Config, name: str) -> Config:
    return named(config["roles"], name)


def _channels(config: Config) -> list[Config]:
    return [*config["channels"], *(c for category in config["categories"] for c in category["channels"])]


def _channel(config: Config, name: str) -> Config:
    return named(_channels(config), name)


def _overwrites(config: Config) -> list[Config]:
    return [o for holder in [*config["categories"], *_channels(config)] for o in holder.get("overwrites", [])]


def create_role(config: Config) -> None:
    config["roles"].append({"name": "Greeters", "permissions": ["SEND_MESSAGES"]})


def update_role(config: Config) -> None:
    _role(config, "Members")["color"] = "#2ECC71"


def rename_role(config: Config) -> None:
    _role(config, "Members")["name"] = "Regulars"  # its id stays: the same role
    for overwrite in _overwrites(config):
        if overwrite["role"] == "Members":
            overwrite["role"] = "Regulars"


def reorder_roles(config: Config) -> None:
    roles = config["roles"]
    managers, members = roles.index(_role(config, "Managers")), roles.index(_role(config, "Members"))
    roles[managers], roles[members] = roles[members], roles[managers]


def delete_role(config: Config) -> None:
    config["roles"].remove(_role(config, "Members"))
    for channel in _channels(config):
        channel["overwrites"] = [o for o in channel.get("overwrites", []) if o["role"] != "Members"]


def create_channel(config: Config) -> None:
    config["channels"].append({"name": "news-desk", "topic": "What is new"})


def update_channel(config: Config) -> None:
    _channel(config, "lounge")["topic"] = "Sit down"


def rename_channel(config: Config) -> None:
    _channel(config, "lounge")["name"] = "parlour"


def move_channel(config: Config) -> None:
    lounge = _channel(config, "lounge")
    config["channels"].remove(lounge)
    named(config["categories"], "Hall")["channels"].append(lounge)


def delete_channel(config: Config) -> None:
    config["channels"].remove(_channel(config, "lounge"))


def create_overwrite(config: Config) -> None:
    _channel(config, "lounge").setdefault("overwrites", []).append({"role": "Members", "allow": ["SEND_MESSAGES"]})


def update_overwrite(config: Config) -> None:
    [members] = [o for o in _channel(config, "general")["overwrites"] if o["role"] == "Members"]
    members["allow"] = ["SEND_MESSAGES", "ADD_REACTIONS"]


def grant_above(config: Config) -> None:
    config["roles"].append({"name": "Wardens", "permissions": ["BAN_MEMBERS"]})


def overwrite_grant_above(config: Config) -> None:
    _channel(config, "lounge").setdefault("overwrites", []).append({"role": "Members", "allow": ["BAN_MEMBERS"]})


def settings(config: Config) -> None:
    config.setdefault("settings", {})["verification_level"] = "high"


P, KEPT, NO = "planned", "kept", "403"
# change -> (how, whether it prunes, what the platform's client answers carol, alice, bob and dave)
CHANGES: dict[str, tuple[Callable[[Config], None], bool, tuple[str, str, str, str]]] = {
    "create a role": (create_role, False, (P, P, NO, P)),
    "update a role (above dave)": (update_role, False, (P, P, NO, NO)),
    "rename a role (above dave)": (rename_role, False, (P, P, NO, NO)),
    "reorder roles (above dave)": (reorder_roles, False, (P, P, NO, NO)),
    "delete a role (above dave)": (delete_role, True, (P, P, NO, KEPT)),
    "create a channel": (create_channel, False, (P, P, NO, P)),
    "update a channel": (update_channel, False, (P, P, NO, P)),
    "rename a channel": (rename_channel, False, (P, P, NO, P)),
    "move a channel": (move_channel, False, (P, P, NO, P)),
    "delete a channel": (delete_channel, True, (P, P, NO, P)),
    "create an overwrite": (create_overwrite, False, (P, P, NO, P)),
    "update an overwrite": (update_overwrite, False, (P, P, NO, P)),
    "grant above the caller (BAN_MEMBERS)": (grant_above, False, (P, P, NO, NO)),
    "overwrite above the caller (BAN)": (overwrite_grant_above, False, (P, P, NO, NO)),
    "settings": (settings, False, (P, P, P, P)),
}


def _cell(expected: str, answer: requests.Response, unchanged: bool) -> tuple[bool, str]:
    """Whether the answer is what the platform's client would give, and the matrix's cell."""
    body = answer.json()
    if expected == NO:
        details = body.get("details") or [{"field": "?"}]
        return answer.status_code == 403 and unchanged, f"{answer.status_code} {details[0]['field']}"
    if answer.status_code != 200:
        return False, f"{answer.status_code} {body.get('message', '')[:30]}"
    changed = [item for item in body["plan"] if item["action"] != "keep"]
    kept = [w for w in body["warnings"] if w["rule"] == "kept"]
    if expected == KEPT:
        return bool(kept) and not any(item["action"] == "delete" for item in changed), "200 kept (warned)"
    return bool(changed), f"200 {', '.join(sorted({item['action'] for item in changed}))}"


def test_each_caller_gets_what_the_platforms_client_would_answer_them_with_zero_writes_on_refusals(
    callers: dict[str, Caller],
) -> None:
    rows: list[str] = []
    wrong: list[str] = []
    for change, (apply, prune, expected) in CHANGES.items():
        cells = []
        for (name, caller), outcome in zip(callers.items(), expected, strict=True):
            probe = copy.deepcopy(caller.export().json()["config"])
            apply(probe)
            before, log_size = lab_guild(caller), len(sandbox_log(caller))
            answer = caller.deploy(probe, dry_run=outcome != NO, prune=prune)
            writes = [e for e in sandbox_log(caller)[log_size:] if e["method"] in WRITES]
            ok, cell = _cell(outcome, answer, unchanged=not writes and lab_guild(caller) == before)
            cells.append(cell if ok else f"!! {cell}")
            if not ok:
                wrong.append(f"{change} / {name}: {answer.status_code} {answer.text[:400]} writes={writes}")
        rows.append(f"{change:<38}" + "".join(f"{cell:<44}" for cell in cells))
    header = f"{'change':<38}" + "".join(f"{name + ' (' + CALLERS[name][1] + ')':<44}" for name in callers)
    print("\n" + "\n".join([header, *rows]))
    assert wrong == []


def test_bobs_two_escalations_are_refused_naming_the_field_and_leave_the_guild_unchanged(
    callers: dict[str, Caller],
) -> None:
    bob = callers["bob"]
    config = bob.export().json()["config"]
    before, log_size = lab_guild(bob), len(sandbox_log(bob))

    everyone = copy.deepcopy(config)
    everyone["everyone_permissions"] = [*everyone["everyone_permissions"], "MANAGE_CHANNELS", "MANAGE_ROLES"]
    refused = bob.deploy(everyone)
    assert refused.status_code == 403, refused.text
    [detail] = refused.json()["details"]
    assert detail["field"] == "everyone_permissions"
    assert "you do not hold MANAGE_CHANNELS, MANAGE_ROLES" in detail["message"]

    own_role = copy.deepcopy(config)
    managers = _role(own_role, "Managers")
    managers["permissions"] = [*managers["permissions"], "MANAGE_CHANNELS", "MANAGE_ROLES"]
    refused = bob.deploy(own_role)
    assert refused.status_code == 403, refused.text
    [detail] = refused.json()["details"]
    assert detail["field"] == f"roles[{own_role['roles'].index(managers)}]"
    assert "MANAGE_ROLES" in detail["message"]

    assert lab_guild(bob) == before
    assert [e for e in sandbox_log(bob)[log_size:] if e["method"] in WRITES] == []


@pytest.mark.parametrize("name", ["bob", "dave"])
def test_a_manager_never_sees_the_hidden_channel_and_their_prune_leaves_it(
    callers: dict[str, Caller], name: str
) -> None:
    # bob holds MANAGE_GUILD only; dave could delete channels (MANAGE_CHANNELS): neither can view staff-secrets
    caller = callers[name]
    exported = caller.export()
    planned = caller.deploy(exported.json()["config"], dry_run=True, prune=True)
    for answer in (exported, planned):
        assert answer.status_code == 200, answer.text
        assert HIDDEN_NAME not in answer.text
        assert HIDDEN_TOPIC not in answer.text
        assert "hidden-channels" in {w["rule"] for w in answer.json()["warnings"]}
    assert [item for item in planned.json()["plan"] if item["action"] == "delete"] == []
    # A configuration naming it, by name or by id, is answered exactly as one naming a channel the server does not
    # have (contract v4 §3.1, issue 31 finding 4): never refused for it, so no answer confirms that it exists.
    hidden_id = named(lab_guild(caller)["channels"], HIDDEN_NAME)["id"]
    unknown_id = str(int(LAB) + 999_999)
    log_size = len(sandbox_log(caller))
    for guess, stranger in (
        ({"name": HIDDEN_NAME, "topic": f"{name}'s guess"}, {"name": "never-was", "topic": f"{name}'s guess"}),
        ({"id": hidden_id, "name": "renamed", "topic": "mine"}, {"id": unknown_id, "name": "renamed", "topic": "mine"}),
    ):
        guessed, unknown = (_naming(caller, exported.json()["config"], channel) for channel in (guess, stranger))
        assert _seen(guessed, guess["name"]) == _seen(unknown, stranger["name"]), guessed.text
        assert hidden_id not in guessed.text
        assert HIDDEN_TOPIC not in guessed.text
    # bob may not create channels: refused for the channel it would create, as for any new name; dave's plan creates
    # one beside the hidden channel, which it never touches
    expected = 403 if name == "bob" else 200
    assert guessed.status_code == expected, guessed.text
    if name == "bob":
        assert "MANAGE_CHANNELS" in guessed.json()["details"][0]["message"]
    else:
        assert [(i["kind"], i["action"]) for i in guessed.json()["plan"] if i["name"] == "renamed"] == [
            ("channel", "create")
        ]
    assert [e for e in sandbox_log(caller)[log_size:] if e["method"] in WRITES] == []
    # A prune of what they see leaves it as it is.
    queued = caller.deploy(exported.json()["config"], prune=True)
    assert queued.status_code == 202, queued.text
    assert caller.finished()["status"] == "succeeded"
    hidden = named(lab_guild(caller)["channels"], HIDDEN_NAME)
    assert (hidden["id"], hidden["topic"]) == (hidden_id, HIDDEN_TOPIC)


def _naming(caller: Caller, config: Config, channel: Config) -> requests.Response:
    """The dry run of `config` with one more top-level channel."""
    naming = copy.deepcopy(config)
    naming["channels"].append(channel)
    return caller.deploy(naming, dry_run=True)


def _seen(answer: requests.Response, name: str) -> tuple[int, Any, Any, Any]:
    """What an answer tells its caller about the channel `name` they named: the status, the refusal's details, the
    warnings and the plan's items (the plan's id covers the payload, so it differs with the name and is left out)."""
    body = json.loads(answer.text.replace(name, "<named>"))
    plan = [(i["kind"], i["name"], i["action"], i["id"], i["field"]) for i in body.get("plan") or []]
    return answer.status_code, body.get("details"), body.get("warnings"), plan


def test_granting_everyone_ban_members_needs_the_rules_acknowledgement(callers: dict[str, Caller]) -> None:
    carol = callers["carol"]
    config = carol.export().json()["config"]
    config["everyone_permissions"] = [*config["everyone_permissions"], "BAN_MEMBERS"]
    planned = carol.deploy(config, dry_run=True)
    assert "everyone-permissions-dangerous" in {w["rule"] for w in planned.json()["warnings"]}
    log_size = len(sandbox_log(carol))
    refused = carol.deploy(config)
    assert refused.status_code == 409, refused.text
    assert [(d["field"], d["rule"]) for d in refused.json()["details"]] == [
        ("everyone_permissions", "everyone-permissions-dangerous")
    ]
    assert [e for e in sandbox_log(carol)[log_size:] if e["method"] in WRITES] == []
    queued = carol.deploy(config, acknowledge=["everyone-permissions-dangerous"])
    assert queued.status_code == 202, queued.text
    assert "everyone-permissions-dangerous" in {w.get("rule") for w in queued.json()["warnings"]}
    assert carol.finished()["status"] == "succeeded"
    everyone = named(lab_guild(carol)["roles"], "@everyone")
    assert int(everyone["permissions"]) & (1 << 2), json.dumps(everyone)
