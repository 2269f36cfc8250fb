"""No default wait outlasts a function: what a chat call may take, read beside template.yaml's timeouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from local.function_environment import raw_environment
from local.resources import all_functions
from local.template import load_template
from svcconf.api import budget
from svcconf.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")


@pytest.mark.parametrize("function", all_functions(TEMPLATE), ids=lambda function: function.logical_id)
def test_one_chat_call_with_the_defaults_ends_before_its_function_does(function):
    # Given the function's settings as the template sets them (literal values only; the rest are defaults)
    literal = {
        name: value
        for name, value in raw_environment(TEMPLATE, function.logical_id).items()
        if isinstance(value, str | int | float) and name.startswith("CHAT_")
    }
    settings = Settings.model_validate(literal)
    # Then one call (requests, rate-limit waits and retries) and the margin to answer fit in its timeout,
    # even before svcconf.api.budget clips the call to the invocation's time left
    assert settings.chat_timeout_seconds <= settings.chat_max_wait_seconds
    assert settings.chat_max_wait_seconds + budget.ANSWER_MARGIN_SECONDS < function.timeout
