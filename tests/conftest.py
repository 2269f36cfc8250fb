"""Shared test setup. moto is imported before anything builds a boto3 client, so every client is mocked."""

from __future__ import annotations

import os
import sys

import moto  # noqa: F401 - must come first: clients built before this import would reach real AWS
import pytest

pytest.register_assert_rewrite("tests.helpers")  # their asserts explain a failure as a test's do

# A test run never reaches AWS or a configured developer account.
for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
    os.environ.pop(name, None)
os.environ.update(
    AWS_ACCESS_KEY_ID="testing",
    AWS_SECRET_ACCESS_KEY="testing",
    AWS_DEFAULT_REGION="us-east-1",
    POWERTOOLS_SERVICE_NAME="server-config-tests",
    POWERTOOLS_METRICS_NAMESPACE="ServerConfigTests",
    POWERTOOLS_LOG_LEVEL="INFO",
)

# `make unit` runs the tests that start nothing (SVC_TESTS_START_NOTHING=1): there, a server or a process is an error.
STARTING_EVENTS = ("socket.bind", "subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.system")


def _refuse_to_start(event: str, args: tuple[object, ...]) -> None:
    if event in STARTING_EVENTS:
        raise RuntimeError(f"{event}: a test of make unit starts no server or process (mark it starts)")


if os.environ.get("SVC_TESTS_START_NOTHING") == "1":
    sys.addaudithook(_refuse_to_start)


@pytest.fixture(autouse=True)
def _no_leftover_time_budget():
    """A handler invoked by an earlier test leaves its invocation's budget behind in this thread: clear it."""
    from svcconf.api import budget

    budget.stop()
    yield
    budget.stop()


# The fake AI provider (the local model over loopback HTTP) for every test that asks for it.
from tests.helpers.ai_provider import fake_provider, local_model_server  # noqa: E402, F401

# Fixtures of this scope that start a server: a test that uses one is marked `starts`, wherever it is.
SERVER_FIXTURES = {"local_model_server"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.starts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Figures that tests record (`record_property("figures", ...)`), printed once at the end, xdist or not; then
    how many test functions ran, beside the cases pytest counts (a parametrised function is one test, many cases).

    Here, not in tests/e2e/: under xdist the controlling process loads only this conftest."""
    _figures(terminalreporter)
    terminalreporter.write_line(_test_functions_line(terminalreporter))


def _test_functions_line(terminalreporter: pytest.TerminalReporter) -> str:
    cases = {
        report.nodeid
        for reports in terminalreporter.stats.values()
        for report in reports
        if isinstance(report, pytest.TestReport)
    }
    functions = {nodeid.partition("[")[0] for nodeid in cases}
    parametrised = {nodeid.partition("[")[0] for nodeid in cases if "[" in nodeid}
    return (
        f"test functions: {len(functions)} ({len(cases)} cases; {len(parametrised)} functions parametrised "
        f"into {sum(1 for nodeid in cases if '[' in nodeid)} of them)"
    )


def _figures(terminalreporter: pytest.TerminalReporter) -> None:
    printed = False
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == "figures" and getattr(report, "when", "call") == "call":
                    if not printed:
                        terminalreporter.section("figures")
                        printed = True
                    terminalreporter.write_line(str(value))
