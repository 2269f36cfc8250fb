"""The chat platform's objects as the service reads them, and its CDN URLs.

Parsing is lenient: unknown fields are ignored (the platform adds fields over time), ids and
permission bitfields are kept as decimal strings but accepted as integers too (the platform's own
examples and its template snapshots mix both; docs/04-chat-platform.md).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr

from svcconf.config.permissions import CHANNEL_TYPES, has_permission


def _decimal_string(value: Any) -> Any:
    if isinstance(value, bool):
        return value  # let pydantic refuse it: a bool is no id
    if isinstance(value, int):
        return str(value)
    return value


def _present_means_true(value: Any) -> Any:
    # Role tags typed `null` are flags: present (with the value null) means true (the platform's permissions docs).
    return True if value is None else value


Snowflake = Annotated[str, BeforeValidator(_decimal_string)]
Bitfield = Annotated[str, BeforeValidator(_decimal_string)]
PresenceFlag = Annotated[bool, BeforeValidator(_present_means_true)]

CATEGORY = CHANNEL_TYPES["category"]


class ChatModel(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


# -- CDN ---------------------------------------------------------------------------------------


def _cdn(cdn_base: str | None) -> str:
    if cdn_base is None:
        from svcconf.settings import get_settings

        cdn_base = get_settings().chat_cdn_base_url
    return cdn_base.rstrip("/")


def _image(cdn_base: str | None, path: str, image_hash: str, size: int | None) -> str:
    extension = "gif" if image_hash.startswith("a_") else "png"  # "a_" marks an animated image
    url = f"{_cdn(cdn_base)}/{path}/{image_hash}.{extension}"
    return f"{url}?size={size}" if size else url


def avatar_url(
    user_id: str | int,
    avatar_hash: str | None,
    discriminator: str | None = "0",
    *,
    cdn_base: str | None = None,
    size: int | None = None,
) -> str:
    """The user's avatar, or the platform's default avatar when the user has none."""
    if avatar_hash:
        return _image(cdn_base, f"avatars/{user_id}", avatar_hash, size)
    # Users on the new username system have discriminator "0"; legacy four-digit tags use their tag.
    index = (int(user_id) >> 22) % 6 if not discriminator or discriminator == "0" else int(discriminator) % 5
    return f"{_cdn(cdn_base)}/embed/avatars/{index}.png"


def guild_icon_url(
    guild_id: str | int, icon_hash: str | None, *, cdn_base: str | None = None, size: int | None = None
) -> str | None:
    """The guild's icon, or None when it has none."""
    if not icon_hash:
        return None
    return _image(cdn_base, f"icons/{guild_id}", icon_hash, size)


# -- users and OAuth2 --------------------------------------------------------------------------


class ChatUser(ChatModel):
    id: Snowflake
    username: str
    discriminator: str = "0"
    global_name: str | None = None
    avatar: str | None = None
    bot: bool = False
    email: str | None = None  # only with the `email` scope
    verified: bool | None = None  # whether the email is verified; only with the `email` scope

    @property
    def display_name(self) -> str:
        return self.global_name or self.username

    def avatar_url(self, *, cdn_base: str | None = None, size: int | None = None) -> str:
        return avatar_url(self.id, self.avatar, self.discriminator, cdn_base=cdn_base, size=size)


class TokenGrant(ChatModel):
    """The token endpoint's answer. Tokens are `SecretStr` so that printing a grant shows no token."""

    access_token: SecretStr
    token_type: str = "Bearer"  # noqa: S105 - the scheme name, not a secret
    expires_in: int = 0  # seconds
    refresh_token: SecretStr | None = None
    scope: str = ""

    @property
    def scopes(self) -> list[str]:
        return self.scope.split()

    def expires_at(self, now: datetime | None = None) -> datetime:
        return (now or datetime.now(UTC)) + timedelta(seconds=self.expires_in)


# -- guilds ------------------------------------------------------------------------------------


class PartialGuild(ChatModel):
    """A guild as `GET /users/@me/guilds` lists it, with the caller's guild-level permissions."""

    id: Snowflake
    name: str
    icon: str | None = None
    banner: str | None = None
    owner: bool = False
    permissions: Bitfield = "0"  # excludes channel overwrites and implicit permissions
    features: list[str] = Field(default_factory=list)
    approximate_member_count: int | None = None
    approximate_presence_count: int | None = None

    @property
    def can_manage(self) -> bool:
        """Owner, ADMINISTRATOR or MANAGE_GUILD (has_permission counts ADMINISTRATOR as every permission)."""
        return self.owner or has_permission(self.permissions, "MANAGE_GUILD")

    def icon_url(self, *, cdn_base: str | None = None, size: int | None = None) -> str | None:
        return guild_icon_url(self.id, self.icon, cdn_base=cdn_base, size=size)


class RoleTags(ChatModel):
    bot_id: Snowflake | None = None
    integration_id: Snowflake | None = None
    subscription_listing_id: Snowflake | None = None
    premium_subscriber: PresenceFlag = False
    available_for_purchase: PresenceFlag = False
    guild_connections: PresenceFlag = False


class RoleColors(ChatModel):
    """A role's colours (2025): `color` is `primary_color`; the other two make a gradient or a holographic role."""

    primary_color: int = 0
    secondary_color: int | None = None
    tertiary_color: int | None = None


class Role(ChatModel):
    id: Snowflake
    name: str
    permissions: Bitfield = "0"
    position: int = 0
    color: int = 0
    hoist: bool = False
    managed: bool = False
    mentionable: bool = False
    icon: str | None = None
    unicode_emoji: str | None = None
    tags: RoleTags | None = None
    flags: int = 0
    colors: RoleColors | None = None

    def is_everyone(self, guild_id: str) -> bool:
        return self.id == guild_id  # @everyone's id is the guild's id

    @property
    def bot_id(self) -> str | None:
        return self.tags.bot_id if self.tags else None


class Guild(ChatModel):
    """A guild as `GET /guilds/{guild_id}` returns it (bot token), with its roles."""

    id: Snowflake
    name: str
    icon: str | None = None
    owner_id: Snowflake | None = None
    description: str | None = None
    features: list[str] = Field(default_factory=list)
    roles: list[Role] = Field(default_factory=list)
    preferred_locale: str | None = None
    # The guild's settings (PATCH /guilds/{guild_id}; the configuration's `settings`).
    verification_level: int = 0
    default_message_notifications: int = 0
    explicit_content_filter: int = 0
    afk_channel_id: Snowflake | None = None
    afk_timeout: int = 300
    system_channel_id: Snowflake | None = None
    system_channel_flags: int = 0
    rules_channel_id: Snowflake | None = None  # a Community server's: the platform refuses to delete them (50074)
    public_updates_channel_id: Snowflake | None = None
    approximate_member_count: int | None = None
    approximate_presence_count: int | None = None

    def icon_url(self, *, cdn_base: str | None = None, size: int | None = None) -> str | None:
        return guild_icon_url(self.id, self.icon, cdn_base=cdn_base, size=size)


class PermissionOverwrite(ChatModel):
    id: Snowflake
    type: int  # 0 role, 1 member
    allow: Bitfield = "0"
    deny: Bitfield = "0"


class ForumTag(ChatModel):
    """A tag of a forum channel (`available_tags`); `emoji_name` is a unicode emoji, `emoji_id` a custom one."""

    id: Snowflake | None = None
    name: str
    moderated: bool = False
    emoji_id: Snowflake | None = None
    emoji_name: str | None = None


class DefaultReaction(ChatModel):
    emoji_id: Snowflake | None = None
    emoji_name: str | None = None


class Channel(ChatModel):
    id: Snowflake
    type: int
    guild_id: Snowflake | None = None
    name: str | None = None
    position: int = 0
    parent_id: Snowflake | None = None
    topic: str | None = None
    nsfw: bool = False
    permission_overwrites: list[PermissionOverwrite] = Field(default_factory=list)
    rate_limit_per_user: int = 0
    bitrate: int | None = None
    user_limit: int | None = None
    flags: int = 0
    video_quality_mode: int | None = None  # voice and stage: 1 auto, 2 full
    # Forum channels:
    available_tags: list[ForumTag] = Field(default_factory=list)
    default_reaction_emoji: DefaultReaction | None = None
    default_thread_rate_limit_per_user: int | None = None
    default_sort_order: int | None = None
    default_forum_layout: int | None = None

    @property
    def is_category(self) -> bool:
        return self.type == CATEGORY


class GuildMember(ChatModel):
    user: ChatUser | None = None
    nick: str | None = None
    roles: list[Snowflake] = Field(default_factory=list)
    joined_at: datetime | None = None
    avatar: str | None = None


# -- invites -----------------------------------------------------------------------------------


class InviteGuild(ChatModel):
    id: Snowflake
    name: str
    icon: str | None = None
    splash: str | None = None
    banner: str | None = None
    description: str | None = None
    features: list[str] = Field(default_factory=list)
    vanity_url_code: str | None = None

    def icon_url(self, *, cdn_base: str | None = None, size: int | None = None) -> str | None:
        return guild_icon_url(self.id, self.icon, cdn_base=cdn_base, size=size)


class InviteChannel(ChatModel):
    id: Snowflake
    type: int
    name: str | None = None


class Invite(ChatModel):
    """`GET /invites/{code}`. `type` 0 is a guild invite; only guild invites carry a guild."""

    type: int = 0
    code: str
    expires_at: datetime | None = None  # None: the invite never expires
    guild: InviteGuild | None = None
    guild_id: Snowflake | None = None
    channel: InviteChannel | None = None
    inviter: ChatUser | None = None
    approximate_member_count: int | None = None  # only with with_counts=true
    approximate_presence_count: int | None = None

    @property
    def permanent(self) -> bool:
        return self.expires_at is None

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or datetime.now(UTC))


__all__ = [
    "Bitfield",
    "Channel",
    "ChatUser",
    "DefaultReaction",
    "ForumTag",
    "Guild",
    "GuildMember",
    "Invite",
    "InviteChannel",
    "InviteGuild",
    "PartialGuild",
    "PermissionOverwrite",
    "Role",
    "RoleTags",
    "Snowflake",
    "TokenGrant",
    "avatar_url",
    "guild_icon_url",
]
