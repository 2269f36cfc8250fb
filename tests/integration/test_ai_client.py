"""The AI adapter against the fake Messages API over loopback HTTP: the request it sends, what it makes of the
answers (structured output, refusal, truncation, malformed JSON), retries within the time budget, failures mapped
to 503/502/504, and token usage logged and emitted as metrics."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass

import pytest
from pydantic import BaseModel, Field

from local.ai_model import Step
from svcconf.ai import (
    AiFailed,
    AiNotConfigured,
    AiOutputInvalid,
    AiRefused,
    AiTimeout,
    AiTruncated,
    TokenUsage,
    require_provider,
)
from svcconf.ai.client import ask_structured
from svcconf.ai.pace import cache_min_tokens
from svcconf.api import budget
from svcconf.observability import metrics
from svcconf.settings import get_settings
from tests.helpers.ai_provider import TEST_KEY

LONG_SYSTEM = "You answer with a greeting. " * 400  # ~2,800 tokens: above the configured model's cache minimum


class Greeting(BaseModel):
    text: str
    count: int = Field(ge=0, le=10)


@dataclass
class Context:
    remaining_millis: int

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_millis


def ask(**kwargs):
    return ask_structured(
        Greeting, system=kwargs.pop("system", "Greet."), messages=[{"role": "user", "content": "hi"}], **kwargs
    )


def ai_call_logs(caplog: pytest.LogCaptureFixture) -> list[dict]:
    """The `ai call` log lines' fields (what the JSON formatter writes beside the message)."""
    return [
        {name: value for name, value in vars(record).items() if name.startswith("ai_")}
        for record in caplog.records
        if record.getMessage() == "ai call"
    ]


# ---------------------------------------------------------------- the request


def test_the_request_is_structured_output_with_a_cached_system_prompt_and_bearer_auth(fake_provider) -> None:
    fake_provider.script(Step(json={"text": "hello", "count": 2}))

    answer = ask(system="Greet the user.")

    assert answer.output == Greeting(text="hello", count=2)
    [request] = fake_provider.requests
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert request.headers["anthropic-version"] == "2026-10-21"
    body = request.body
    assert body["model"] == "claude-sonnet-5-5"
    assert body["system"] == [
        {"type": "text", "text": "Greet the user.", "cache_control": {"type": "ephemeral", "ttl": "5m"}}
    ]
    schema = body["output_config"]["format"]
    assert schema["type"] == "json_schema"
    assert schema["schema"]["title"] == "Greeting"
    assert schema["schema"]["additionalProperties"] is False
    assert not {"temperature", "top_p", "top_k"} & set(body)


def test_the_models_come_from_the_settings(fake_provider, monkeypatch) -> None:
    monkeypatch.setenv("SVC_AI_MODEL", "claude-opus-5-5")
    monkeypatch.setenv("SVC_TEMPLATE_MODEL", "claude-haiku-4-5")
    get_settings.cache_clear()
    fake_provider.script(Step(json={"text": "a", "count": 1}), Step(json={"text": "b", "count": 1}))

    ask()
    ask(model=get_settings().template_model)

    assert [r.body["model"] for r in fake_provider.requests] == ["claude-opus-5-5", "claude-haiku-4-5"]
    assert get_settings().template_model == "claude-haiku-4-5"


def test_the_default_models_are_sonnet_and_haiku_5_5(monkeypatch) -> None:
    monkeypatch.delenv("SVC_AI_MODEL", raising=False)
    monkeypatch.delenv("SVC_TEMPLATE_MODEL", raising=False)
    get_settings.cache_clear()
    assert (get_settings().ai_model, get_settings().template_model) == ("claude-sonnet-5-5", "claude-haiku-5-5")
    get_settings.cache_clear()


# ---------------------------------------------------------------- usage


def test_usage_is_logged_per_call_with_cache_writes_then_reads(fake_provider, caplog) -> None:
    ask(system=LONG_SYSTEM)
    ask(system=LONG_SYSTEM)

    first, second = ai_call_logs(caplog)
    assert first["ai_usage"]["cache_creation_input_tokens"] >= cache_min_tokens(get_settings().ai_model)
    assert first["ai_usage"]["cache_read_input_tokens"] == 0
    assert second["ai_usage"]["cache_read_input_tokens"] == first["ai_usage"]["cache_creation_input_tokens"]
    assert second["ai_usage"]["cache_creation_input_tokens"] == 0
    assert second["ai_usage"]["input_tokens"] > 0
    assert second["ai_usage"]["output_tokens"] > 0
    assert (first["ai_purpose"], first["ai_status"], first["ai_stop_reason"]) == ("chat", 200, "end_turn")
    assert first["ai_request_id"].startswith("req_local_")


def test_usage_is_emitted_as_metrics(fake_provider) -> None:
    fake_provider.script(
        Step(
            json={"text": "a", "count": 1},
            usage={
                "input_tokens": 11,
                "output_tokens": 7,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 2048,
            },
        )
    )

    answer = ask()

    assert answer.usage == TokenUsage(11, 7, 0, 2048)
    emitted = metrics.serialize_metric_set()
    assert emitted["AiCacheReadTokens"] == [2048.0]
    assert emitted["AiInputTokens"] == [11.0]
    assert emitted["AiOutputTokens"] == [7.0]
    assert emitted["AiCacheWriteTokens"] == [0.0]
    assert emitted["AiCalls"] == [1.0]


def test_a_thinking_block_before_the_text_is_skipped(fake_provider) -> None:
    fake_provider.script(
        Step(
            content=[
                {"type": "thinking", "thinking": "Let me think.", "signature": "sig"},
                {"type": "text", "text": '{"text": "hi", "count": 3}'},
            ]
        )
    )
    assert ask().output.count == 3


# ---------------------------------------------------------------- unusable answers


def test_a_refusal_is_reported_as_such(fake_provider) -> None:
    fake_provider.script(Step(text="I can't help with that.", stop_reason="refusal"))
    with pytest.raises(AiRefused) as raised:
        ask()
    assert raised.value.status == 502
    assert raised.value.text == "I can't help with that."


def test_an_answer_cut_at_max_tokens_is_truncated_not_invalid(fake_provider) -> None:
    fake_provider.script(Step(text='{"text": "hel', stop_reason="max_tokens"))
    with pytest.raises(AiTruncated) as raised:
        ask()
    assert raised.value.usage is not None
    assert raised.value.usage.output_tokens > 0


def test_the_local_model_cuts_an_answer_longer_than_max_tokens(fake_provider) -> None:
    fake_provider.script(Step(json={"text": "x" * 400, "count": 1}))
    with pytest.raises(AiTruncated) as raised:
        ask(max_tokens=50)
    assert len(raised.value.text) == 200  # 50 tokens of 4 characters


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("not json", "body"),
        ('{"text": "hi"}', "count"),
        ('{"text": "hi", "count": 11}', "count"),
        ('{"text": 5, "count": 1}', "text"),
        ("", "body"),
    ],
)
def test_malformed_output_is_invalid_with_the_fields_named(fake_provider, text, field) -> None:
    fake_provider.script(Step(text=text))
    with pytest.raises(AiOutputInvalid) as raised:
        ask()
    assert field in [problem.field for problem in raised.value.problems]
    assert raised.value.text == text
    assert raised.value.status == 502


# ---------------------------------------------------------------- failures, retries and time


@pytest.mark.parametrize("status", [429, 529, 500, 503])
def test_rate_limits_and_overload_are_retried_then_answered(fake_provider, status) -> None:
    fake_provider.script(Step(status=status, headers={"retry-after-ms": "10"}), Step(json={"text": "ok", "count": 1}))

    assert ask().output.text == "ok"
    assert len(fake_provider.requests) == 2


def test_overload_past_the_retries_is_a_502(fake_provider) -> None:
    fake_provider.script(*(Step(status=529, headers={"retry-after-ms": "5"}) for _ in range(5)))
    with pytest.raises(AiFailed) as raised:
        ask()
    assert raised.value.status == 502
    assert len(fake_provider.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
def test_client_errors_are_not_retried(fake_provider, status) -> None:
    fake_provider.script(Step(status=status))
    with pytest.raises(AiFailed):
        ask()
    assert len(fake_provider.requests) == 1


def test_a_retry_after_longer_than_an_interactive_call_can_wait_fails_at_once(fake_provider) -> None:
    fake_provider.script(Step(status=429, headers={"retry-after": "60"}))
    started = time.monotonic()
    with pytest.raises(AiFailed):
        ask()
    assert time.monotonic() - started < 2
    assert len(fake_provider.requests) == 1


def test_a_slow_provider_times_out_at_the_cap_as_504(fake_provider) -> None:
    fake_provider.script(Step(delay=10, json={"text": "late", "count": 1}))
    started = time.monotonic()
    with pytest.raises(AiTimeout) as raised:
        ask(timeout=2.5)
    assert raised.value.status == 504
    assert 2.4 < time.monotonic() - started < 4
    assert len(fake_provider.requests) == 1  # a timeout is not retried: the time is spent


def test_the_invocations_time_left_clips_the_wait(fake_provider) -> None:
    fake_provider.script(Step(delay=10, json={"text": "late", "count": 1}))
    budget.start(Context(remaining_millis=4_000))  # 2.5 s to wait once the answer's margin is kept
    started = time.monotonic()
    with pytest.raises(AiTimeout):
        ask()
    assert 2.3 < time.monotonic() - started < 3.5


def test_no_attempt_is_started_without_time_for_it(fake_provider) -> None:
    budget.start(Context(remaining_millis=2_500))
    with pytest.raises(AiTimeout):
        ask()
    assert fake_provider.requests == []


def test_retries_stop_when_the_budget_has_no_room_for_another_attempt(fake_provider) -> None:
    fake_provider.script(*(Step(status=529, headers={"retry-after": "3"}) for _ in range(3)))
    budget.start(Context(remaining_millis=6_000))  # after a 3 s pause, 1.5 s would be left: not enough
    with pytest.raises(AiFailed):
        ask()
    assert len(fake_provider.requests) == 1


def test_an_unreachable_provider_is_a_502(fake_provider, monkeypatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    get_settings.cache_clear()
    with pytest.raises(AiFailed) as raised:
        ask()
    assert (raised.value.status, str(raised.value)) == (502, "The AI provider failed to answer.")


# ---------------------------------------------------------------- the key


def test_without_a_key_the_provider_is_not_configured(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY_SECRET_ID", raising=False)
    get_settings.cache_clear()
    with pytest.raises(AiNotConfigured) as raised:
        ask()
    assert (raised.value.status, str(raised.value)) == (503, AiNotConfigured.default_message)
    assert "ANTHROPIC_API_KEY" in str(raised.value)  # it names what to set
    get_settings.cache_clear()


def test_the_key_comes_from_secrets_manager_and_an_empty_secret_means_not_configured(
    fake_provider, monkeypatch
) -> None:
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("secretsmanager", region_name="us-east-1")
        with_value = client.create_secret(Name="ai-key", SecretString="key-from-secrets-manager")["ARN"]
        without_value = client.create_secret(Name="ai-key-empty")["ARN"]  # as the template creates it
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        monkeypatch.setenv("ANTHROPIC_API_KEY_SECRET_ID", with_value)
        get_settings.cache_clear()
        fake_provider.script(Step(json={"text": "a", "count": 1}))

        ask()
        assert fake_provider.requests[-1].headers["authorization"] == "Bearer key-from-secrets-manager"

        monkeypatch.setenv("ANTHROPIC_API_KEY_SECRET_ID", without_value)
        get_settings.cache_clear()
        with pytest.raises(AiNotConfigured):
            require_provider()
