"""The chat-platform client against the loopback sandbox, over real HTTP."""

from __future__ import annotations

import logging
import re
import socket
import time
from datetime import UTC, datetime

import pytest

from local.chat_sandbox import SandboxState
from svcconf.chat import (
    USER_AGENT,
    ChatBlocked,
    ChatClient,
    ChatClientRejected,
    ChatError,
    ChatInvalidRequest,
    ChatLimitReached,
    ChatNotConfigured,
    ChatRateLimited,
    ChatTimeout,
    ChatUnavailable,
    InvalidGrant,
    InvalidUserToken,
    MissingAccess,
    MissingPermissions,
    UnknownChannel,
    UnknownGuild,
    UnknownInvite,
    UnknownMember,
    UnknownOverwrite,
    UnknownRole,
    avatar_url,
    guild_icon_url,
)
from svcconf.settings import Settings
from tests.integration.chat_conftest_helpers import (
    ALICE_CODE,
    ALICE_ID,
    ALICE_REFRESH,
    ALICE_TOKEN,
    BOB_EXPIRED_TOKEN,
    BOB_GUILD,
    BOB_ID,
    BOB_REFRESH,
    BOT_ID,
    BUILD_GUILD,
    CAROL_TOKEN,
    DEMO_GUILD,
    INFO_CATEGORY,
    LOCKED_GUILD,
    QUIET_GENERAL,
    QUIET_GUILD,
    REDIRECT_URI,
    SECRETS,
    chat_settings_for,
    new_chat_client,
)

VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
MANAGE_GUILD = 1 << 5


def platform_requests(state: SandboxState) -> list[tuple[str, str | None, int]]:
    return [(entry["method"], entry["route"], entry["status"]) for entry in state.request_log]


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
    # alice owns the demo and build guilds, is a plain member of bob's, admin in the quiet one,
    # and holds MANAGE_GUILD in the locked one
    assert set(guilds) == {DEMO_GUILD, BOB_GUILD, QUIET_GUILD, LOCKED_GUILD, BUILD_GUILD}
    assert guilds[DEMO_GUILD].owner
    assert guilds[BUILD_GUILD].owner
    assert {guild_id: guild.can_manage for guild_id, guild in guilds.items()} == {
        DEMO_GUILD: True,
        BOB_GUILD: False,
        QUIET_GUILD: True,
        LOCKED_GUILD: True,
        BUILD_GUILD: True,
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
    # Then all four come back over three requests, each after the previous page's last id (the last page is empty)
    assert ids == [DEMO_GUILD, BOB_GUILD, LOCKED_GUILD, BUILD_GUILD]
    assert [entry["query"] for entry in chat_state.request_log] == [
        "limit=2",
        f"limit=2&after={BOB_GUILD}",
        f"limit=2&after={BUILD_GUILD}",
    ]
    assert QUIET_GUILD not in chat_client.bot_guild_ids()


# -- guild structure ---------------------------------------------------------------------------


def test_guild_comes_with_its_roles(chat_client: ChatClient):
    guild = chat_client.get_guild(DEMO_GUILD, with_counts=True)
    assert guild.owner_id == ALICE_ID
    assert guild.approximate_member_count == 4
    everyone = next(role for role in guild.roles if role.is_everyone(DEMO_GUILD))
    assert everyone.position == 0
    bot_role = next(role for role in guild.roles if role.managed)
    assert bot_role.bot_id == BOT_ID


def test_guild_without_the_bot_is_unknown(chat_client: ChatClient):
    with pytest.raises(UnknownGuild) as caught:
        chat_client.get_guild(QUIET_GUILD)
    assert caught.value.platform_code == 10004


def test_guild_member_and_unknown_member(chat_client: ChatClient):
    member = chat_client.get_guild_member(DEMO_GUILD, BOB_ID)
    assert member.user is not None
    assert member.user.id == BOB_ID
    assert member.roles == ["1191000000000002012"]
    with pytest.raises(UnknownMember):
        chat_client.get_guild_member(BOB_GUILD, "1191000000000000103")  # carol is not in bob's guild


def test_roles_create_and_reorder(chat_client: ChatClient, chat_state: SandboxState):
    # When a role is created with an integer bitfield and a non-ASCII audit-log reason
    role = chat_client.create_role(
        DEMO_GUILD,
        {"name": "Deployers", "permissions": VIEW_CHANNEL | SEND_MESSAGES, "color": 0x2ECC71, "hoist": True},
        reason="svc déploiement #1",
    )
    # Then the platform stored it just above @everyone, with the bitfield as a string
    assert (role.name, role.permissions, role.position, role.color) == ("Deployers", "3072", 1, 0x2ECC71)
    stored = chat_state.guild(DEMO_GUILD)["roles"][role.id]
    assert stored["permissions"] == "3072"
    [create] = chat_state.requests("POST", "/guilds/{guild_id}/roles")
    assert create["audit_log_reason"] == "svc déploiement #1"
    # When it is moved to position 2
    roles = chat_client.reorder_roles(DEMO_GUILD, {role.id: 2})
    # Then the answer is every role in the new order
    assert [r.name for r in sorted(roles, key=lambda r: r.position)] == [
        "@everyone",
        "Member",
        "Deployers",
        "Moderator",
        "svc-sandbox-bot",
    ]
    assert {r.id for r in chat_client.list_roles(DEMO_GUILD)} == {r.id for r in roles}


def test_role_creation_without_manage_roles_is_missing_permissions(chat_client: ChatClient):
    with pytest.raises(MissingPermissions) as caught:
        chat_client.create_role(LOCKED_GUILD, {"name": "Nope"})
    assert caught.value.platform_code == 50013
    assert caught.value.status == 403


def test_channels_create_reorder_and_overwrite(chat_client: ChatClient, chat_state: SandboxState):
    # When a category and a text channel inside it are created
    category = chat_client.create_channel(DEMO_GUILD, {"name": "Projects", "type": 4}, reason="deploy")
    channel = chat_client.create_channel(
        DEMO_GUILD,
        {
            "name": "Team Chat",
            "type": 0,
            "parent_id": category.id,
            "topic": "Where the team talks",
            "permission_overwrites": [{"id": DEMO_GUILD, "type": 0, "allow": 0, "deny": VIEW_CHANNEL}],
        },
    )
    # Then the platform answered 201 with the normalised name and the overwrite as strings
    assert category.is_category
    assert (channel.name, channel.parent_id, channel.topic) == ("team-chat", category.id, "Where the team talks")
    assert [(o.id, o.type, o.allow, o.deny) for o in channel.permission_overwrites] == [
        (DEMO_GUILD, 0, "0", str(VIEW_CHANNEL))
    ]
    assert [entry["status"] for entry in chat_state.requests("POST", "/guilds/{guild_id}/channels")] == [201, 201]
    # When an overwrite is set for the Member role and the channel moved
    chat_client.set_channel_overwrite(channel.id, "1191000000000002013", 0, allow=VIEW_CHANNEL | SEND_MESSAGES)
    chat_client.reorder_channels(DEMO_GUILD, [{"id": channel.id, "position": 5}])
    # Then both answered 204 and the platform's state changed
    assert [entry["status"] for entry in chat_state.request_log[-2:]] == [204, 204]
    listed = {c.id: c for c in chat_client.list_channels(DEMO_GUILD)}
    assert listed[channel.id].position == 5
    assert {o.id: (o.allow, o.deny) for o in listed[channel.id].permission_overwrites} == {
        DEMO_GUILD: ("0", str(VIEW_CHANNEL)),
        "1191000000000002013": (str(VIEW_CHANNEL | SEND_MESSAGES), "0"),
    }


def test_invalid_channel_name_reports_the_field(chat_client: ChatClient):
    with pytest.raises(ChatInvalidRequest) as caught:
        chat_client.create_channel(DEMO_GUILD, {"name": "x" * 101})
    assert caught.value.platform_code == 50035
    assert caught.value.platform_errors == ["name: Must be between 1 and 100 in length."]
    assert caught.value.status == 502


def test_parent_must_be_a_category(chat_client: ChatClient):
    with pytest.raises(ChatInvalidRequest) as caught:
        chat_client.create_channel(DEMO_GUILD, {"name": "nested", "parent_id": "1191000000000003014"})
    assert caught.value.platform_errors[0].startswith("parent_id:")


def test_channel_limit_is_chat_limit_reached(chat_client: ChatClient, chat_state: SandboxState):
    # Given bob's guild already holds 500 channels
    with chat_state.lock:
        guild = chat_state.guilds[BOB_GUILD]
        for index in range(500 - len(guild["channels"])):
            channel_id = str(1191000000000009000 + index)
            guild["channels"][channel_id] = {
                "id": channel_id,
                "type": 0,
                "guild_id": BOB_GUILD,
                "name": f"c{index}",
                "position": index,
                "parent_id": None,
                "permission_overwrites": [],
            }
    # When one more is created, Then the platform's 30013 becomes ChatLimitReached (409)
    with pytest.raises(ChatLimitReached) as caught:
        chat_client.create_channel(BOB_GUILD, {"name": "one-too-many"})
    assert caught.value.platform_code == 30013
    assert caught.value.status == 409


def test_full_category_is_refused(chat_client: ChatClient, chat_state: SandboxState):
    with chat_state.lock:
        guild = chat_state.guilds[DEMO_GUILD]
        for index in range(50 - 2):
            channel_id = str(1191000000000008000 + index)
            guild["channels"][channel_id] = {
                "id": channel_id,
                "type": 0,
                "guild_id": DEMO_GUILD,
                "name": f"c{index}",
                "position": index,
                "parent_id": INFO_CATEGORY,
                "permission_overwrites": [],
            }
    with pytest.raises(ChatInvalidRequest) as caught:
        chat_client.create_channel(DEMO_GUILD, {"name": "fifty-one", "parent_id": INFO_CATEGORY})
    assert "Maximum number of channels in category" in caught.value.platform_errors[0]


def test_overwrite_where_the_bot_is_absent_is_missing_access(chat_client: ChatClient):
    with pytest.raises(MissingAccess) as caught:
        chat_client.set_channel_overwrite(QUIET_GENERAL, QUIET_GUILD, 0, deny=VIEW_CHANNEL)
    assert caught.value.platform_code == 50001
    assert caught.value.status == 403


# -- guild structure: modify and delete ---------------------------------------------------------------

MEMBER_ROLE, MODERATOR_ROLE, DEMO_BOT_ROLE = "1191000000000002013", "1191000000000002012", "1191000000000002011"
WELCOME, LOUNGE = "1191000000000003012", "1191000000000003015"
ADMINISTRATOR, MANAGE_ROLES = 1 << 3, 1 << 28


def test_modify_role_changes_the_fields_sent_and_keeps_the_others(chat_client: ChatClient, chat_state: SandboxState):
    # When the Member role is renamed, recoloured, hoisted and given an integer bitfield, with an audit reason
    role = chat_client.modify_role(
        DEMO_GUILD,
        MEMBER_ROLE,
        {"name": "Members", "permissions": VIEW_CHANNEL | SEND_MESSAGES, "color": 0x123456, "hoist": True},
        reason="svc deploy",
    )
    # Then the platform answered the role as stored: the bitfield as a string, mentionable and position unchanged
    assert (role.id, role.name, role.permissions, role.color, role.hoist) == (
        MEMBER_ROLE,
        "Members",
        "3072",
        0x123456,
        True,
    )
    assert (role.mentionable, role.position) == (False, 1)
    assert chat_state.guild(DEMO_GUILD)["roles"][MEMBER_ROLE]["permissions"] == "3072"
    [patch] = chat_state.requests("PATCH", "/guilds/{guild_id}/roles/{role_id}")
    assert (patch["status"], patch["audit_log_reason"]) == (200, "svc deploy")


def test_a_role_may_keep_permissions_the_bot_lacks_but_not_gain_them(chat_client: ChatClient):
    # Given the Moderator role holds KICK_MEMBERS, which the bot lacks
    moderator = next(role for role in chat_client.list_roles(DEMO_GUILD) if role.id == MODERATOR_ROLE)
    kept = int(moderator.permissions)
    # When VIEW_CHANNEL (which the bot holds) is added, Then the role keeps KICK_MEMBERS too
    assert chat_client.modify_role(DEMO_GUILD, MODERATOR_ROLE, {"permissions": kept | VIEW_CHANNEL}).permissions == str(
        kept | VIEW_CHANNEL
    )
    # When ADMINISTRATOR (which the bot lacks) is added, Then the platform refuses and nothing changes
    with pytest.raises(MissingPermissions):
        chat_client.modify_role(DEMO_GUILD, MODERATOR_ROLE, {"permissions": kept | ADMINISTRATOR})
    assert next(r for r in chat_client.list_roles(DEMO_GUILD) if r.id == MODERATOR_ROLE).permissions == str(
        kept | VIEW_CHANNEL
    )


@pytest.mark.parametrize(
    ("guild_id", "role_id", "why"),
    [
        (DEMO_GUILD, DEMO_BOT_ROLE, "the bot's own highest role is not below itself"),
        (LOCKED_GUILD, "1191000000000002042", "the bot lacks MANAGE_ROLES there"),
    ],
)
def test_role_writes_the_bot_may_not_make_are_missing_permissions(chat_client: ChatClient, guild_id, role_id, why):
    with pytest.raises(MissingPermissions) as modifying:
        chat_client.modify_role(guild_id, role_id, {"name": "renamed"})
    with pytest.raises(MissingPermissions):
        chat_client.delete_role(guild_id, role_id)
    assert (modifying.value.platform_code, modifying.value.status) == (50013, 403), why


def test_unknown_role_is_unknown_role(chat_client: ChatClient):
    with pytest.raises(UnknownRole) as caught:
        chat_client.modify_role(DEMO_GUILD, "1191000000000002999", {"name": "ghost"})
    with pytest.raises(UnknownRole):
        chat_client.delete_role(DEMO_GUILD, "1191000000000002999")
    assert (caught.value.platform_code, caught.value.status) == (10011, 404)


def test_deleted_role_leaves_members_and_overwrites_and_positions_close_up(
    chat_client: ChatClient, chat_state: SandboxState
):
    # Given bob holds Moderator (position 2) and the welcome channel has an overwrite for it
    chat_client.set_channel_overwrite(WELCOME, MODERATOR_ROLE, 0, allow=SEND_MESSAGES)
    # When Moderator is deleted
    chat_client.delete_role(DEMO_GUILD, MODERATOR_ROLE, reason="rollback")
    # Then it is gone from the roles, from bob and from the channel, and the positions are contiguous again
    guild = chat_state.guild(DEMO_GUILD)
    assert MODERATOR_ROLE not in guild["roles"]
    assert guild["members"][BOB_ID]["roles"] == []
    assert [o["id"] for o in guild["channels"][WELCOME]["permission_overwrites"]] == [DEMO_GUILD]
    assert [(r.name, r.position) for r in sorted(chat_client.list_roles(DEMO_GUILD), key=lambda r: r.position)] == [
        ("@everyone", 0),
        ("Member", 1),
        ("svc-sandbox-bot", 2),
    ]
    [delete] = chat_state.requests("DELETE", "/guilds/{guild_id}/roles/{role_id}")
    assert (delete["status"], delete["audit_log_reason"]) == (204, "rollback")


def test_modify_channel_renames_moves_and_replaces_overwrites(chat_client: ChatClient, chat_state: SandboxState):
    # Given the welcome channel sits in the Information category with an @everyone overwrite
    # When it is renamed, given a topic, slowmode and nsfw, taken out of its category and given one overwrite
    channel = chat_client.modify_channel(
        WELCOME,
        {
            "name": "Welcome Hall",
            "topic": "Start here",
            "rate_limit_per_user": 30,
            "nsfw": True,
            "parent_id": None,
            "permission_overwrites": [{"id": MEMBER_ROLE, "type": 0, "allow": VIEW_CHANNEL}],
        },
        reason="svc deploy",
    )
    # Then the name is normalised, the overwrites are exactly the ones sent, and the rest is as asked
    assert (channel.name, channel.topic, channel.rate_limit_per_user, channel.nsfw, channel.parent_id) == (
        "welcome-hall",
        "Start here",
        30,
        True,
        None,
    )
    assert [(o.id, o.allow, o.deny) for o in channel.permission_overwrites] == [(MEMBER_ROLE, str(VIEW_CHANNEL), "0")]
    assert chat_state.guild(DEMO_GUILD)["channels"][WELCOME]["name"] == "welcome-hall"


def test_modify_voice_channel_limits(chat_client: ChatClient):
    channel = chat_client.modify_channel(LOUNGE, {"user_limit": 12, "bitrate": 96000, "name": "Big Lounge"})
    assert (channel.user_limit, channel.bitrate, channel.name) == (12, 96000, "Big Lounge")  # voice names stay as sent


def test_delete_category_returns_it_and_orphans_its_channels(chat_client: ChatClient, chat_state: SandboxState):
    deleted = chat_client.delete_channel(INFO_CATEGORY, reason="rollback")
    assert (deleted.id, deleted.is_category, deleted.name) == (INFO_CATEGORY, True, "Information")
    channels = {c.id: c for c in chat_client.list_channels(DEMO_GUILD)}
    assert INFO_CATEGORY not in channels
    assert channels[WELCOME].parent_id is None
    assert channels["1191000000000003013"].parent_id is None
    [delete] = chat_state.requests("DELETE", "/channels/{channel_id}")
    assert (delete["status"], delete["audit_log_reason"]) == (200, "rollback")


def test_delete_overwrite_then_again_is_unknown_overwrite(chat_client: ChatClient, chat_state: SandboxState):
    chat_client.delete_overwrite(WELCOME, DEMO_GUILD)
    assert chat_state.guild(DEMO_GUILD)["channels"][WELCOME]["permission_overwrites"] == []
    with pytest.raises(UnknownOverwrite) as caught:
        chat_client.delete_overwrite(WELCOME, DEMO_GUILD)
    assert (caught.value.platform_code, caught.value.status) == (10009, 404)
    assert [
        e["status"] for e in chat_state.requests("DELETE", "/channels/{channel_id}/permissions/{overwrite_id}")
    ] == [
        204,
        404,
    ]


def test_channel_writes_on_unknown_or_unreachable_channels(chat_client: ChatClient):
    with pytest.raises(UnknownChannel):
        chat_client.modify_channel("1191000000000003999", {"name": "ghost"})
    with pytest.raises(UnknownChannel):
        chat_client.delete_channel("1191000000000003999")
    with pytest.raises(MissingAccess):  # the bot is not in the quiet guild
        chat_client.delete_channel(QUIET_GENERAL)


def test_manage_roles_in_an_overwrite_needs_administrator(chat_client: ChatClient, chat_state: SandboxState):
    # Given the build guild's bot holds every permission but ADMINISTRATOR, and bob's bot is ADMINISTRATOR
    overwrite = [{"id": BUILD_GUILD, "type": 0, "allow": MANAGE_ROLES}]
    # When each creates a category whose overwrite allows MANAGE_ROLES
    with pytest.raises(MissingPermissions):
        chat_client.create_channel(BUILD_GUILD, {"name": "Staff", "type": 4, "permission_overwrites": overwrite})
    overwrite[0]["id"] = BOB_GUILD
    staff = chat_client.create_channel(BOB_GUILD, {"name": "Staff", "type": 4, "permission_overwrites": overwrite})
    # Then only the administrator's succeeds, and the same rule holds when modifying a channel
    assert staff.permission_overwrites[0].allow == str(MANAGE_ROLES)
    lab = chat_client.create_channel(BUILD_GUILD, {"name": "Lab", "type": 4})
    with pytest.raises(MissingPermissions):
        chat_client.modify_channel(
            lab.id, {"permission_overwrites": [{"id": BUILD_GUILD, "type": 0, "deny": MANAGE_ROLES}]}
        )
    assert chat_state.guild(BUILD_GUILD)["channels"][lab.id]["permission_overwrites"] == []


def test_creations_past_the_per_guild_limit_wait_instead_of_meeting_429(
    chat_client: ChatClient, chat_state: SandboxState
):
    # Given role creation allows 5 requests per second per guild (on by default)
    # When 7 roles are created back to back in the build guild
    started = time.monotonic()
    roles = [chat_client.create_role(BUILD_GUILD, {"name": f"Team {n}", "permissions": 0}) for n in range(7)]
    elapsed = time.monotonic() - started
    # Then all were created, the client waited out the window it was told about, and never met a 429
    assert len({role.id for role in roles}) == 7
    assert [e["status"] for e in chat_state.requests("POST", "/guilds/{guild_id}/roles")] == [200] * 7
    assert elapsed >= 0.8


# -- headers ------------------------------------------------------------------------------------


def test_every_request_carries_the_user_agent_and_the_right_auth_scheme(
    chat_client: ChatClient, chat_state: SandboxState
):
    # When calls of each kind are made
    chat_client.get_invite("svcDemo")
    chat_client.exchange_code(ALICE_CODE, REDIRECT_URI)
    chat_client.get_current_user_guilds(ALICE_TOKEN)
    chat_client.list_channels(DEMO_GUILD)
    # Then the platform saw its required User-Agent form on all of them
    assert re.fullmatch(r"DiscordBot \(\S+, \d+(\.\d+)*\)", USER_AGENT)
    assert {entry["user_agent"] for entry in chat_state.request_log} == {USER_AGENT}
    # And Bot for bot calls, Basic for the token endpoint, Bearer for the user's calls
    assert [(entry["route"], entry["auth"]) for entry in chat_state.request_log] == [
        ("/invites/{code}", "Bot"),
        ("/oauth2/token", "Basic"),
        ("/users/@me/guilds", "Bearer"),
        ("/guilds/{guild_id}/channels", "Bot"),
    ]


# -- rate limits and failures --------------------------------------------------------------------


def test_calls_succeed_when_thirty_percent_of_requests_are_rate_limited(
    chat_client: ChatClient, chat_state: SandboxState, capsys: pytest.CaptureFixture[str]
):
    # Given the platform answers 429 (retry_after 0.05-0.2 s) to 30% of requests, seeded
    chat_state.configure(seed=20260718, rate_limit_probability=0.3)
    # When 50 invite lookups and 20 guild lists are made
    invites = [chat_client.get_invite("svcDemo") for _ in range(50)]
    guild_lists = [chat_client.get_current_user_guilds(ALICE_TOKEN) for _ in range(20)]
    # Then every call succeeded
    assert all(invite.code == "svcDemo" for invite in invites)
    assert all(len(guilds) == 5 for guilds in guild_lists)
    # And the platform saw a bounded number of requests per success
    stats = chat_state.stats()
    limited = stats["by_status"].get("429", 0)
    per_success = stats["requests"] / 70
    with capsys.disabled():
        print(f"\n[chat] 70 calls: {stats['requests']} requests, {limited} answered 429, {per_success:.2f} per success")
    assert stats["by_status"]["200"] == 70
    assert limited == stats["faults"]["rate_limit"] > 0
    assert per_success <= 2.0


def test_client_waits_for_an_exhausted_bucket_instead_of_hitting_429(chat_client: ChatClient, chat_state: SandboxState):
    # Given the invite route allows 3 requests per 0.4 s window
    chat_state.configure(route_limits={"GET /invites/{code}": [3, 0.4]})
    # When 7 invites are resolved back to back
    started = time.monotonic()
    for _ in range(7):
        chat_client.get_invite("svcDemo")
    elapsed = time.monotonic() - started
    # Then the client waited for two resets and the platform never had to answer 429
    assert [entry["status"] for entry in chat_state.request_log] == [200] * 7
    assert elapsed >= 0.75


def test_global_429s_are_waited_out(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(seed=3, global_429_probability=0.4)
    for _ in range(10):
        assert chat_client.get_guild(DEMO_GUILD).id == DEMO_GUILD
    assert chat_state.stats()["faults"]["global_429"] > 0
    assert chat_state.stats()["by_status"]["200"] == 10


def test_a_wait_past_the_cap_raises_chat_rate_limited(chat_sandbox, chat_state: SandboxState):
    # Given the guild route allows 1 request per 30 s and a call may wait at most 1 s
    chat_state.configure(route_limits={"GET /guilds/{guild_id}": [1, 30]})
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, CHAT_MAX_WAIT_SECONDS=1))
    client.get_guild(DEMO_GUILD)
    # When the guild is read again
    started = time.monotonic()
    with pytest.raises(ChatRateLimited) as caught:
        client.get_guild(DEMO_GUILD)
    # Then the client gave up at once (it knew the bucket) instead of sleeping or sending
    assert time.monotonic() - started < 0.5
    assert caught.value.status == 502
    assert caught.value.retry_after is not None
    assert caught.value.retry_after > 25
    assert len(chat_state.request_log) == 1
    # And another guild's bucket is not affected
    assert client.get_guild(BOB_GUILD).id == BOB_GUILD


def test_an_edge_ban_is_not_retried(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(blocked=True)
    with pytest.raises(ChatBlocked) as caught:
        chat_client.get_invite("svcDemo")
    assert caught.value.status == 502
    assert platform_requests(chat_state) == [("GET", "/invites/{code}", 429)]


def test_5xx_is_retried_then_succeeds(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(fail_next=2, fail_next_status=503)
    assert chat_client.get_guild(DEMO_GUILD).name == "Svc Demo Guild"
    assert [entry["status"] for entry in chat_state.request_log] == [503, 503, 200]


def test_persistent_5xx_is_chat_unavailable_after_bounded_attempts(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(seed=5, error_5xx_probability=1.0)
    with pytest.raises(ChatUnavailable) as caught:
        chat_client.get_guild(DEMO_GUILD)
    assert caught.value.status == 502
    assert caught.value.platform_status in (500, 502, 503)
    assert len(chat_state.request_log) == chat_client.max_retries + 1 == 4


def test_a_post_is_retried_after_503_but_not_after_500(chat_client: ChatClient, chat_state: SandboxState):
    # Given one 503 (not applied): the role is created on the retry
    chat_state.configure(fail_next=1, fail_next_status=503)
    assert chat_client.create_role(DEMO_GUILD, {"name": "After 503"}).name == "After 503"
    # Given one 500 (maybe applied): no retry, so no duplicate
    chat_state.configure(fail_next=1, fail_next_status=500)
    with pytest.raises(ChatUnavailable):
        chat_client.create_role(DEMO_GUILD, {"name": "After 500"})
    assert [entry["status"] for entry in chat_state.requests("POST", "/guilds/{guild_id}/roles")] == [503, 200, 500]


def test_slow_platform_is_chat_timeout(chat_sandbox, chat_state: SandboxState):
    # Given the platform takes 0.6 s and the client waits 0.2 s
    chat_state.configure(latency_seconds=0.6)
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, CHAT_TIMEOUT_SECONDS=0.2), max_retries=1)
    # When a guild is read, Then ChatTimeout (a 502 for the service, as the contract says)
    with pytest.raises(ChatTimeout) as caught:
        client.get_guild(DEMO_GUILD)
    assert caught.value.status == 502
    assert isinstance(caught.value, ChatUnavailable)


def test_unreachable_platform_is_chat_unavailable():
    # Given nothing listens on a freshly released loopback port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = new_chat_client(chat_settings_for(f"http://127.0.0.1:{port}/api/v10"))
    with pytest.raises(ChatUnavailable) as caught:
        client.get_guild(DEMO_GUILD)
    assert not isinstance(caught.value, ChatTimeout)
    assert "after 4 attempt(s)" in caught.value.message


# -- secrets stay out of logs and errors ----------------------------------------------------------


def test_no_token_or_secret_reaches_logs_or_error_messages(
    chat_client: ChatClient, chat_state: SandboxState, caplog: pytest.LogCaptureFixture
):
    # Given every logger captured at DEBUG and a platform that rate-limits and fails now and then
    caplog.set_level(logging.DEBUG)
    chat_state.configure(seed=11, rate_limit_probability=0.3, fail_next=1)
    errors: list[ChatError] = []
    # When the client signs a user in, refreshes, reads guilds and hits errors
    grant = chat_client.exchange_code(ALICE_CODE, REDIRECT_URI)
    refreshed = chat_client.refresh_token(ALICE_REFRESH)
    chat_client.get_current_user(grant.access_token.get_secret_value())
    chat_client.get_current_user_guilds(refreshed.access_token.get_secret_value())
    chat_client.get_bot_guilds()
    for failing in (
        lambda: chat_client.exchange_code(ALICE_CODE, REDIRECT_URI),
        lambda: chat_client.get_current_user(BOB_EXPIRED_TOKEN),
        lambda: chat_client.create_role(LOCKED_GUILD, {"name": "x"}),
    ):
        with pytest.raises(ChatError) as caught:
            failing()
        errors.append(caught.value)
    # Then something was logged (waits, retries), but no secret appears in it or in the errors
    assert any(record.name.startswith("svcconf.chat") for record in caplog.records)
    secrets = {
        *SECRETS,
        ALICE_CODE,
        grant.access_token.get_secret_value(),
        grant.refresh_token.get_secret_value() if grant.refresh_token else "",
        refreshed.access_token.get_secret_value(),
    } - {""}
    logged = caplog.text + "".join(str(record.args) for record in caplog.records)
    shown = " ".join(f"{error!s} {error!r} {error.message}" for error in errors) + repr(grant) + str(refreshed)
    for secret in secrets:
        assert secret not in logged
        assert secret not in shown


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
