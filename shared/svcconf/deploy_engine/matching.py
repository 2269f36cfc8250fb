"""Which live object each object of a configuration is: by id first, then by name.

An id the guild has (for an object of the same kind and, for channels, the same type) claims that object whatever
its name or place, so a rename or a move is the same object. What is left matches by name among the objects no id
claimed: roles by name, categories by name, channels by name and type within their category (text-like names as
the platform stores them). An id the guild does not have (a configuration from another server) is ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from svcconf.chat import Channel as LiveChannel
from svcconf.chat import Role as LiveRole
from svcconf.config import CHANNEL_TYPES, Category, ServerConfig
from svcconf.config import Channel as ConfigChannel
from svcconf.config.channels import platform_channel_name
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.steps import category_key, channel_key, role_key


def by_name[T: (LiveRole, LiveChannel)](candidates: list[T], name: str) -> T | None:
    """The live object of that name: exact first, then ignoring case; the highest, then the oldest, wins."""
    ranked = sorted(candidates, key=lambda item: (-item.position, int(item.id)))
    exact = [item for item in ranked if item.name == name]
    if exact:
        return exact[0]
    folded = [item for item in ranked if item.name is not None and item.name.casefold() == name.casefold()]
    return folded[0] if folded else None


def config_channel_key(category_name: str | None, channel: ConfigChannel) -> str:
    channel_type = CHANNEL_TYPES[channel.type]
    parent = category_key(category_name) if category_name is not None else None
    return channel_key(parent, channel_type, platform_channel_name(channel.name, channel_type))


def placed_channels(config: ServerConfig) -> Iterator[tuple[str, Category | None, ConfigChannel]]:
    """Every channel with its path and category, in the configuration's order."""
    for c, category in enumerate(config.categories):
        for n, channel in enumerate(category.channels):
            yield f"categories[{c}].channels[{n}]", category, channel
    for n, channel in enumerate(config.channels):
        yield f"channels[{n}]", None, channel


@dataclass
class Matches:
    """Configuration key -> the live object it is; `claimed` and `claimed_roles` hold the matched live ids."""

    roles: dict[str, LiveRole] = field(default_factory=dict)
    categories: dict[str, LiveChannel] = field(default_factory=dict)
    channels: dict[str, LiveChannel] = field(default_factory=dict)
    claimed: set[str] = field(default_factory=set)  # channels and categories
    claimed_roles: set[str] = field(default_factory=set)

    def _claim[T: (LiveRole, LiveChannel)](self, table: dict[str, T], key: str, found: T | None) -> None:
        claimed = self.claimed_roles if table is self.roles else self.claimed
        if found is not None and found.id not in claimed:
            table[key] = found
            claimed.add(found.id)


def match_objects(live: LiveGuild, config: ServerConfig) -> Matches:
    matches = Matches()
    roles = {role.id: role for role in live.roles if not role.is_everyone(live.id)}
    categories = {channel.id: channel for channel in live.categories}
    channels = {channel.id: channel for channel in live.channels if not channel.is_category}
    placed: list[tuple[str | None, ConfigChannel]] = [(c.name, ch) for c in config.categories for ch in c.channels]
    placed += [(None, channel) for channel in config.channels]
    # By id, everything first: an id names one object wherever the configuration puts it.
    for role in config.roles:
        if role.id is not None:
            matches._claim(matches.roles, role_key(role.name), roles.get(role.id))
    for category in config.categories:
        if category.id is not None:
            matches._claim(matches.categories, category_key(category.name), categories.get(category.id))
    for category_name, channel in placed:
        found = channels.get(channel.id or "")
        if found is not None and found.type == CHANNEL_TYPES[channel.type]:
            matches._claim(matches.channels, config_channel_key(category_name, channel), found)
    # Then by name, among what no id claimed.
    for role in config.roles:
        key = role_key(role.name)
        if key not in matches.roles:
            free = [r for r in roles.values() if r.id not in matches.claimed_roles]
            matches._claim(matches.roles, key, by_name(free, role.name))
    for category in config.categories:
        key = category_key(category.name)
        if key not in matches.categories:
            free_categories = [c for c in categories.values() if c.id not in matches.claimed]
            matches._claim(matches.categories, key, by_name(free_categories, category.name))
    for category_name, channel in placed:
        key = config_channel_key(category_name, channel)
        if key in matches.channels:
            continue
        parent = matches.categories.get(category_key(category_name)) if category_name is not None else None
        if category_name is not None and parent is None:
            continue  # a channel of a category that does not exist yet cannot exist yet either
        channel_type = CHANNEL_TYPES[channel.type]
        siblings = [
            c
            for c in live.children_of(parent.id if parent else None)
            if c.type == channel_type and c.id not in matches.claimed
        ]
        matches._claim(matches.channels, key, by_name(siblings, platform_channel_name(channel.name, channel_type)))
    return matches


def with_ids(config: ServerConfig, ids: dict[str, str]) -> ServerConfig:
    """The configuration with the id of every object `ids` (configuration key -> live id) knows: what a deploy
    matched or created, so the caller's copy keeps them."""
    roles = [role.model_copy(update={"id": ids.get(role_key(role.name), role.id)}) for role in config.roles]
    categories = [
        category.model_copy(
            update={
                "id": ids.get(category_key(category.name), category.id),
                "channels": [
                    channel.model_copy(update={"id": ids.get(config_channel_key(category.name, channel), channel.id)})
                    for channel in category.channels
                ],
            }
        )
        for category in config.categories
    ]
    channels = [
        channel.model_copy(update={"id": ids.get(config_channel_key(None, channel), channel.id)})
        for channel in config.channels
    ]
    return config.model_copy(update={"roles": roles, "categories": categories, "channels": channels})
