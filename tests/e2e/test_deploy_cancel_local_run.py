"""Issue 31, findings 6 and 12, through `make run` over HTTP: dave, the lowest manager of the sandbox's rights lab,
deploys one channel past the creation quota so it waits; the owner's dry run is answered meanwhile and her deploy is
refused naming his deployment; she cancels it and her deploy runs; `info` names a deployment by its id and answers
the history."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from local.settings import LOCAL_JWT_SECRET
from local.tokens import issue_token
from tests.helpers.e2e_deployer import DEPLOY_TIMEOUT_SECONDS, REDIRECT_URI, WRITES
from tests.helpers.local_service import LocalService, running
from tests.helpers.sign_in import http_link

pytestmark = pytest.mark.e2e

LAB, LAB_NAME = "1191000000000001006", "Carol's Rights Lab"
DAVE, CAROL = "1191000000000000104", "1191000000000000103"


class Caller:
    """A seeded user of the sandbox, signed in with a bearer token of their own and linked."""

    def __init__(self, service: LocalService, name: str, chat_id: str):
        self.service, self.name = service, name
        self.sandbox = service.state["chat_api_base_url"].removesuffix("/api/v10")
        env = service.state["env"]
        token = issue_token(
            LOCAL_JWT_SECRET,
            f"cancel-{name}",
            issuer=env.get("SVC_JWT_ISSUER") or None,
            audience=env.get("SVC_JWT_AUDIENCE") or None,
        )
        self.bearer = {"Authorization": f"Bearer {token}"}
        http_link(self.service.url("chatAuth"), self.bearer, self.sandbox, chat_id, redirect_uri=REDIRECT_URI)

    def call(self, body: dict[str, Any], operation: str = "deployToChat") -> requests.Response:
        return requests.post(self.service.url(operation), json=body, headers=self.bearer, timeout=60)

    def deploy(self, config: dict[str, Any], **extra: Any) -> requests.Response:
        body = {"action": "deploy", "guild_id": LAB, "project_id": f"cancel-{self.name}", "project_name": "Cancel"}
        return self.call({**body, "config": config, **extra})

    def info(self, **extra: Any) -> dict[str, Any]:
        answer = self.call({"action": "info", "project_id": f"cancel-{self.name}", **extra})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def until(self, statuses: tuple[str, ...]) -> dict[str, Any]:
        deadline = time.monotonic() + DEPLOY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            info = self.info()
            if info["status"] in statuses:
                return info
            time.sleep(0.5)
        raise AssertionError(f"not {statuses} within {DEPLOY_TIMEOUT_SECONDS} s: {info}")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """A runner of its own: this test uses up the lab's channel quota."""
    with running(tmp_path_factory.mktemp("cancel-run")) as (state, started, log_path):
        yield LocalService(state=state, first_answer_seconds=time.monotonic() - started, log_path=log_path)


def writes_since(caller: Caller, start: int) -> list[tuple[str, str]]:
    log = requests.get(f"{caller.sandbox}/_sandbox/log", timeout=30).json()["requests"][start:]
    return [(entry["method"], entry["route"]) for entry in log if entry["method"] in WRITES]


def log_size(caller: Caller) -> int:
    return len(requests.get(f"{caller.sandbox}/_sandbox/log", timeout=30).json()["requests"])


def test_the_owner_cancels_the_lowest_managers_waiting_deployment_and_hers_then_runs(service: LocalService) -> None:
    dave, carol = Caller(service, "dave", DAVE), Caller(service, "carol", CAROL)
    used = requests.post(f"{dave.sandbox}/_sandbox/guilds/{LAB}/quota", json={"channels": 500}, timeout=30)
    assert used.status_code == 200, used.text

    queued = dave.deploy({"name": LAB_NAME, "channels": [{"name": "dave-notes"}]})
    assert queued.status_code == 202, queued.text
    waiting = dave.until(("waiting", "succeeded", "partial", "failed"))
    assert waiting["status"] == "waiting", waiting
    dave_id = queued.json()["deployment_id"]
    print(f"\ndave's deployment {dave_id}: waiting, resumes_at {waiting['resumes_at']}")

    lounge = {"name": LAB_NAME, "channels": [{"name": "lounge", "topic": "Carol's corner"}]}
    planned = carol.deploy(lounge, dry_run=True)
    refused = carol.deploy(lounge)
    print(f"the owner's dry run while it waits: {planned.status_code}; her deploy: {refused.status_code}")
    assert planned.status_code == 200, planned.text
    assert refused.status_code == 409, refused.text
    assert refused.json()["deployment_id"] == dave_id
    print(f"409: {refused.json()['message']}")

    start = log_size(carol)
    cancelled = carol.call({"action": "cancel", "deployment_id": dave_id})
    assert cancelled.status_code == 200, cancelled.text
    assert (cancelled.json()["status"], cancelled.json()["deployment_id"]) == ("cancelled", dave_id)
    assert writes_since(carol, start) == []
    assert dave.info()["status"] == "cancelled"
    print(f"cancel by the owner: 200, {cancelled.json()['generation']['result']}")

    again = carol.deploy(lounge)
    assert again.status_code == 202, again.text
    done = carol.until(("succeeded", "partial", "failed"))
    assert done["status"] == "succeeded", done
    print(f"the owner's deploy after the cancel: {again.status_code}, then {done['status']}")

    history = dave.info(deployment_id=dave_id)["history"]
    assert [(entry["deployment_id"], entry["status"]) for entry in history] == [(dave_id, "cancelled")]
