"""Live guilds for the deploy's pure tests: built from the chat client's own models, as the platform answers."""

from __future__ import annotations

from typing import Any

from svcconf.chat import Channel, Role
from svcconf.config import ALL_PERMISSIONS, CHANNEL_TYPES, PERMISSION_BITS, ServerConfig, to_bitfield
from svcconf.deploy.live import LiveGuild

GUILD_ID = "1191000000000009001"
BOT_ROLE_ID = "1191000000000009002"
EVERYONE_PERMISSIONS = int(to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES", "READ_MESSAGE_HISTORY", "CONNECT", "SPEAK"]))
ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
BROAD = ALL_PERMISSIONS & ~ADMINISTRATOR


class GuildBuilder:
    """A guild with @everyone and the bot's role; roles and channels added in the order given."""

    def __init__(self, bot_permissions: int = BROAD, features: tuple[str, ...] = ("COMMUNITY", "NEWS")):
        self._next = 9100
        self.features = list(features)
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
            name="Test Guild",
            features=self.features,
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
