"""Limits per user through the handlers, with the usage table in moto: svcAiChat turns a minute, AI tokens a day,
platform reads a minute, and the users' share of the bot's rate (the sandbox's log shows what reached it)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from svcconf import limits
from svcconf.settings import get_settings
from tests.helpers.ai_chat import user
from tests.helpers.deploy_worker import USER, link
from tests.helpers.handlers import bearer

NOON = datetime(2026, 11, 25, 12, 0, 20, tzinfo=UTC)  # 40 s before the minute ends


@pytest.fixture
def clock(monkeypatch):
    """The limits' clock, moved by the test."""
    now = [NOON]
    monkeypatch.setattr(limits, "utc_now", lambda: now[0])
    monkeypatch.setattr(limits, "_refused_until", {})  # what an earlier test's instance saw refused
    return now


def limit_to(monkeypatch, **values: int) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, str(value))
    get_settings.cache_clear()


def usage_items() -> dict[str, int]:
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(get_settings().usage_table)
    return {item["key"]: int(item["used"]) for item in table.scan()["Items"]}


def counted(usages: list[dict[str, int]]) -> int:
    """What the provider reported, as the day's budget counts it: cache reads at a tenth, rounded up."""
    return sum(
        u["input_tokens"]
        + u["output_tokens"]
        + u["cache_creation_input_tokens"]
        + -(-u["cache_read_input_tokens"] // 10)
        for u in usages
    )


def day_count(sub: str) -> int:
    return usage_items()[f"ai-tokens#{sub}#{int(NOON.timestamp()) // 86_400 * 86_400}"]


def ai(invoke, sub: str, text: str = "A server for my book club"):
    return invoke("svcAiChat", {"messages": [user(text)]}, headers=bearer(sub))


# ---------------------------------------------------------------- svcAiChat turns a minute


def test_the_turn_past_the_minutes_limit_is_429_naming_it_until_the_minute_ends(invoke, chat, clock, monkeypatch):
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=2)
    assert [ai(invoke, "ana").status for _ in range(2)] == [200, 200]
    calls_before = len(chat.requests)

    refused = ai(invoke, "ana")

    assert refused.status == 429
    assert refused.headers["retry-after"] == "40"
    assert refused.body["error"] == "Too Many Requests"
    assert refused.body["limit"] == "SVC_AI_TURNS_PER_MINUTE"
    assert refused.body["retry_after"] == 40
    assert refused.body["frees_at"] == "2026-11-25T12:01:00Z"
    assert "2 svcAiChat turns a minute" in refused.body["message"]
    assert len(chat.requests) == calls_before  # the model was not asked
    assert ai(invoke, "ben").status == 200  # another user is answered at once
    clock[0] += timedelta(seconds=40)
    assert ai(invoke, "ana").status == 200  # the next minute


def test_a_refused_turn_counts_nothing_and_the_instance_refuses_the_rest_of_the_minute_without_a_write(
    invoke, chat, clock, monkeypatch
):
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=1)
    asked = []
    take = limits.UsageCounters.take
    monkeypatch.setattr(limits.UsageCounters, "take", lambda self, key, *a: asked.append(key) or take(self, key, *a))
    ai(invoke, "ana")
    for _ in range(3):
        assert ai(invoke, "ana").status == 429
    turns = {key: used for key, used in usage_items().items() if key.startswith("ai-turns#ana#")}
    assert list(turns.values()) == [1]
    assert len([key for key in asked if key.startswith("ai-turns#")]) == 2  # the turn, then the first refusal
    clock[0] += timedelta(seconds=40)
    assert ai(invoke, "ana").status == 200  # a new minute: asked again


# ---------------------------------------------------------------- AI tokens a day


def test_the_days_tokens_count_the_providers_reported_usage_with_cache_reads_at_a_tenth(invoke, chat, clock):
    ai(invoke, "ana")
    ai(invoke, "ana", "Now with a voice channel")

    assert len(chat.usages) == 2
    assert chat.usages[1]["cache_read_input_tokens"] > 0  # the second turn read the system prompt from the cache
    assert day_count("ana") == counted(chat.usages)


def test_past_the_days_tokens_the_user_is_429_until_midnight_utc(invoke, chat, clock, monkeypatch):
    # v4: a turn reserves its estimate, max_tokens and a repair round before the call, and settles after: a day
    # that holds one reservation answers one turn, and the next (its reservation past what is left) is refused
    reserved = day_reservation(lambda: ai(invoke, "probe"))
    limit_to(monkeypatch, SVC_AI_TOKENS_PER_DAY=reserved + 1_000)
    assert ai(invoke, "ana").status == 200

    refused = ai(invoke, "ana")

    assert refused.status == 429
    seconds_to_midnight = int((datetime(2026, 11, 26, tzinfo=UTC) - NOON).total_seconds())
    assert refused.headers["retry-after"] == str(seconds_to_midnight)
    assert refused.body["limit"] == "SVC_AI_TOKENS_PER_DAY"
    assert refused.body["frees_at"] == "2026-11-26T00:00:00Z"
    assert ai(invoke, "ben").status == 200
    clock[0] = datetime(2026, 11, 26, 0, 0, 1, tzinfo=UTC)
    assert ai(invoke, "ana").status == 200


def day_reservation(turn) -> int:
    """What `turn()` reserved of the day's tokens before its call, from its log line."""
    import logging

    found: list[int] = []
    handler = logging.Handler()
    handler.emit = lambda record: found.extend(
        [record.ai_tokens_reserved] if hasattr(record, "ai_tokens_reserved") else []
    )  # type: ignore[method-assign]
    logging.getLogger().addHandler(handler)
    try:
        assert turn().status == 200
    finally:
        logging.getLogger().removeHandler(handler)
    [reserved] = found
    return reserved


def test_a_failed_turn_still_counts_what_the_provider_reported(invoke, chat, clock):
    from local.ai_model.server import Step

    chat.script(Step(text="not json"), Step(text="still not json"))
    ai(invoke, "ana")
    assert len([r for r in chat.requests if r.path == "/v1/messages"]) == 2  # the turn and its repair round
    assert day_count("ana") == counted(chat.usages)


# ---------------------------------------------------------------- platform reads a minute


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def test_export_import_dry_run_and_invites_share_the_minutes_platform_reads(invoke, linked, clock, monkeypatch):
    from tests.helpers.deploy_worker import DEMO

    limit_to(monkeypatch, SVC_PLATFORM_READS_PER_MINUTE=4)
    deploy = invoke("deployToChat", {"action": "export", "guild_id": DEMO}, headers=bearer(USER))
    assert deploy.status == 200
    config = deploy.body["config"]
    answers = [
        invoke("deployToChat", {"action": "import", "template": "svcStudyHall"}, headers=bearer(USER)).status,
        invoke(
            "deployToChat",
            {
                "action": "deploy",
                "dry_run": True,
                "guild_id": DEMO,
                "config": config,
                "project_id": "p1",
                "project_name": "P",
            },
            headers=bearer(USER),
        ).status,
        invoke("validateChatInvite", {"invite": "svcDemo"}, headers=bearer(USER)).status,
        invoke("deployToChat", {"action": "info", "project_id": "p1"}, headers=bearer(USER)).status,  # not a read
    ]
    assert answers == [200, 200, 200, 404]
    sent = len(linked.requests())

    refused = invoke("deployToChat", {"action": "import", "template": "svcGameNight"}, headers=bearer(USER))

    assert refused.status == 429
    assert refused.body["limit"] == "SVC_PLATFORM_READS_PER_MINUTE"
    assert refused.headers["retry-after"] == "40"
    assert len(linked.requests()) == sent  # the bot sent nothing for it
    assert invoke("validateChatInvite", {"invite": "svcDemo"}, headers=bearer("other-user")).status == 200
    clock[0] += timedelta(seconds=41)
    assert invoke("deployToChat", {"action": "import", "template": "svcGameNight"}, headers=bearer(USER)).status == 200


# ---------------------------------------------------------------- the users' share of the bot's rate


def test_past_the_users_share_of_a_second_the_request_is_503_and_the_platform_sees_nothing(
    invoke, platform, clock, monkeypatch
):
    limit_to(monkeypatch, CHAT_USER_REQUESTS_PER_SECOND=2)
    monkeypatch.setattr(limits, "MAX_SHARE_WAIT_SECONDS", 0.2)  # the clock stands still: the next second never comes
    answers = [invoke("validateChatInvite", {"invite": f"code{n}x"}, headers=bearer(f"user-{n}")) for n in range(3)]

    assert [answer.status for answer in answers] == [200, 200, 503]
    assert answers[2].headers["retry-after"] == "1"
    assert "CHAT_USER_REQUESTS_PER_SECOND" in answers[2].body["message"]
    assert len(platform.requests("GET", "/invites/{code}")) == 2
    clock[0] += timedelta(seconds=1)
    assert invoke("validateChatInvite", {"invite": "code9x"}, headers=bearer("user-9")).status == 200


# ---------------------------------------------------------------- public lookups kept briefly


def test_a_template_and_an_invite_asked_by_many_users_cost_the_bot_one_request_each(invoke, platform):
    for n in range(3):
        imported = invoke("deployToChat", {"action": "import", "template": "svcStudyHall"}, headers=bearer(f"u{n}"))
        assert imported.status == 200
        assert imported.body["source"]["code"] == "svcStudyHall"
        invite = invoke("validateChatInvite", {"invite": "svcDemo"}, headers=bearer(f"u{n}"))
        assert invite.body["guild_name"] == "Svc Demo Guild"
    assert len(platform.requests("GET", "/guilds/templates/{code}")) == 1
    assert len(platform.requests("GET", "/invites/{code}")) == 1


def test_an_unknown_template_is_asked_again_each_time(invoke, platform):
    for _ in range(2):
        assert invoke("deployToChat", {"action": "import", "template": "noSuchCode"}, headers=bearer()).status == 404
    assert len(platform.requests("GET", "/guilds/templates/{code}")) == 2


def test_a_very_long_subject_is_counted_under_its_digest(invoke, chat, clock, monkeypatch):
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=1)
    long_sub = "user-" + "x" * 3000  # past what a DynamoDB key holds
    assert ai(invoke, long_sub).status == 200
    assert ai(invoke, long_sub).status == 429
    digest = hashlib.sha256(long_sub.encode()).hexdigest()
    minute = int(NOON.timestamp()) // 60 * 60
    assert [key for key in usage_items() if key.startswith("ai-turns#")] == [f"ai-turns#sha256:{digest}#{minute}"]
