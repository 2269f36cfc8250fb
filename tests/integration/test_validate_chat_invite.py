"""validateChatInvite against the chat-platform sandbox over HTTP: links, codes, expiry, refusals, failures."""

from __future__ import annotations

from datetime import timedelta

import pytest

from svcconf import invites
from svcconf.clock import utc_now
from tests.helpers.handlers import bearer

DEMO_GUILD = "1191000000000001001"


def check(invoke, invite, **kwargs):
    return invoke("validateChatInvite", {"invite": invite}, headers=bearer(), **kwargs)


def test_permanent_invite_is_valid_with_its_server_and_member_count(invoke, platform):
    response = check(invoke, "svcDemo")
    assert response.status == 200
    assert response.body == {
        "valid": True,
        "permanent": True,
        "expired": False,
        "guild_name": "Svc Demo Guild",
        "member_count": len(platform.guild(DEMO_GUILD)["members"]),
        "expires_at": None,
        "reason": None,
        "code": "svcDemo",
    }
    [lookup] = platform.requests("GET", "/invites/{code}")
    assert "with_counts=true" in lookup["query"]
    assert lookup["auth"] == "Bot"


def test_invite_with_an_expiry_is_valid_and_not_permanent(invoke, platform):
    body = check(invoke, "Temp2026x").body
    assert (body["valid"], body["permanent"], body["expired"]) == (True, False, False)
    assert body["guild_name"] == "Bob's Workshop"
    assert body["expires_at"] > utc_now().isoformat()


@pytest.mark.parametrize(
    "link",
    [
        "https://discord.gg/svcDemo",
        "discord.gg/svcDemo",
        "http://discord.gg/svcDemo/",
        "https://discord.gg/invite/svcDemo",
        "https://discord.com/invite/svcDemo?event=1191000000000009999",
        "https://www.discordapp.com/invite/svcDemo#top",
        "  https://canary.discord.com/invite/svcDemo  ",
    ],
)
def test_links_on_the_platforms_hosts_resolve_to_their_code(invoke, platform, link):
    response = check(invoke, link)
    assert response.status == 200
    assert (response.body["valid"], response.body["code"]) == (True, "svcDemo")


def test_codes_keep_their_case(invoke, platform):
    response = check(invoke, "svcdemo")
    assert response.body["valid"] is False
    [lookup] = platform.requests("GET", "/invites/{code}")
    assert lookup["path"].endswith("/invites/svcdemo")


@pytest.mark.parametrize("gone", ["Old2024y", "NoSuchInvite1"])
def test_unknown_or_expired_invite_is_answered_invalid_not_as_an_error(invoke, platform, gone):
    response = check(invoke, gone)
    assert response.status == 200
    assert response.body["valid"] is False
    assert response.body["expired"] is False
    assert response.body["reason"] == "The invitation does not exist, expired or was revoked."


def test_invite_the_platform_still_returns_past_its_expiry_is_expired(invoke, platform, monkeypatch):
    # Given an invite that expires in 7 days, checked 8 days from now (the platform had not dropped it yet)
    later = utc_now() + timedelta(days=8)
    monkeypatch.setattr(invites, "utc_now", lambda: later)
    body = check(invoke, "Temp2026x").body
    assert (body["valid"], body["expired"], body["reason"]) == (False, True, "The invitation has expired.")
    assert body["guild_name"] == "Bob's Workshop"


@pytest.mark.parametrize(
    "invite",
    [
        "",
        "x",
        "not a code!",
        "https://evil.example/invite/svcDemo",
        "https://discord.gg.evil.example/svcDemo",
        "ftp://discord.gg/svcDemo",
        "https://discord.gg:8443/svcDemo",
        "https://discord.gg/a/b",
        "https://discord.gg/",
        "https://discord.gg/bad*code",
        '".\u00da[\u00fc>',  # urlsplit: "Invalid IPv6 URL" (a 500 the fuzz gate found)
        "a" * 201,
        42,
        None,
        # text that breaks URL parsing: odd ports, brackets, full-width characters, other schemes
        "https://discord.gg:99999/svcDemo",
        "https://discord.gg:/svcDemo",
        "https://discord.gg:-1/svcDemo",
        "discord.gg:abc/svcDemo",
        "https://[discord.gg/svcDemo",
        "https://discord.gg]/svcDemo",
        "http://[::1]/svcDemo",
        "https://\uff44\uff49\uff53\uff43\uff4f\uff52\uff44.gg/svcDemo",
        "https://discord.gg\uff0fsvcDemo",
        "https://discord.gg\uff03@evil.example/svcDemo",
        "discord\uff0egg/svcDemo",
        "javascript:alert(1)",
        "mailto:svcDemo@discord.gg",
        "data:text/html,svcDemo",
        "https://user@discord.gg/svcDemo",
        "https://discord.gg@evil.example/svcDemo",
        # urllib deletes tabs and newlines: the code they split must not come out whole
        "discord.gg/svc\tDemo",
        "https://discord.gg/svc\nDemo",
        "https://discord.gg/svcDemo\x00",
    ],
)
def test_anything_but_a_code_or_an_invite_link_is_rejected_naming_invite(invoke, platform, invite):
    response = check(invoke, invite)
    assert response.status == 400, response.body
    assert [detail["field"] for detail in response.body["details"]] == ["invite"]
    assert platform.requests("GET", "/invites/{code}") == []


def test_platform_failing_past_the_retries_is_502(invoke, platform):
    platform.configure(error_5xx_probability=1.0)
    response = check(invoke, "svcDemo")
    assert response.status == 502
    assert response.body["error"] == "Error"
    assert response.body["code"] == 502
    assert "requestId" in response.body
    assert 1 < len(platform.requests("GET", "/invites/{code}")) <= 4  # bounded retries


def test_platform_rate_limiting_30_percent_of_requests_still_answers(invoke, platform):
    platform.configure(rate_limit_probability=0.3, seed=11, fault_retry_after=[0.01, 0.05])
    answers = [check(invoke, "svcDemo") for _ in range(20)]
    assert all(answer.status == 200 and answer.body["valid"] for answer in answers)
    assert len(platform.requests("GET", "/invites/{code}")) < 2 * 20


def test_bearer_token_is_required(invoke, platform):
    response = invoke("validateChatInvite", {"invite": "svcDemo"}, drop_headers=("Authorization",))
    assert response.status == 401
    assert response.body["error"] == "Unauthorized"
    assert platform.requests() == []
