"""The server configuration: its schema, its permission-safety lint and the chat platform's permission vocabulary.
May import: the foundation (errors, settings, clock, observability), nothing else.
"""

from __future__ import annotations

from svcconf.config.channels import Category, Channel, ChannelType, ForumTag, Overwrite, platform_channel_name
from svcconf.config.lint import LINT_RULES, LintRule, LintWarning, lint_config
from svcconf.config.permissions import (
    ALL_PERMISSIONS,
    CHANNEL_TYPES,
    MAX_CHANNELS,
    MAX_CHANNELS_PER_CATEGORY,
    MAX_COLOR,
    MAX_FORUM_TOPIC_LENGTH,
    MAX_NAME_LENGTH,
    MAX_OVERWRITES,
    MAX_ROLES,
    MAX_SLOWMODE_SECONDS,
    MAX_TOPIC_LENGTH,
    MAX_VOICE_USER_LIMIT,
    PERMISSION_BITS,
    Permission,
    from_bitfield,
    has_permission,
    to_bitfield,
)
from svcconf.config.roles import EVERYONE, Role
from svcconf.config.schema import ServerConfig
from svcconf.config.server_settings import Settings

__all__ = [
    "ALL_PERMISSIONS",
    "CHANNEL_TYPES",
    "EVERYONE",
    "LINT_RULES",
    "MAX_CHANNELS",
    "MAX_CHANNELS_PER_CATEGORY",
    "MAX_COLOR",
    "MAX_FORUM_TOPIC_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_OVERWRITES",
    "MAX_ROLES",
    "MAX_SLOWMODE_SECONDS",
    "MAX_TOPIC_LENGTH",
    "MAX_VOICE_USER_LIMIT",
    "PERMISSION_BITS",
    "Category",
    "Channel",
    "ChannelType",
    "ForumTag",
    "LintRule",
    "LintWarning",
    "Overwrite",
    "Permission",
    "Role",
    "ServerConfig",
    "Settings",
    "from_bitfield",
    "has_permission",
    "lint_config",
    "platform_channel_name",
    "to_bitfield",
]
