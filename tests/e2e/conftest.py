"""`make run` as a user starts it: `python -m local.run` in a subprocess, spoken to over real HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from local.samples import SAMPLE_CONFIGURATION
from tests.helpers.local_service import (
    PROBE_HANDLER,
    SCRATCH_CONCURRENCY,
    SCRATCH_TEMPLATE,
    START_TIMEOUT_SECONDS,
    WORKER_HANDLER,
    LocalService,
    ScratchService,
    log_tail,
    post_once_warm,
    running,
)


@pytest.fixture(scope="session")
def local_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """The runner on template.yaml and a free port; the time until it first answered a request."""
    with running(tmp_path_factory.mktemp("local-run"), prewarm=True) as (state, started, log_path):
        assert state.get("sample_code"), f"no sample code was minted:\n{log_tail(log_path)}"
        first = post_once_warm(
            f"{state['base_url']}/functions/getConfigByCode",
            {"code": state["sample_code"]},
            {"x-bot-token": state["bot_token"]},
            give_up_seconds=START_TIMEOUT_SECONDS,
        )
        first_answer_seconds = time.monotonic() - started
        assert first.status_code == 200, f"{first.status_code} {first.text}\n{log_tail(log_path)}"
        yield LocalService(state=state, first_answer_seconds=first_answer_seconds, log_path=log_path)


@pytest.fixture(scope="session")
def scratch_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScratchService]:
    """The runner on SCRATCH_TEMPLATE, written with its handlers into a temporary directory."""
    directory = tmp_path_factory.mktemp("scratch-service")
    processed_file = directory / "processed.jsonl"
    (directory / "template.yaml").write_text(SCRATCH_TEMPLATE.replace("PROCESSED_FILE_PATH", str(processed_file)))
    for name, source in (("probe", PROBE_HANDLER), ("jobWorker", WORKER_HANDLER)):
        (directory / "functions" / name).mkdir(parents=True)
        (directory / "functions" / name / "__init__.py").write_text("")
        (directory / "functions" / name / "app.py").write_text(source)
    (directory / "functions" / "__init__.py").write_text("")
    environ, template = {"SVC_LOCAL_CONCURRENCY": str(SCRATCH_CONCURRENCY)}, str(directory / "template.yaml")
    with running(directory, "--template", template, environ=environ, prewarm=True) as (state, _, log_path):
        yield ScratchService(state=state, processed_file=processed_file, log_path=log_path)


@pytest.fixture
def sample_configuration() -> dict[str, Any]:
    return json.loads(json.dumps(SAMPLE_CONFIGURATION))
