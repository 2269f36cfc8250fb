"""Live guilds for the deploy's pure tests: built from the chat client's own models, as the platform answers."""

from __future__ import annotations

from typing import Any

from svcconf.chat import Channel, ForumTag, Role
from svcconf.chat.models import DefaultReaction
from svcconf.config import ALL_PERMISSIONS, CHANNEL_TYPES, PERMISSION_BITS, ServerConfig, to_bitfield
from svcconf.config.vocabulary import REQUIRE_TAG_FLAG
from svcconf.deploy_engine.attributes import GuildSettings
from svcconf.deploy_engine.live import LiveGuild

GUILD_ID = "1191000000000009001"
BOT_ROLE_ID = "1191000000000009002"
EVERYONE_PERMISSIONS = int(to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES", "READ_MESSAGE_HISTORY", "CONNECT", "SPEAK"]))
ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
BROAD = ALL_PERMISSIONS & ~ADMINISTRATOR


class GuildBuilder:
    """A guild with @everyone and the bot's role; roles and channels added in the order given."""

    def __init__(
        self,
        bot_permissions: int = BROAD,
        features: tuple[str, ...] = ("COMMUNITY", "NEWS"),
        name: str = "Community",
    ):
        self.name = name  # community_config()'s: a deploy renames a guild whose name differs
        self._next = 9100
        self.features = list(features)
        self.settings = GuildSettings()
        self.roles = [
            Role(id=GUILD_ID, name="@everyone", permissions=str(EVERYONE_PERMISSIONS), position=0),
            Role(id=BOT_ROLE_ID, name="svc-bot", permissions=str(bot_permissions), position=1, managed=True),
        ]
        self.channels: list[Channel] = []

    def _id(self) -> str:
        self._next += 1
        return f"11910000000000{self._next}"

    def role(self, name: str, *permissions: str, position: int | None = None, **attributes: Any) -> str:
        """A role below the bot's (or at `position`, shifting the others up); returns its id."""
        role_id = self._id()
        bot = next(role for role in self.roles if role.id == BOT_ROLE_ID)
        position = bot.position if position is None else position
        for role in self.roles:
            if role.position >= position and role.id != GUILD_ID:
                role.position += 1
        self.roles.append(
            Role(id=role_id, name=name, permissions=to_bitfield(permissions), position=position, **attributes)
        )
        return role_id

    def category(self, name: str, overwrites: list[dict[str, Any]] | None = None) -> str:
        return self.channel(name, "category", overwrites=overwrites)

    def channel(
        self,
        name: str,
        kind: str = "text",
        parent: str | None = None,
        overwrites: list[dict[str, Any]] | None = None,
        **attributes: Any,
    ) -> str:
        channel_id = self._id()
        siblings = [c for c in self.channels if c.parent_id == parent]
        self.channels.append(
            Channel(
                id=channel_id,
                type=CHANNEL_TYPES[kind],
                name=name,
                parent_id=parent,
                position=len(siblings),
                permission_overwrites=overwrites or [],
                **attributes,
            )
        )
        return channel_id

    def build(self) -> LiveGuild:
        return LiveGuild(
            id=GUILD_ID,
            name=self.name,
            features=self.features,
            settings=self.settings.model_copy(),
            roles=[role.model_copy() for role in self.roles],
            channels=[channel.model_copy() for channel in self.channels],
            bot_role_ids=[BOT_ROLE_ID],
        )


def overwrite(target_id: str, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"id": target_id, "type": 0, "allow": to_bitfield(allow), "deny": to_bitfield(deny)}


def community_config() -> ServerConfig:
    """A small community server: three roles, a public and a private category, a top-level channel."""
    return ServerConfig.model_validate(
        {
            "name": "Community",
            "roles": [
                {"name": "Admin", "color": "#E74C3C", "hoist": True, "permissions": ["ADMINISTRATOR"]},
                {
                    "name": "Moderator",
                    "color": 3447003,
                    "hoist": True,
                    "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"],
                },
                {"name": "Member", "permissions": ["SEND_MESSAGES"]},
            ],
            "categories": [
                {
                    "name": "Community",
                    "channels": [
                        {"name": "General Chat", "type": "text", "topic": "Say hello"},
                        {"name": "Lounge", "type": "voice", "user_limit": 10},
                    ],
                },
                {
                    "name": "Staff",
                    "overwrites": [
                        {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                        {"role": "Moderator", "allow": ["VIEW_CHANNEL"]},
                    ],
                    "channels": [
                        {"name": "mod-log", "type": "text", "slowmode_seconds": 30},
                        {
                            "name": "staff-talk",
                            "type": "text",
                            "overwrites": [{"role": "Member", "deny": ["SEND_MESSAGES"]}],
                        },
                    ],
                },
            ],
            "channels": [{"name": "rules", "type": "text", "topic": "Read first"}],
        }
    )


TAGS = [{"name": "Bug", "emoji": "🐛"}, {"name": "Idea"}, {"name": "Staff pick", "moderated": True}]


def v2_body() -> dict[str, Any]:
    """Every field version 2 adds."""
    return {
        "name": "Community",
        "everyone_permissions": ["VIEW_CHANNEL", "SEND_MESSAGES"],
        "settings": {
            "verification_level": "medium",
            "default_notifications": "only_mentions",
            "explicit_content_filter": "all_members",
            "afk_channel": "Quiet Room",
            "afk_timeout": 900,
            "system_channel": "welcome",
            "system_channel_flags": ["SUPPRESS_JOIN_NOTIFICATION_REPLIES"],
            "preferred_locale": "en-GB",
            "description": "A server with everything",
        },
        "roles": [{"name": "Helper", "emoji": "🛟", "permissions": ["SEND_MESSAGES"]}],
        "categories": [
            {
                "name": "Hall",
                "channels": [
                    {"name": "welcome"},
                    {"name": "Quiet Room", "type": "voice", "bitrate": 48000, "video_quality": "full"},
                    {
                        "name": "ideas",
                        "type": "forum",
                        "tags": TAGS,
                        "default_reaction": "👍",
                        "default_thread_slowmode_seconds": 60,
                        "default_sort": "creation_date",
                        "default_layout": "gallery",
                        "require_tag": True,
                    },
                ],
            }
        ],
    }


def v2_config(**changes: Any) -> ServerConfig:
    body = v2_body()
    body["settings"] |= changes
    return ServerConfig.model_validate(body)


def holding_guild() -> GuildBuilder:
    """A guild that already holds v2_config() exactly, as the platform answers."""
    guild = GuildBuilder(features=("COMMUNITY", "NEWS", "ROLE_ICONS"))
    guild.roles[0].permissions = to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES"])
    guild.role("Helper", "SEND_MESSAGES", unicode_emoji="🛟")
    hall = guild.category("Hall")
    welcome = guild.channel("welcome", parent=hall)
    quiet = guild.channel("Quiet Room", "voice", parent=hall, bitrate=48000, user_limit=0, video_quality_mode=2)
    tags = [
        ForumTag(id="1191000000000009901", name="Bug", emoji_name="🐛"),
        ForumTag(id="1191000000000009902", name="Idea"),
        ForumTag(id="1191000000000009903", name="Staff pick", moderated=True),
    ]
    guild.channel(
        "ideas",
        "forum",
        parent=hall,
        available_tags=tags,
        default_reaction_emoji=DefaultReaction(emoji_name="👍"),
        default_thread_rate_limit_per_user=60,
        default_sort_order=1,
        default_forum_layout=2,
        flags=REQUIRE_TAG_FLAG,
    )
    guild.settings = GuildSettings(
        verification_level=2,
        default_message_notifications=1,
        explicit_content_filter=2,
        afk_channel_id=quiet,
        afk_timeout=900,
        system_channel_id=welcome,
        system_channel_flags=1 << 3,
        preferred_locale="en-GB",
        description="A server with everything",
    )
    return guild
