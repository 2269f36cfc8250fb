"""svcAiChat's turns at a real model's pace: output tokens, modelled time, and the whole turn through `make run`
(see bench/ai.py, which runs this after the init figures)."""

from __future__ import annotations

import time
from typing import Any

import requests

from bench.quick import QUICK
from bench.service import local_service
from local.ai_model import LOCAL_API_KEY, start_local_model
from local.environ import environment
from local.samples import large_community

EDIT = "Add a text channel named memes-corner to Area 1"
TEN_BY_TEN = "Add ten categories with ten channels each"
# (label, currentConfig, message, questionnaire)
CASES: list[tuple[str, dict[str, Any] | None, str | None, dict[str, Any] | None]] = [
    ("edit, 10 roles / 25 channels", large_community(10, 5, 25), EDIT, None),
    ("edit, 40 roles / 120 channels", large_community(40, 8, 120), EDIT, None),
    ("edit, 250 roles / 490 channels", large_community(250, 10, 480), EDIT, None),
    ("first build, 5 roles / 15 channels", None, None, {"purpose": "gaming", "roles": 5, "channels": 15}),
    ("first build, 20 roles / 60 channels", None, None, {"purpose": "gaming", "roles": 20, "channels": 60}),
    ("ten categories of ten, 250 / 390", large_community(250, 10, 380), TEN_BY_TEN, None),
]
if QUICK:  # one edit and the 20/60 build (the summary's), the local model answering at once
    CASES = [CASES[0], CASES[4]]
EDIT_GOAL_TOKENS, EDIT_GOAL_SECONDS, BUILD_GOAL_TOKENS, FUNCTION_SECONDS = 300, 8.0, 1200, 26.0


def _body(config: dict[str, Any] | None, message: str | None, questionnaire: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": message}] if message else []}
    if config is not None:
        body["currentConfig"] = config
    if questionnaire is not None:
        body["questionnaire_data"] = questionnaire
    return body


def output_tokens(body: dict[str, Any]) -> tuple[int, str | None]:
    """The output tokens of the service's request for this turn (the local model answering at once)."""
    from svcconf.ai.client import ask_structured
    from svcconf.ai.errors import AiTruncated
    from svcconf.ai.pace import turn_max_tokens
    from svcconf.ai.usage import TokenUsage
    from svcconf.api import budget
    from svcconf.config import ServerConfig
    from svcconf.conversation.envelope import ChatTurn
    from svcconf.conversation.models import ChatMessage
    from svcconf.conversation.prompt import SYSTEM_PROMPT, build_messages
    from svcconf.conversation.turn import REPAIR_TOKENS
    from svcconf.observability import logger
    from svcconf.settings import get_settings

    logger.setLevel("WARNING")  # the "ai call" lines would bury the figures
    server = start_local_model(tokens_per_second=0)
    try:
        with environment({"ANTHROPIC_API_KEY": LOCAL_API_KEY, "ANTHROPIC_BASE_URL": server.base_url}):
            get_settings.cache_clear()
            budget.start(type("Context", (), {"get_remaining_time_in_millis": lambda _self: 26_000})())
            config = body.get("currentConfig")
            known = (
                ServerConfig.model_validate(config).model_dump(mode="json", exclude_defaults=True) if config else None
            )
            messages = [ChatMessage.model_validate(m) for m in body["messages"]]
            max_tokens = turn_max_tokens(reserve_tokens=REPAIR_TOKENS)
            prompt = build_messages(messages, known, None, body.get("questionnaire_data"), [], max_tokens)
            usage: TokenUsage | None
            try:
                answer = ask_structured(ChatTurn, system=SYSTEM_PROMPT, messages=prompt, max_tokens=max_tokens)
                usage, stop = answer.usage, answer.stop_reason
            except AiTruncated as cut:
                usage, stop = cut.usage, "max_tokens"
            return (usage.output_tokens if usage else 0), stop
    finally:
        budget.stop()
        get_settings.cache_clear()
        server.shutdown()


def _whole_turn(state: dict[str, Any], body: dict[str, Any]) -> tuple[float, int]:
    headers = {"Authorization": f"Bearer {state['user_token']}"}
    url = f"{state['base_url']}/functions/svcAiChat"
    started = time.monotonic()
    response = requests.post(url, json=body, headers=headers, timeout=60)
    return time.monotonic() - started, response.status_code


def run() -> None:
    from svcconf.ai.pace import seconds_to_write

    figures = [
        (label, body, *output_tokens(body))
        for label, config, message, questionnaire in CASES
        for body in [_body(config, message, questionnaire)]
    ]
    print("\nsvcAiChat turns at a real model's pace (1.8 s to the first token, then 63 tokens/s)")
    print(f"  {'':40} {'output tokens':>14} {'modelled':>9} {'whole turn (make run)':>22}")
    pace = {"SVC_LOCAL_MODEL_TOKENS_PER_SECOND": "0"} if QUICK else {}
    with environment({"SVC_AI_PROVIDER": "local", **pace}), local_service() as state:
        _whole_turn(state, figures[0][1])  # the function's first sandbox started (a cold start is not a turn's)
        for label, body, tokens, stop in figures:
            seconds, status = _whole_turn(state, body)
            cut = " (cut at max_tokens)" if stop == "max_tokens" else ""
            print(f"  {label:40} {tokens:>14,} {seconds_to_write(tokens):>8.1f}s {seconds:>12.1f}s, {status}{cut}")
    edits = [f for f in figures if f[0].startswith("edit")]
    build = next(f for f in figures if f[0].startswith("first build, 20"))
    print(
        f"  goals: an edit <= {EDIT_GOAL_TOKENS} tokens and <= {EDIT_GOAL_SECONDS:.0f} s "
        f"(largest: {max(f[2] for f in edits)} tokens, {max(seconds_to_write(f[2]) for f in edits):.1f} s modelled); "
        f"a 20/60 build <= {BUILD_GOAL_TOKENS:,} tokens ({build[2]:,}) within {FUNCTION_SECONDS:.0f} s"
    )
