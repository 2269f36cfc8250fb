"""The chat-platform client against the loopback sandbox, over real HTTP: invites, OAuth2, users, guild lists, CDN."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from local.chat_sandbox import SandboxState
from svcconf.chat import (
    ChatClient,
    ChatClientRejected,
    ChatNotConfigured,
    InvalidGrant,
    InvalidUserToken,
    UnknownInvite,
    avatar_url,
    guild_icon_url,
)
from svcconf.settings import Settings
from tests.helpers.chat_sandbox import (
    ALICE_CODE,
    ALICE_ID,
    ALICE_TOKEN,
    BOB_EXPIRED_TOKEN,
    BOB_GUILD,
    BOB_ID,
    BOB_REFRESH,
    BOT_ID,
    BUILD_GUILD,
    CAROL_TOKEN,
    DEMO_GUILD,
    LOCKED_GUILD,
    QUIET_GUILD,
    REDIRECT_URI,
    RIGHTS_LAB,
    chat_settings_for,
    new_chat_client,
    platform_requests,
)

MANAGE_GUILD = 1 << 5

# -- invites ----------------------------------------------------------------------------------


def test_permanent_invite_resolves_with_counts(chat_client: ChatClient, chat_state: SandboxState):
    # When the permanent demo invite is resolved
    invite = chat_client.get_invite("svcDemo")
    # Then it names the guild, never expires and carries the approximate counts
    assert invite.code == "svcDemo"
    assert invite.type == 0
    assert invite.permanent
    assert invite.expires_at is None
    assert invite.guild is not None
    assert invite.guild.id == DEMO_GUILD
    assert invite.guild.name == "Svc Demo Guild"
    assert (invite.approximate_member_count, invite.approximate_presence_count) == (4, 2)
    assert invite.inviter is not None
    assert invite.inviter.id == ALICE_ID
    # And the platform saw one bot-authenticated GET with with_counts=true
    [entry] = chat_state.request_log
    assert (entry["method"], entry["route"], entry["query"], entry["auth"]) == (
        "GET",
        "/invites/{code}",
        "with_counts=true",
        "Bot",
    )


def test_invite_with_a_future_expiry_is_not_permanent(chat_client: ChatClient):
    invite = chat_client.get_invite("Temp2026x", with_counts=False)
    assert not invite.permanent
    assert invite.expires_at is not None
    assert invite.expires_at > datetime.now(UTC)
    assert not invite.is_expired()
    assert invite.approximate_member_count is None
    assert invite.guild is not None
    assert invite.guild.name == "Bob's Workshop"


@pytest.mark.parametrize("code", ["doesNotExist", "Old2024y", "svcdemo", "SVCDEMO"])
def test_unknown_expired_or_miscased_invite_raises_unknown_invite(chat_client: ChatClient, code: str):
    # Given a code that is unknown, expired, or the demo code with its case changed
    # When it is resolved, Then the platform's 10006 becomes UnknownInvite (a 404 for the service)
    with pytest.raises(UnknownInvite) as caught:
        chat_client.get_invite(code)
    assert caught.value.platform_code == 10006
    assert caught.value.platform_status == 404
    assert caught.value.status == 404


def test_invite_lookup_without_a_bot_token_is_anonymous(chat_sandbox, chat_state: SandboxState):
    # Given a client without a bot token
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, SVC_BOT_TOKEN=None))
    # When an invite is resolved, Then it works without an Authorization header
    assert client.get_invite("svcDemo").code == "svcDemo"
    assert chat_state.request_log[0]["auth"] is None


# -- OAuth2 -----------------------------------------------------------------------------------


def test_code_exchange_sends_a_form_with_basic_client_auth(chat_client: ChatClient, chat_state: SandboxState):
    # When alice's pre-issued code is exchanged
    grant = chat_client.exchange_code(ALICE_CODE, REDIRECT_URI)
    # Then tokens come back as secrets, with the scopes and lifetime the platform gave
    assert grant.token_type == "Bearer"
    assert grant.expires_in == 604800
    assert grant.scopes == ["identify", "email", "guilds"]
    assert grant.refresh_token is not None
    assert grant.access_token.get_secret_value() not in repr(grant)
    # And the token endpoint received a form body (never JSON), client credentials in Basic auth
    [entry] = chat_state.requests("POST", "/oauth2/token")
    assert entry["status"] == 200
    assert entry["content_type"] == "application/x-www-form-urlencoded"
    assert entry["auth"] == "Basic"
    assert entry["form_keys"] == ["code", "grant_type", "redirect_uri"]
    # And the new access token identifies alice
    user = chat_client.get_current_user(grant.access_token.get_secret_value())
    assert user.id == ALICE_ID


def test_an_authorization_code_works_once(chat_client: ChatClient):
    chat_client.exchange_code(ALICE_CODE, REDIRECT_URI)
    with pytest.raises(InvalidGrant) as caught:
        chat_client.exchange_code(ALICE_CODE, REDIRECT_URI)
    assert caught.value.status == 400
    assert caught.value.platform_code == "invalid_grant"


def test_a_code_with_another_redirect_uri_is_an_invalid_grant(chat_client: ChatClient, chat_state: SandboxState):
    code = chat_state.mint_code(BOB_ID, REDIRECT_URI)
    with pytest.raises(InvalidGrant):
        chat_client.exchange_code(code, "http://127.0.0.1:9999/elsewhere")


def test_wrong_client_secret_is_client_rejected(chat_sandbox, chat_state: SandboxState):
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, CHAT_CLIENT_SECRET="not-the-secret"))
    with pytest.raises(ChatClientRejected) as caught:
        client.exchange_code(ALICE_CODE, REDIRECT_URI)
    assert caught.value.status == 502
    assert caught.value.platform_status == 401
    assert "not-the-secret" not in str(caught.value)


def test_missing_oauth_client_configuration_sends_nothing(chat_sandbox, chat_state: SandboxState):
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, CHAT_CLIENT_ID=None))
    with pytest.raises(ChatNotConfigured) as caught:
        client.exchange_code(ALICE_CODE, REDIRECT_URI)
    assert caught.value.status == 503
    assert chat_state.request_log == []


def test_refresh_rotates_the_refresh_token(chat_client: ChatClient, chat_state: SandboxState):
    # Given bob's access token has expired
    with pytest.raises(InvalidUserToken) as caught:
        chat_client.get_current_user(BOB_EXPIRED_TOKEN)
    assert caught.value.status == 400  # the service asks the user to sign in again if refreshing fails
    # When his refresh token is used
    grant = chat_client.refresh_token(BOB_REFRESH)
    # Then the new access token works, and the old refresh token is spent
    assert chat_client.get_current_user(grant.access_token.get_secret_value()).id == BOB_ID
    with pytest.raises(InvalidGrant):
        chat_client.refresh_token(BOB_REFRESH)
    assert [entry["form_keys"] for entry in chat_state.requests("POST", "/oauth2/token")] == [
        ["grant_type", "refresh_token"],
        ["grant_type", "refresh_token"],
    ]


def test_a_401_on_a_user_token_is_not_retried(chat_client: ChatClient, chat_state: SandboxState):
    with pytest.raises(InvalidUserToken):
        chat_client.get_current_user("made-up-token")
    assert platform_requests(chat_state) == [("GET", "/users/@me", 401)]


# -- users and guild lists -----------------------------------------------------------------------


def test_current_user_with_email_scope(chat_client: ChatClient, chat_state: SandboxState):
    user = chat_client.get_current_user(ALICE_TOKEN)
    assert (user.id, user.username, user.global_name, user.email, user.verified) == (
        ALICE_ID,
        "alice",
        "Alice",
        "alice@example.com",
        True,
    )
    assert user.avatar_url(cdn_base="https://cdn.chat.test") == (
        f"https://cdn.chat.test/avatars/{ALICE_ID}/8342729096ea3675442027381ff50dfe.png"
    )
    assert chat_state.request_log[0]["auth"] == "Bearer"


def test_current_user_without_email_scope_has_no_email(chat_client: ChatClient):
    carol = chat_client.get_current_user(CAROL_TOKEN)
    assert carol.email is None
    assert carol.verified is None
    assert carol.avatar_url(cdn_base="https://cdn.chat.test").endswith(".gif")  # animated "a_" hash


def test_bot_user_is_read_once_with_the_bot_token(chat_client: ChatClient, chat_state: SandboxState):
    assert chat_client.get_bot_user().id == BOT_ID
    assert chat_client.get_bot_user().bot
    assert [entry["auth"] for entry in chat_state.request_log] == ["Bot"]


def test_user_guilds_carry_ownership_and_permissions(chat_client: ChatClient, chat_state: SandboxState):
    guilds = {guild.id: guild for guild in chat_client.get_current_user_guilds(ALICE_TOKEN)}
    # alice owns the demo and build guilds, is a plain member of bob's, admin in the quiet one and in carol's
    # rights lab, and holds MANAGE_GUILD in the locked one
    assert set(guilds) == {DEMO_GUILD, BOB_GUILD, QUIET_GUILD, LOCKED_GUILD, BUILD_GUILD, RIGHTS_LAB}
    assert guilds[DEMO_GUILD].owner
    assert guilds[BUILD_GUILD].owner
    assert {guild_id: guild.can_manage for guild_id, guild in guilds.items()} == {
        DEMO_GUILD: True,
        BOB_GUILD: False,
        QUIET_GUILD: True,
        LOCKED_GUILD: True,
        BUILD_GUILD: True,
        RIGHTS_LAB: True,
    }
    assert int(guilds[LOCKED_GUILD].permissions) & MANAGE_GUILD
    assert guilds[DEMO_GUILD].icon_url(cdn_base="https://cdn.chat.test") == (
        f"https://cdn.chat.test/icons/{DEMO_GUILD}/1f0b4a3c9d2e8f7a6b5c4d3e2f1a0b9c.png"
    )
    assert guilds[BOB_GUILD].icon_url(cdn_base="https://cdn.chat.test") is None
    [entry] = chat_state.request_log
    assert (entry["auth"], entry["query"]) == ("Bearer", "limit=200")


def test_bot_guilds_are_paged_with_after(chat_client: ChatClient, chat_state: SandboxState):
    # Given pages of 2 (the platform's are 200)
    chat_client.guild_page_size = 2
    # When the bot's guilds are listed
    ids = [guild.id for guild in chat_client.get_bot_guilds()]
    # Then all five come back over three requests, each after the previous page's last id (the last page is short)
    assert ids == [DEMO_GUILD, BOB_GUILD, LOCKED_GUILD, BUILD_GUILD, RIGHTS_LAB]
    assert [entry["query"] for entry in chat_state.request_log] == [
        "limit=2",
        f"limit=2&after={BOB_GUILD}",
        f"limit=2&after={BUILD_GUILD}",
    ]
    assert QUIET_GUILD not in chat_client.bot_guild_ids()


# -- CDN helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_id", "avatar", "discriminator", "expected"),
    [
        (
            "80351110224678912",
            "8342729096ea3675442027381ff50dfe",
            "0",
            "avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png",
        ),
        (
            "80351110224678912",
            "a_1269e74af4df7417b13759eae50c83dc",
            "0",
            "avatars/80351110224678912/a_1269e74af4df7417b13759eae50c83dc.gif",
        ),
        ("80351110224678912", None, "0", f"embed/avatars/{(80351110224678912 >> 22) % 6}.png"),
        ("80351110224678912", None, "1337", "embed/avatars/2.png"),
    ],
)
def test_avatar_url(user_id: str, avatar: str | None, discriminator: str, expected: str):
    assert avatar_url(user_id, avatar, discriminator, cdn_base="https://cdn.chat.test/") == (
        f"https://cdn.chat.test/{expected}"
    )


def test_guild_icon_url_defaults_to_the_configured_cdn(monkeypatch: pytest.MonkeyPatch):
    from svcconf import settings as settings_module

    monkeypatch.setattr(
        settings_module, "get_settings", lambda: Settings.model_validate({"CHAT_CDN_BASE_URL": "https://cdn.local"})
    )
    assert guild_icon_url(DEMO_GUILD, "abc") == f"https://cdn.local/icons/{DEMO_GUILD}/abc.png"
    assert guild_icon_url(DEMO_GUILD, "a_abc", size=64) == f"https://cdn.local/icons/{DEMO_GUILD}/a_abc.gif?size=64"
    assert guild_icon_url(DEMO_GUILD, None) is None
