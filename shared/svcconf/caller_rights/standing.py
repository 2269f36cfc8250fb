"""The caller's standing in one guild, read through the bot, and the guild as the caller sees it.

Read once per request (and once per worker run), never cached beyond it: a person's roles change, and a stale
standing would let them do what they no longer may. What the standing allows follows the platform's permission
order (`svcconf.config.access`, docs/04-chat-platform.md, "What the code relies on").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from svcconf.chat import Channel, ChatClient, PermissionOverwrite, Role, UnknownMember
from svcconf.config import CHANNEL_TYPES, LintWarning
from svcconf.config.access import VIEW_CHANNEL_BIT, OverwriteBits, channel_permissions, guild_permissions
from svcconf.deploy_engine.live import LiveGuild
from svcconf.errors import Forbidden

VOICE_TYPES = frozenset({CHANNEL_TYPES["voice"], CHANNEL_TYPES["stage"]})
ROLE_OVERWRITE, MEMBER_OVERWRITE = 0, 1
HIDDEN_CHANNELS_RULE = "hidden-channels"


class NotAMember(Forbidden):
    default_message = "You are not a member of this server, so you may not change it through the service."


class CallerStanding(BaseModel):
    """Who the caller is in the guild: owner or not, their roles, what they hold server-wide, how high they rank."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    owner: bool
    role_ids: frozenset[str]
    permissions: int  # server-wide, as the platform computes them (all for the owner and ADMINISTRATOR)
    top_position: int  # the position of their highest role (0: only @everyone)

    def holds(self, bits: int) -> bool:
        return self.permissions & bits == bits

    def outranks(self, role: Role) -> bool:
        """The platform lets a person edit, delete or move only roles strictly below their highest; the owner any."""
        return self.owner or role.position < self.top_position

    def in_channel(self, live: LiveGuild, channel: Channel) -> int:
        """The caller's permissions in one channel or category, after its overwrites."""
        overwrites = channel.permission_overwrites
        return channel_permissions(
            self.permissions,
            everyone=next((_bits(o) for o in overwrites if o.type == ROLE_OVERWRITE and o.id == live.id), None),
            roles=[_bits(o) for o in overwrites if o.type == ROLE_OVERWRITE and o.id in self.role_ids],
            member=next((_bits(o) for o in overwrites if o.type == MEMBER_OVERWRITE and o.id == self.user_id), None),
            voice=channel.type in VOICE_TYPES,
        )

    def can_view(self, live: LiveGuild, channel: Channel) -> bool:
        return bool(self.in_channel(live, channel) & VIEW_CHANNEL_BIT)


def _bits(overwrite: PermissionOverwrite) -> OverwriteBits:
    return OverwriteBits(allow=int(overwrite.allow), deny=int(overwrite.deny))


def standing_of(live: LiveGuild, user_id: str, member_role_ids: list[str]) -> CallerStanding:
    """The standing of a member holding these roles (pure: the member already read)."""
    held = [role for role in live.roles if role.id in member_role_ids and not role.is_everyone(live.id)]
    owner = live.owner_id == user_id
    return CallerStanding(
        user_id=user_id,
        owner=owner,
        role_ids=frozenset(role.id for role in held),
        permissions=guild_permissions(int(live.everyone.permissions), (int(r.permissions) for r in held), owner=owner),
        top_position=max((role.position for role in held), default=0),
    )


def read_standing(client: ChatClient, live: LiveGuild, user_id: str) -> CallerStanding:
    """The caller's standing now: one member read through the bot; not a member (10007): 403."""
    try:
        member = client.get_guild_member(live.id, user_id)
    except UnknownMember as gone:
        raise NotAMember() from gone
    return standing_of(live, user_id, member.roles)


class CallerView(BaseModel):
    """The guild as the caller sees it: the channels they cannot view left out (a category stays while it holds
    one they can view, as the platform's client shows it), and how many were left out."""

    model_config = ConfigDict(frozen=True)

    live: LiveGuild
    hidden: list[Channel]

    def hidden_warnings(self) -> list[LintWarning]:
        if not self.hidden:
            return []
        count = len(self.hidden)
        noun = "channel or category" if count == 1 else "channels or categories"
        return [
            LintWarning(
                field="channels",
                rule=HIDDEN_CHANNELS_RULE,
                message=f"{count} {noun} of this server you cannot view are left out; a deploy never touches them.",
            )
        ]


def caller_view(live: LiveGuild, standing: CallerStanding) -> CallerView:
    viewable = {channel.id for channel in live.channels if standing.can_view(live, channel)}
    shown_parents = {channel.parent_id for channel in live.channels if channel.id in viewable and channel.parent_id}
    shown = viewable | shown_parents
    visible = [channel for channel in live.channels if channel.id in shown]
    hidden = [channel for channel in live.channels if channel.id not in shown]
    seen = live.model_copy(update={"channels": visible, "hidden_channel_ids": frozenset(c.id for c in hidden)})
    return CallerView(live=seen, hidden=hidden)
