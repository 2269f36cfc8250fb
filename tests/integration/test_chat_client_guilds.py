"""The chat-platform client against the loopback sandbox, over real HTTP: a guild's roles, channels and overwrites."""

from __future__ import annotations

import time

import pytest

from local.chat_sandbox import SandboxState
from svcconf.chat import (
    ChatClient,
    ChatInvalidRequest,
    ChatLimitReached,
    MissingAccess,
    MissingPermissions,
    UnknownChannel,
    UnknownGuild,
    UnknownMember,
    UnknownOverwrite,
    UnknownRole,
)
from tests.helpers.chat_sandbox import (
    ALICE_ID,
    BOB_GUILD,
    BOB_ID,
    BOT_ID,
    BUILD_GUILD,
    DEMO_GUILD,
    INFO_CATEGORY,
    LOCKED_GUILD,
    QUIET_GENERAL,
    QUIET_GUILD,
)

VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11

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
