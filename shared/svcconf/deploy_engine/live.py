"""The live guild as a deploy sees it: its settings, roles and channels, and what the bot may do there.

Read with three bot calls (the guild with its roles, its channels, the bot's membership); everything else
about the guild is derived here, without I/O, so the plan and the preflight stay pure.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from svcconf.chat import Channel, ChatError, Role
from svcconf.chat.community import AutomodRule, GuildOnboarding, WelcomeScreen
from svcconf.config import ALL_PERMISSIONS, CHANNEL_TYPES, EVERYONE, PERMISSION_BITS
from svcconf.config.access import VOICE_TYPES, Access, OverwriteBits, Place, effective_access, place_label
from svcconf.config.channels import platform_channel_name
from svcconf.deploy_engine.attributes import GuildSettings
from svcconf.deploy_engine.steps import ROLE_OVERWRITE

if TYPE_CHECKING:
    from collections.abc import Callable

    from svcconf.chat import ChatClient

ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
CATEGORY = CHANNEL_TYPES["category"]
CONFIG_TYPES = frozenset(CHANNEL_TYPES.values())  # the channel types a configuration has a name for

__all__ = ["LiveGuild", "guild_access", "platform_channel_name", "read_live_guild"]


class LiveGuild(BaseModel):
    """One guild's structure at one moment, and the bot's standing in it."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    owner_id: str | None = None
    features: list[str]
    settings: GuildSettings = GuildSettings()
    roles: list[Role]
    channels: list[Channel]
    bot_role_ids: list[str]
    community_channel_ids: list[str] = []  # a Community server's rules and updates channels: never deleted
    # v4 (None: not read, as the bot may not read them): AutoMod rules, onboarding, the welcome screen
    automod_rules: list[AutomodRule] | None = None
    onboarding: GuildOnboarding | None = None
    welcome_screen: WelcomeScreen | None = None
    # The channels left out of `channels` because the caller cannot view them (`caller_rights.caller_view`): a
    # deploy keeps the v4 objects' references to them as the server has them. Empty in the bot's own view.
    hidden_channel_ids: frozenset[str] = frozenset()

    @cached_property
    def everyone(self) -> Role:
        return next(role for role in self.roles if role.is_everyone(self.id))

    @cached_property
    def bot_permissions(self) -> int:
        """The bot's guild-level permissions; ADMINISTRATOR means every permission."""
        value = int(self.everyone.permissions)
        for role in self.roles:
            if role.id in self.bot_role_ids:
                value |= int(role.permissions)
        return ALL_PERMISSIONS if value & ADMINISTRATOR else value

    @cached_property
    def bot_top_position(self) -> int:
        return max((role.position for role in self.roles if role.id in self.bot_role_ids), default=0)

    @cached_property
    def bot_top_role_name(self) -> str:
        ranked = sorted((r for r in self.roles if r.id in self.bot_role_ids), key=lambda r: r.position, reverse=True)
        return ranked[0].name if ranked else self.everyone.name

    def bot_can_edit(self, role: Role) -> bool:
        """The platform lets a bot edit, delete or move only unmanaged roles strictly below its own highest role."""
        return not role.managed and not role.is_everyone(self.id) and role.position < self.bot_top_position

    @property
    def categories(self) -> list[Channel]:
        return [channel for channel in self.channels if channel.is_category]

    def channel(self, channel_id: str | None) -> Channel | None:
        return next((channel for channel in self.channels if channel.id == channel_id), None)

    def children_of(self, category_id: str | None) -> list[Channel]:
        return [c for c in self.channels if not c.is_category and c.parent_id == category_id]


def read_live_guild(client: ChatClient, guild_id: str, bot_role_ids: list[str] | None = None) -> LiveGuild:
    """The guild's roles, channels and the bot's roles, as the bot sees them now. The bot's roles may be given
    (read moments ago by the same deployment's request): the platform refuses what they no longer allow."""
    guild = client.get_guild(guild_id)
    channels = client.list_channels(guild_id)
    if bot_role_ids is None:
        bot_role_ids = client.get_guild_member(guild_id, client.get_bot_user().id).roles
    live = LiveGuild(
        id=guild.id,
        name=guild.name,
        owner_id=guild.owner_id,
        features=guild.features,
        settings=GuildSettings.of(guild),
        roles=guild.roles,
        channels=channels,
        bot_role_ids=bot_role_ids,
        community_channel_ids=[i for i in (guild.rules_channel_id, guild.public_updates_channel_id) if i],
    )
    return read_community(client, live)


MANAGE_GUILD = 1 << PERMISSION_BITS["MANAGE_GUILD"]


def read_community(client: ChatClient, live: LiveGuild) -> LiveGuild:
    """The guild's AutoMod rules, onboarding and welcome screen (v4), where the bot may read them (MANAGE_GUILD; the
    welcome screen only in a Community guild); what it cannot read stays None and a deploy leaves it alone."""
    if not live.bot_permissions & MANAGE_GUILD:
        return live
    found: dict[str, object] = {}
    reads: dict[str, Callable[[], object]] = {
        "automod_rules": lambda: client.list_automod_rules(live.id),
        "onboarding": lambda: client.get_onboarding(live.id),
        "welcome_screen": lambda: client.get_welcome_screen(live.id) if "COMMUNITY" in live.features else None,
    }
    for field, read in reads.items():
        try:
            found[field] = read()
        except ChatError as problem:  # refused or unknown: not read
            if problem.platform_status is None or problem.platform_status >= 500 or problem.platform_status == 429:
                raise
    return live.model_copy(update=found)


def guild_access(live: LiveGuild) -> Access:
    """Who can do what in a live guild (or a template's), per category or channel and per role, named as a
    configuration names them: roles by name (of two of one name, the highest, as export keeps it; managed roles are
    not a configuration's), overwrites of roles (a member's is not a role's), channels of the types a configuration
    has (of two of one place, the highest, then the oldest, as export keeps it), permissions that have a name (a
    bit without one grants nothing a configuration can say)."""
    role_names: dict[str, str] = {live.everyone.id: EVERYONE}
    roles: dict[str, int] = {}
    for role in sorted(live.roles, key=lambda r: r.position, reverse=True):
        if not (role.managed or role.is_everyone(live.id) or role.name in roles or role.name.casefold() == EVERYONE):
            roles[role.name] = int(role.permissions) & ALL_PERMISSIONS
            role_names[role.id] = role.name
    categories = {c.id: c.name or "" for c in live.categories}
    places: dict[str, Place] = {}
    for channel in sorted(live.channels, key=lambda c: (-c.position, int(c.id))):
        if channel.type not in CONFIG_TYPES or (channel.parent_id is not None and channel.parent_id not in categories):
            continue
        overwrites = {
            role_names[o.id]: OverwriteBits(int(o.allow) & ALL_PERMISSIONS, int(o.deny) & ALL_PERMISSIONS)
            for o in channel.permission_overwrites
            if o.type == ROLE_OVERWRITE and o.id in role_names
        }
        label = place_label(channel.type, channel.name or "", categories.get(channel.parent_id or ""))
        places.setdefault(label, Place(channel.type in VOICE_TYPES, overwrites))
    return effective_access(int(live.everyone.permissions) & ALL_PERMISSIONS, roles, places)
