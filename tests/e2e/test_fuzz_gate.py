"""The fuzz gate: schemathesis against the committed openapi.json on a running `make run`, every operation in it.

Cases per operation and the seed are bounded and fixed (`FUZZ_CASES`, `FUZZ_SEED`) so that `make test` runs the
same cases in under 3 minutes; `make fuzz` runs the same gate with 1,000 cases per operation. schemathesis runs once
per operation (and per phase for the slow ones), `FUZZ_WORKERS` runs at once: svcAiChat's local model writes each
answer at a real model's pace, and in one run those waits came one after another (868 s). An operation's cases
depend only on the seed and its label, so they are those of one run over the whole document. Every check of
schemathesis runs (no 5xx; statuses, content types, headers and bodies as the document says; schema-valid
requests accepted and invalid ones refused; missing auth headers refused; undeclared methods 405 with `Allow`;
every answer within API Gateway's 29 s; auth never ignored), plus the gate's own (tests/e2e/fuzz_checks.py).
Beside it, every other HTTP method on every path of the document, and on unknown paths, meets the gateway's answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.helpers.local_service import LocalService, running
from tests.helpers.sign_in import http_link

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "openapi.json"
FUZZ_CASES = int(os.environ.get("FUZZ_CASES") or 20)
FUZZ_SEED = int(os.environ.get("FUZZ_SEED") or 20261124)
FUZZ_WORKERS = int(os.environ.get("FUZZ_WORKERS") or 10)  # schemathesis runs at once
PHASES = ("coverage", "fuzzing", "examples")  # per operation, the longest first; "stateful" on the whole document
# The coverage phase's cases of these operations split over this many runs, and each phase of theirs a run of its own,
# all started first and side by side: deployToChat's coverage phase has 2,250 cases (CPU), svcAiChat's ~60 answers
# take ~12 s each (the local model's pace, waited out 8 at once: the runner's sandboxes per function).
COVERAGE_SHARDS = {"/functions/deployToChat": 2, "/functions/svcAiChat": 8}
ALICE = "1191000000000000101"  # a sandbox user with servers: the gate's bearer user is linked to her
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
REQUEST_TIMEOUT_SECONDS = 30
# A response must come within API Gateway's integration timeout (29 s), not schemathesis's default of 10 s: svcAiChat's
# local model writes at a real model's pace, and a first build of a community (onboarding, AutoMod) takes ~12 s.
MAX_RESPONSE_SECONDS = 29
FIRST_REQUEST_TIMEOUT_SECONDS = 120

# A schema-valid request may still be refused with 400 where validity depends on what a document cannot state:
# deployment settings (the allowed invite hosts, the registered redirect URIs), the platform's own state (whether
# an OAuth code was issued), and rules across items (two roles or channels of one name). Every other operation,
# and any that lands later, must accept every schema-valid request.
REFUSES_VALID_SCHEMA_WITH_400 = {
    "POST /functions/chatAuth": "redirect_uri must be a registered one; the code must have been issued",
    "POST /functions/validateChatInvite": "a link must be on one of CHAT_INVITE_HOSTS",
    "POST /functions/deployToChat": "role, category and channel names must be told apart",
    "POST /functions/svcAiChat": "at least one message of role user, or questionnaire_data (a rule across fields)",
}
POSITIVE_STATUSES_WITH_400 = ["2xx", "400", "401", "403", "404", "409"]

OTHER_METHODS = ("GET", "PUT", "PATCH", "DELETE", "HEAD", "TRACE", "CONNECT", "FOO")
UNKNOWN_PATHS = ("/functions/noSuchOperation", "/", "/functions", "/functions/getConfigByCode/extra", "/FUNCTIONS/x")


def operation_paths() -> list[str]:
    return sorted(json.loads(OPENAPI.read_text())["paths"])


@dataclass
class FuzzFigures:
    """What one schemathesis run did, per operation, read from its NDJSON event stream."""

    exit_code: int
    cases: Counter[str] = field(default_factory=Counter)  # generated cases per operation (POST)
    requests: Counter[str] = field(default_factory=Counter)  # requests sent per operation, any method
    server_errors: Counter[str] = field(default_factory=Counter)
    successes: Counter[str] = field(default_factory=Counter)  # 2xx answers per operation
    failed_checks: Counter[str] = field(default_factory=Counter)  # "operation: check" for every failed check
    statuses: Counter[int] = field(default_factory=Counter)

    def add(self, other: FuzzFigures) -> None:
        """Another run's figures into these (the runs cover different operations or phases)."""
        self.exit_code = self.exit_code or other.exit_code
        for mine, theirs in [
            (self.cases, other.cases),
            (self.requests, other.requests),
            (self.server_errors, other.server_errors),
            (self.successes, other.successes),
            (self.failed_checks, other.failed_checks),
        ]:
            mine.update(theirs)
        self.statuses.update(other.statuses)

    @property
    def conformance_failures(self) -> int:
        return sum(count for key, count in self.failed_checks.items() if not key.endswith(": not_a_server_error"))

    def summary(self, title: str) -> str:
        lines = [
            f"{title}: {sum(self.cases.values())} cases, {sum(self.requests.values())} requests, "
            f"{sum(self.server_errors.values())} server errors, {self.conformance_failures} conformance failures "
            f"(seed {FUZZ_SEED}, up to {FUZZ_CASES} cases per operation and phase)"
        ]
        lines += [
            f"  {label:<40} {self.cases[label]:>6} cases  {self.requests[label]:>6} requests  "
            f"{self.server_errors[label]} 5xx"
            for label in sorted(self.requests)
        ]
        lines += [f"  FAILED {key} x{count}" for key, count in sorted(self.failed_checks.items())]
        lines.append(f"  statuses: {dict(sorted(self.statuses.items()))}")
        return "\n".join(lines)


def read_figures(events_file: Path, exit_code: int) -> FuzzFigures:
    figures = FuzzFigures(exit_code=exit_code)
    seen_cases: set[str] = set()
    for line in events_file.read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished["recorder"]
        for case_id, node in (recorder.get("cases") or {}).items():
            case = node["value"]
            if case_id not in seen_cases and case["method"].upper() == "POST":
                seen_cases.add(case_id)
                figures.cases[f"POST {case['path']}"] += 1
        for interaction in (recorder.get("interactions") or {}).values():
            request, response = interaction["request"], interaction.get("response")
            label = f"POST {'/' + request['uri'].split('/', 3)[-1].split('?')[0]}"
            figures.requests[label] += 1
            if response:
                figures.statuses[response["status_code"]] += 1
                if response["status_code"] >= 500:
                    figures.server_errors[label] += 1
                if 200 <= response["status_code"] < 300:
                    figures.successes[label] += 1
        for case_id, checks in (recorder.get("checks") or {}).items():
            case_path = ((recorder.get("cases") or {}).get(case_id) or {}).get("value", {}).get("path", "?")
            for check in checks:
                if check["status"] == "failure":
                    figures.failed_checks[f"POST {case_path}: {check['name']}"] += 1
    return figures


def schemathesis_config(service: LocalService, *, credentials: bool) -> str:
    lines = []
    if credentials:
        lines += [
            "[auth.openapi.bearerAuth]",
            f'bearer = "{service.state["user_token"]}"',
            "[auth.openapi.botToken]",
            f'api_key = "{service.state["bot_token"]}"',
        ]
    lines += [
        "[[operations]]",
        f"include-name = {json.dumps(sorted(REFUSES_VALID_SCHEMA_WITH_400))}",
        f"checks.positive_data_acceptance.expected-statuses = {json.dumps(POSITIVE_STATUSES_WITH_400)}",
    ]
    return "\n".join(lines) + "\n"


def run_schemathesis(
    service: LocalService, directory: Path, *, credentials: bool, extra: tuple[str, ...] = (), shard: str = ""
) -> tuple[FuzzFigures, str]:
    """`schemathesis run` on the committed document against the runner; its figures and its report."""
    directory.mkdir(parents=True, exist_ok=True)
    config, events = directory / "schemathesis.toml", directory / "events.ndjson"
    config.write_text(schemathesis_config(service, credentials=credentials))
    environment = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.e2e.fuzz_checks",
        "FUZZ_BEARER_TOKEN": service.state["user_token"],
        "FUZZ_BOT_TOKEN": service.state["bot_token"],
        "FUZZ_SHARD": shard,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [
        *(sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run", str(OPENAPI)),
        *("--url", service.base_url, "--checks", "all", "--seed", str(FUZZ_SEED)),
        *("--max-examples", str(FUZZ_CASES), "--workers", "1", "--generation-database", "none"),
        *("--request-timeout", str(REQUEST_TIMEOUT_SECONDS), "--max-response-time", str(MAX_RESPONSE_SECONDS)),
        *("--no-color", "--output-truncate", "true"),
        *("--report", "ndjson", "--report-ndjson-path", str(events)),
        *extra,
    ]
    # In its own directory: schemathesis keeps a cache (.schemathesis/) where it runs.
    completed = subprocess.run(command, cwd=directory, env=environment, capture_output=True, text=True, check=False)
    report = completed.stdout[-20000:] + completed.stderr[-5000:]
    assert events.exists(), f"schemathesis wrote no events (exit {completed.returncode}):\n{report}"
    return read_figures(events, completed.returncode), report


@dataclass(frozen=True)
class GateRun:
    """One schemathesis run of the gate: its name, its arguments, and its share of the coverage phase's cases."""

    name: str
    arguments: tuple[str, ...]
    shard: str = ""  # FUZZ_SHARD for tests/e2e/fuzz_checks.py: "k/n", or every case


def gate_runs(phases: tuple[str, ...]) -> list[GateRun]:
    """The schemathesis runs that together cover `phases` on every operation, slowest first."""
    runs: list[GateRun] = []
    split = [path for path in COVERAGE_SHARDS if path in operation_paths()]
    per_operation = [phase for phase in phases if phase != "stateful"]
    for path in [*split, *(path for path in operation_paths() if path not in split)]:
        name = path.rsplit("/", 1)[-1]
        if path not in split:
            runs.append(
                GateRun(
                    f"{name}-{'-'.join(per_operation)}", ("--include-path", path, "--phases", ",".join(per_operation))
                )
            )
            continue
        for phase in per_operation:
            arguments = ("--include-path", path, "--phases", phase)
            shards = COVERAGE_SHARDS[path] if phase == "coverage" else 1
            runs += [
                GateRun(f"{name}-{phase}-{k}", arguments, f"{k}/{shards}" if shards > 1 else "") for k in range(shards)
            ]
    if "stateful" in phases and _declares_links():  # links between operations: on the whole document
        runs.append(GateRun("stateful", ("--phases", "stateful")))
    return runs


def _declares_links() -> bool:
    """Whether a response of the document links to another operation: the stateful phase has nothing to run without
    (a run of that phase alone then fails with "No links for stateful testing"; a run of every phase skips it)."""
    document = json.loads(OPENAPI.read_text())
    operations = [operation for item in document["paths"].values() for operation in item.values()]
    responses = [
        response
        for operation in operations
        if isinstance(operation, dict)
        for response in operation.get("responses", {}).values()
    ]
    return any(response.get("links") for response in responses)


def run_gate(
    service: LocalService, directory: Path, *, credentials: bool, phases: tuple[str, ...], extra: tuple[str, ...] = ()
) -> tuple[FuzzFigures, str]:
    """Every run of `gate_runs`, FUZZ_WORKERS at once; their figures added up, and the reports of those that failed."""
    with ThreadPoolExecutor(max_workers=FUZZ_WORKERS) as pool:
        futures = {
            run.name: pool.submit(
                run_schemathesis,
                service,
                directory / run.name,
                credentials=credentials,
                extra=run.arguments + extra,
                shard=run.shard,
            )
            for run in gate_runs(phases)
        }
        results = {name: future.result() for name, future in futures.items()}
    total = FuzzFigures(exit_code=0)
    reports = []
    for name, (figures, report) in results.items():
        total.add(figures)
        if figures.exit_code or figures.failed_checks or figures.server_errors:
            reports.append(f"==== schemathesis run {name} (exit {figures.exit_code})\n{report}")
    return total, "\n".join(reports) or f"{len(results)} schemathesis runs, none failed"


@pytest.fixture(scope="module")
def fuzz_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """A runner of its own (the fuzzer may deploy to the sandbox's guilds, which other tests read), with the gate's
    bearer user linked to a sandbox user so that getChatGuilds and deployToChat reach their logic."""
    # The AI operations answer from the local model, as they would from the provider (without one: 503).
    # Every function warm at start, as in `make run`: the gate's first runs reach all of them at once.
    ai_run = {"SVC_AI_PROVIDER": "local"}
    with running(tmp_path_factory.mktemp("fuzz-run"), environ=ai_run, prewarm=True) as (state, _, log_path):
        service = LocalService(state=state, first_answer_seconds=0.0, log_path=log_path)
        _link_user(service)
        _warm_up_the_ai_sandboxes(service, COVERAGE_SHARDS["/functions/svcAiChat"])
        yield service


def _warm_up_the_ai_sandboxes(service: LocalService, count: int) -> None:
    """`count` turns at once, so that svcAiChat's sandboxes are up before the gate's runs send theirs side by side:
    a turn that waited for cold starts one after another (the runner starts one at a time) could pass 29 s."""
    body = {"messages": [{"role": "user", "content": "A server for my chess club"}]}

    def turn(_: int) -> requests.Response:
        while True:  # the runner's own 429: no sandbox came free within 29 s, all of them still starting
            answer = requests.post(
                service.url("svcAiChat"),
                json=body,
                headers={"Authorization": f"Bearer {service.state['user_token']}"},
                timeout=FIRST_REQUEST_TIMEOUT_SECONDS,
            )
            if answer.status_code != 429:
                return answer

    with ThreadPoolExecutor(max_workers=count) as pool:
        answers = list(pool.map(turn, range(count)))
    assert [answer.status_code for answer in answers] == [200] * count, [answer.text for answer in answers]


def _link_user(local_service: LocalService) -> None:
    sandbox = local_service.state["chat_api_base_url"].removesuffix("/api/v10")
    http_link(  # the runner's first request: it may wait for a cold start on a busy machine
        local_service.url("chatAuth"),
        {"Authorization": f"Bearer {local_service.state['user_token']}"},
        sandbox,
        ALICE,
        redirect_uri=REDIRECT_URI,
        timeout=FIRST_REQUEST_TIMEOUT_SECONDS,
    )


def _report_figures(record_property: Any, figures: FuzzFigures, title: str) -> None:
    record_property("figures", figures.summary(title))  # printed at the end of the run (tests/e2e/conftest.py)


def test_every_operation_answers_as_openapi_json_says(
    fuzz_service: LocalService, tmp_path: Path, record_property: Any
) -> None:
    # Given valid credentials for both security schemes, when schemathesis runs every phase on every operation
    figures, report = run_gate(fuzz_service, tmp_path / "authenticated", credentials=True, phases=(*PHASES, "stateful"))
    _report_figures(record_property, figures, "fuzz gate")

    # Then every operation was exercised, none answered 5xx, and every check held
    assert set(figures.cases) == {f"POST {path}" for path in operation_paths()}, report
    assert sum(figures.server_errors.values()) == 0, report
    assert figures.conformance_failures == 0, report
    assert figures.exit_code == 0, report


def test_no_operation_answers_2xx_without_its_credentials(
    fuzz_service: LocalService, tmp_path: Path, record_property: Any
) -> None:
    # Given no credentials at all (schemathesis sends none, or values it makes up), when schema-valid bodies are sent
    figures, report = run_gate(
        fuzz_service, tmp_path / "anonymous", credentials=False, phases=("fuzzing",), extra=("--mode", "positive")
    )
    _report_figures(record_property, figures, "fuzz gate without credentials")

    # Then every secured operation refused them (credentials_never_ignored, ignored_auth) and nothing failed
    assert sum(figures.server_errors.values()) == 0, report
    assert figures.conformance_failures == 0, report
    assert figures.exit_code == 0, report
    secured = [f"POST {path}" for path in operation_paths() if _secured(path)]
    assert secured, "openapi.json declares no security: the gate would check nothing"
    assert all(figures.cases[label] > 0 for label in secured), report
    assert {label: figures.successes[label] for label in secured if figures.successes[label]} == {}, report


def _secured(path: str) -> bool:
    document = json.loads(OPENAPI.read_text())
    return bool(document["paths"][path]["post"].get("security", document.get("security")))


def _error_body(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, f"{response.request.method} {response.url}: {response.text}"
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.headers.get("x-request-id")
    if response.request.method == "HEAD":
        assert response.content == b""
        return {}
    body = response.json()
    assert (body["code"], body["requestId"]) == (status, response.headers["x-request-id"])
    assert body["error"] == HTTPStatus(status).phrase
    return body


@pytest.mark.parametrize("method", OTHER_METHODS)
def test_every_other_method_on_an_operation_is_405_with_allow_post(fuzz_service: LocalService, method: str) -> None:
    for path in operation_paths():
        response = requests.request(
            method,
            fuzz_service.base_url + path,
            data=b'{"action": "list"}',
            headers={**fuzz_service.bot_headers, "Content-Type": "application/json"},
            timeout=REQUEST_TIMEOUT_SECONDS,
        )

        _error_body(response, 405)
        assert response.headers["Allow"] == "POST"


@pytest.mark.parametrize("method", ["POST", *OTHER_METHODS, "OPTIONS"])
def test_any_method_on_an_unknown_path_is_404(fuzz_service: LocalService, method: str) -> None:
    # GET / (and HEAD) points at /docs and /openapi.json instead (tests/e2e/test_local_runner.py).
    for path in [path for path in UNKNOWN_PATHS if path != "/" or method not in ("GET", "HEAD")]:
        response = requests.request(method, fuzz_service.base_url + path, json={}, timeout=REQUEST_TIMEOUT_SECONDS)

        _error_body(response, 404)


def test_options_on_an_operation_answers_the_cors_preflight(fuzz_service: LocalService) -> None:
    # The web app calls the API from another origin: its browser asks first, and the function answers (Powertools).
    for path in operation_paths():
        response = requests.options(
            fuzz_service.base_url + path,
            headers={"Origin": "http://127.0.0.1:5173", "Access-Control-Request-Method": "POST"},
            timeout=REQUEST_TIMEOUT_SECONDS,
        )

        assert response.status_code == 204, response.text
        assert "POST" in response.headers["Access-Control-Allow-Methods"].split(",")
        assert response.headers["Access-Control-Allow-Origin"]
        assert response.content == b""


def test_a_request_line_the_server_cannot_read_is_refused_in_the_contract_body(fuzz_service: LocalService) -> None:
    response = requests.get(fuzz_service.base_url + "/functions/" + "x" * 70_000, timeout=REQUEST_TIMEOUT_SECONDS)

    _error_body(response, 414)
