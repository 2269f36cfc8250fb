"""A native server template of the platform as a server configuration: what deployToChat `import` answers.

Pure. The snapshot is read as the guild it was taken from, then exported like a live one (`export`), so a
template and a guild become configurations by the same rules. Placeholders stand for ids: @everyone is
placeholder 0 (or the role of that name), roles are listed from the bottom up after it, a channel's
`parent_id` names a category's placeholder, the AFK and system channels name channels' placeholders.
"""

from __future__ import annotations

from svcconf.chat import Channel, ForumTag, Role
from svcconf.chat.templates import TemplateChannel, TemplateSnapshot
from svcconf.config import EVERYONE
from svcconf.deploy_engine.export import Exported, export_config
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.uncarried import COMMUNITY_KINDS, not_carried

EVERYONE_PLACEHOLDER = "0"
UNNAMED_BASE = 1_000_000  # ids for channels the snapshot gives none, past any placeholder


def _channel(channel: TemplateChannel, index: int) -> Channel:
    return Channel(
        id=channel.id if channel.id is not None else str(UNNAMED_BASE + index),
        type=channel.type,
        name=channel.name or f"channel-{index + 1}",
        position=channel.position if channel.position is not None else index,
        parent_id=channel.parent_id,
        topic=channel.topic,
        nsfw=channel.nsfw,
        permission_overwrites=channel.permission_overwrites,
        rate_limit_per_user=channel.rate_limit_per_user or 0,
        bitrate=channel.bitrate,
        user_limit=channel.user_limit,
        available_tags=[ForumTag.model_validate(tag.model_dump()) for tag in channel.available_tags],
        default_reaction_emoji=channel.default_reaction_emoji,
        default_thread_rate_limit_per_user=channel.default_thread_rate_limit_per_user,
        default_sort_order=channel.default_sort_order,
        default_forum_layout=channel.default_forum_layout,
    )


def template_guild(snapshot: TemplateSnapshot) -> LiveGuild:
    """The snapshot as the guild it describes: placeholders for ids, list order for role positions."""
    roles = [
        Role.model_validate({**role.model_dump(), "position": position}) for position, role in enumerate(snapshot.roles)
    ]
    everyone = next((r for r in roles if r.id == EVERYONE_PLACEHOLDER), None)
    everyone = everyone or next((r for r in roles if r.name == EVERYONE), None)
    if everyone is None:  # a snapshot without @everyone leaves the guild's own as it is
        everyone = Role(id=EVERYONE_PLACEHOLDER, name=EVERYONE, position=0)
        roles.insert(0, everyone)
    channels = [_channel(channel, index) for index, channel in enumerate(snapshot.channels)]
    return LiveGuild(id=everyone.id, name=snapshot.name, features=[], roles=roles, channels=channels, bot_role_ids=[])


def template_config(snapshot: TemplateSnapshot) -> Exported:
    """The template's guild as a configuration, and what it had to leave out or cannot hold (its roles' gradients it
    holds: the snapshot's roles carry `colors`)."""
    exported = export_config(template_guild(snapshot), snapshot, ids=False)  # placeholders name no server's object
    if not any(role.id == EVERYONE_PLACEHOLDER or role.name == EVERYONE for role in snapshot.roles):
        exported.config.everyone_permissions = None
    exported.warnings[:0] = not_carried("a native template", COMMUNITY_KINDS)
    return exported
