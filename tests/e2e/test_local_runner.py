"""The local runner end to end: real HTTP in, API Gateway events to the real handlers, moto behind them."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.helpers.sign_in import http_link

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService, ScratchService

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
MAX_SECONDS_TO_FIRST_ANSWER = 60
REQUEST_TIMEOUT_SECONDS = 30


def assert_error_body(response: requests.Response, status: int, error: str) -> dict[str, Any]:
    body = response.json()
    assert response.status_code == status, response.text
    assert body["error"] == error
    assert body["code"] == status
    assert isinstance(body["message"], str)
    assert body["message"]
    assert response.headers.get("x-request-id"), "every answer carries x-request-id"
    return body


def test_make_run_answers_its_first_request_within_60_seconds(
    local_service: LocalService, capsys: pytest.CaptureFixture[str]
) -> None:
    with capsys.disabled():
        print(f"\nlocal.run: first answer {local_service.first_answer_seconds:.2f} s after the process started")

    assert local_service.first_answer_seconds < MAX_SECONDS_TO_FIRST_ANSWER


def test_the_sample_code_resolves_to_its_configuration(
    local_service: LocalService, sample_configuration: dict[str, Any]
) -> None:
    response = local_service.call("getConfigByCode", {"code": local_service.state["sample_code"]})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["configuration"] == sample_configuration
    assert body["project_name"]
    assert response.headers["x-request-id"]


def test_a_wrong_bot_token_is_refused_with_the_secret_from_secrets_manager(local_service: LocalService) -> None:
    response = local_service.call(
        "getConfigByCode", {"code": local_service.state["sample_code"]}, headers={"x-bot-token": "not-the-token"}
    )

    assert_error_body(response, 403, "Forbidden")


def test_of_fifty_concurrent_consumers_exactly_one_gets_the_configuration(
    local_service: LocalService, sample_configuration: dict[str, Any]
) -> None:
    # Given a freshly minted code
    code = local_service.mint_code(sample_configuration)

    # When 50 requests consume it at the same time
    def consume(_: int) -> requests.Response:
        return local_service.call("getConfigByCode", {"code": code, "consume": True})

    with ThreadPoolExecutor(max_workers=50) as pool:
        responses = list(pool.map(consume, range(50)))

    # Then exactly one gets the configuration and the 49 others are told the code is gone
    assert Counter(r.status_code for r in responses) == {200: 1, 404: 49}, [r.text for r in responses[:3]]
    (winner,) = [r for r in responses if r.status_code == 200]
    assert winner.json()["configuration"] == sample_configuration
    for response in responses:
        if response.status_code == 404:
            assert_error_body(response, 404, "Not Found")
    again = local_service.call("getConfigByCode", {"code": code})
    assert_error_body(again, 404, "Not Found")


def test_an_unknown_operation_is_404_in_the_contract_body(local_service: LocalService) -> None:
    response = requests.post(
        local_service.url("noSuchOperation"),
        json={},
        headers=local_service.bot_headers,
        timeout=REQUEST_TIMEOUT_SECONDS,
    )

    body = assert_error_body(response, 404, "Not Found")
    assert body["requestId"] == response.headers["x-request-id"]


def test_get_on_a_known_operation_is_405_in_the_contract_body(local_service: LocalService) -> None:
    response = requests.get(
        local_service.url("getConfigByCode"), headers=local_service.bot_headers, timeout=REQUEST_TIMEOUT_SECONDS
    )

    assert_error_body(response, 405, "Method Not Allowed")


def test_a_text_plain_body_is_415(local_service: LocalService) -> None:
    response = requests.post(
        local_service.url("getConfigByCode"),
        data=json.dumps({"code": local_service.state["sample_code"]}),
        headers={**local_service.bot_headers, "Content-Type": "text/plain"},
        timeout=REQUEST_TIMEOUT_SECONDS,
    )

    assert_error_body(response, 415, "Unsupported Media Type")


def test_a_body_over_api_gateways_10_mb_is_413_without_reaching_the_function(local_service: LocalService) -> None:
    response = requests.post(
        local_service.url("manageBackup"),
        data=b"{" + b" " * (10 * 1024 * 1024) + b"}",
        headers={**local_service.bot_headers, "Content-Type": "application/json"},
        timeout=REQUEST_TIMEOUT_SECONDS,
    )

    assert_error_body(response, 413, "Payload Too Large")


def test_openapi_json_is_served_from_the_repository(local_service: LocalService) -> None:
    response = requests.get(f"{local_service.base_url}/openapi.json", timeout=REQUEST_TIMEOUT_SECONDS)

    committed = ROOT / "openapi.json"
    assert committed.is_file()  # committed, and kept current by make openapi-check
    assert response.status_code == 200
    assert response.json() == json.loads(committed.read_text())


def test_the_root_points_at_the_docs_and_the_document(local_service: LocalService) -> None:
    response = requests.get(f"{local_service.base_url}/", timeout=REQUEST_TIMEOUT_SECONDS)

    assert response.status_code == 200
    body = response.json()
    assert (body["docs"], body["openapi"]) == (
        f"{local_service.base_url}/docs",
        f"{local_service.base_url}/openapi.json",
    )
    assert requests.get(body["openapi"], timeout=REQUEST_TIMEOUT_SECONDS).status_code == 200


def test_a_backup_round_trips_through_create_list_and_get(local_service: LocalService) -> None:
    # Given a guild and its configuration
    guild_id = str(random.randint(10**17, 10**18 - 1))
    backup_data = {
        "roles": [{"name": "Moderator", "permissions": ["KICK_MEMBERS"]}, {"name": "Member"}],
        "categories": [{"name": "Community"}],
        "channels": [{"name": "welcome", "type": "text"}, {"name": "lounge", "type": "voice"}],
        "note": "ünïcödé survives",
    }

    # When it is backed up, listed and fetched
    created = local_service.call(
        "manageBackup", {"action": "create", "guild_id": guild_id, "guild_name": "E2E", "backup_data": backup_data}
    )
    assert created.status_code == 201, created.text
    backup_id = created.json()["data"]["backup_id"]
    listed = local_service.call("manageBackup", {"action": "list", "guild_id": guild_id})
    fetched = local_service.call("manageBackup", {"action": "get", "backup_id": backup_id})

    # Then the list shows it without its data, and get returns the data exactly as sent
    assert created.json()["data"]["roles_count"] == 2
    assert listed.status_code == 200, listed.text
    assert [b["backup_id"] for b in listed.json()["backups"]] == [backup_id]
    assert "backup_data" not in listed.json()["backups"][0]
    assert fetched.status_code == 200, fetched.text
    assert fetched.json()["data"]["backup_data"] == backup_data
    assert fetched.json()["data"]["guild_id"] == guild_id


# ---------------------------------------------------------------- the runner's own machinery (scratch template)


def test_the_function_gets_an_api_gateway_rest_proxy_event(scratch_service: ScratchService) -> None:
    response = scratch_service.call({"hello": "wörld"}, query="?a=1&a=2")

    assert response.status_code == 200, response.text
    event = response.json()["event"]
    assert event["resource"] == event["path"] == "/functions/probe"
    assert event["httpMethod"] == "POST"
    assert event["queryStringParameters"] == {"a": "2"}
    assert event["multiValueQueryStringParameters"] == {"a": ["1", "2"]}
    assert event["pathParameters"] is None
    assert event["stageVariables"] is None
    assert json.loads(event["body"]) == {"hello": "wörld"}
    assert event["isBase64Encoded"] is False
    assert event["multiValueHeaders"]["Content-Type"] == ["application/json"]
    assert event["requestContext"]["stage"] == "local"
    assert event["requestContext"]["resourcePath"] == "/functions/probe"
    assert event["requestContext"]["requestId"] == response.headers["x-request-id"]
    assert 0 < response.json()["remaining_ms"] <= 1000, "the template's Timeout: 1 bounds the context's deadline"


def test_a_function_that_kills_its_sandbox_answers_502_and_the_next_call_succeeds(
    scratch_service: ScratchService,
) -> None:
    crashed = scratch_service.call({"action": "exit"})
    after = scratch_service.call({})

    body = assert_error_body(crashed, 502, "Error")
    assert body["requestId"] == crashed.headers["x-request-id"]
    assert after.status_code == 200, after.text


def test_a_function_past_its_timeout_answers_502_once_the_timeout_is_over(scratch_service: ScratchService) -> None:
    started = time.monotonic()
    response = scratch_service.call({"action": "sleep"})
    elapsed = time.monotonic() - started

    assert_error_body(response, 502, "Error")
    assert 1 <= elapsed < 5, f"answered after {elapsed:.1f} s for a 1 s timeout"


def test_an_unhandled_exception_answers_502_without_its_text(scratch_service: ScratchService) -> None:
    response = scratch_service.call({"action": "raise"})

    assert_error_body(response, 502, "Error")
    assert "internal detail" not in response.text


def test_an_sqs_worker_processes_batches_and_dead_letters_only_the_failures_it_reports(
    scratch_service: ScratchService,
) -> None:
    # Given two good messages and one the worker reports as failed
    sqs = scratch_service.sqs()
    jobs, dead_letters = (scratch_service.state["env"][name] for name in ("JOBS_QUEUE_URL", "DEAD_LETTERS_QUEUE_URL"))
    for body in ("first", "poison", "second"):
        sqs.send_message(QueueUrl=jobs, MessageBody=body)

    # When the poller has fed them to the worker, and the failure has been received past maxReceiveCount
    dead: list[str] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not dead:
        time.sleep(0.5)
        dead = [m["Body"] for m in sqs.receive_message(QueueUrl=dead_letters, WaitTimeSeconds=0).get("Messages", [])]

    # Then the good ones were processed once each and deleted, and only the failure reached the dead-letter queue
    processed = [json.loads(line) for line in scratch_service.processed_file.read_text().splitlines()]
    assert sorted(p["body"] for p in processed) == ["first", "second"]
    assert {p["source"] for p in processed} == {"aws:sqs"}
    assert dead == ["poison"]
    attributes = sqs.get_queue_attributes(QueueUrl=jobs, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == attributes["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_concurrent_callers_scale_the_function_out_up_to_its_cap_and_none_is_throttled(
    scratch_service: ScratchService,
) -> None:
    from tests.helpers.local_service import SCRATCH_CONCURRENCY

    # Given 30 callers at once, each call holding its sandbox 0.4 s (12 s for one sandbox alone)
    def call(_: int) -> requests.Response:
        return scratch_service.call({"action": "pause"})

    with ThreadPoolExecutor(max_workers=30) as pool:
        responses = list(pool.map(call, range(30)))

    # Then all are answered, by more than one sandbox process and never more than the cap
    assert Counter(r.status_code for r in responses) == {200: 30}, [r.text for r in responses if r.status_code != 200]
    pids = {r.json()["pid"] for r in responses}
    assert 2 <= len(pids) <= SCRATCH_CONCURRENCY, pids


def test_a_web_user_signs_in_with_the_chat_platform_and_lists_their_servers(local_service: LocalService) -> None:
    # Given the user token the runner printed and the chat-platform sandbox
    sandbox_root = local_service.state["chat_api_base_url"].removesuffix("/api/v10")
    bearer = {"Authorization": f"Bearer {local_service.state['user_token']}"}
    # When the web app signs in (a sign-in's state, a code for its PKCE challenge), checks an invite and lists the
    # servers, all through the runner
    identity = http_link(local_service.url("chatAuth"), bearer, sandbox_root, "1191000000000000101")
    invite = requests.post(
        local_service.url("validateChatInvite"),
        json={"invite": "https://discord.gg/svcDemo"},
        headers=bearer,
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    guilds = requests.post(local_service.url("getChatGuilds"), headers=bearer, timeout=REQUEST_TIMEOUT_SECONDS)
    # Then each answers as the contract says, the secrets having come from the runner's Secrets Manager
    assert (identity["chatUsername"], identity["linked"]) == ("alice", True)
    assert invite.status_code == 200, invite.text
    assert (invite.json()["valid"], invite.json()["guild_name"]) == (True, "Svc Demo Guild")
    assert guilds.status_code == 200, guilds.text
    assert {guild["name"] for guild in guilds.json()["guilds"]} >= {"Svc Demo Guild", "Bob's Workshop"}


def test_the_runner_stops_without_a_warning_or_an_error(tmp_path: Path) -> None:
    from tests.helpers.local_service import running

    with running(tmp_path, environ={"SVC_AI_PROVIDER": "local"}) as (state, _, log_path):
        answer = requests.post(
            f"{state['base_url']}/functions/getConfigByCode",
            json={"code": state["sample_code"]},
            headers={"x-bot-token": state["bot_token"]},
            timeout=REQUEST_TIMEOUT_SECONDS,
        )
        assert answer.status_code == 200
        time.sleep(1.5)  # the queue pollers are in a long poll, as they are whenever a person stops the runner

    log = log_path.read_text()
    assert "functions, each cold until asked" in log  # a test's runner (SVC_LOCAL_PREWARM=0): the 200 above was
    assert "Shutting down" in log  # getConfigByCode's first sandbox, started on that request
    after = log.split("Shutting down", 1)[1].strip().splitlines()
    assert [line for line in after if "WARNING" in line or "ERROR" in line] == []
