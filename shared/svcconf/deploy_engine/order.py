"""The order of categories and channels, as people see it, made the configuration's.

The platform shows categories by position, and inside each category (and outside any) text-like channels above
voice-like ones, each group by position, ties by id (docs/05-deploy-engine.md, "Order"). So order is compared and
converged per group: a configuration that puts a voice channel between text channels is read as "this voice
channel among the voice ones", never as something no deploy could reach.

A created channel takes a position in its create body and a moved one in its modify body, chosen to land after
the object before it; only when that cannot give the configuration's order (the existing ones stand otherwise, or
no position fits between two neighbours) does one bulk position request set the group's positions. Channels the
configuration does not name keep their place relative to the named one before them.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

from svcconf.chat import Channel as LiveChannel
from svcconf.config import CHANNEL_TYPES, ServerConfig
from svcconf.deploy_engine.attributes import VOICE_LIKE
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.matching import Matches, config_channel_key, placed_channels
from svcconf.deploy_engine.steps import ChannelPosition, category_key

NEWER = 1 << 80  # beyond any snowflake: a channel created now sorts after every existing one at its position


def shown_order(channels: list[LiveChannel]) -> list[LiveChannel]:
    """Channels of one group as the platform lists them: by position, ties by id."""
    return sorted(channels, key=lambda channel: (channel.position, int(channel.id)))


def group_of(channel_type: int) -> str:
    return "voice" if channel_type in VOICE_LIKE else "text"


@dataclass(frozen=True)
class Slot:
    """One object of the configuration in a group: `live` None when the deploy creates it; `here` when it stands in
    this group now (else it moves in)."""

    ref: str
    live: LiveChannel | None
    here: bool


@dataclass
class GroupOrder:
    """What one group needs: positions for what is created or moved into it, and, when those cannot give the
    configuration's order, the positions of the whole group in one bulk request."""

    placed: dict[str, int]  # a newcomer's ref -> the position its create or modify body carries
    bulk: list[ChannelPosition]
    shown: dict[str, tuple[int, int]]  # a ref that was here -> (index as shown now, index after the bulk request)


def order_group(desired: list[Slot], unnamed: list[LiveChannel]) -> GroupOrder:
    placed = _placed(desired)
    if _simulated(desired, unnamed, placed) == [slot.ref for slot in desired]:
        return GroupOrder(placed=placed, bulk=[], shown={})
    now = shown_order([*(slot.live for slot in desired if slot.here and slot.live), *unnamed])
    ref_of = {slot.live.id: slot.ref for slot in desired if slot.here and slot.live}
    # Each unnamed channel follows the named one it follows now (the first ones lead).
    leading: list[LiveChannel] = []
    following: dict[str, list[LiveChannel]] = {}
    previous: str | None = None
    for channel in now:
        if channel.id in ref_of:
            previous = ref_of[channel.id]
        elif previous is None:
            leading.append(channel)
        else:
            following.setdefault(previous, []).append(channel)
    final: list[tuple[str, LiveChannel | None]] = [(channel.id, channel) for channel in leading]
    for slot in desired:
        final.append((slot.ref, slot.live))
        final += [(channel.id, channel) for channel in following.get(slot.ref, [])]
    index_now = {ref_of[channel.id]: index for index, channel in enumerate(now) if channel.id in ref_of}
    bulk = [
        ChannelPosition(ref=ref, position=index, previous=live.position if live else None)
        for index, (ref, live) in enumerate(final)
    ]
    shown = {ref: (index_now[ref], index) for index, (ref, _) in enumerate(final) if ref in index_now}
    placed = {ref: next(entry.position for entry in bulk if entry.ref == ref) for ref in placed}
    return GroupOrder(placed=placed, bulk=bulk, shown=shown)


def _placed(desired: list[Slot]) -> dict[str, int]:
    """A position for each newcomer just after the object before it (a created one may tie: its id is newer)."""
    placed: dict[str, int] = {}
    last: int | None = None
    for index, slot in enumerate(desired):
        if slot.here and slot.live is not None:
            last = slot.live.position
            continue
        following = next((s.live.position for s in desired[index + 1 :] if s.here and s.live), None)
        if last is None:
            position = 0
        elif slot.live is None and following is not None and last + 1 >= following:
            position = last
        else:
            position = last + 1
        placed[slot.ref] = last = position
    return placed


def _simulated(desired: list[Slot], unnamed: list[LiveChannel], placed: dict[str, int]) -> list[str]:
    """The configured refs in the order the platform would show them after the creates and moves."""
    entries: list[tuple[int, int, str | None]] = [(channel.position, int(channel.id), None) for channel in unnamed]
    for created, slot in enumerate(desired):
        if slot.here and slot.live is not None:
            entries.append((slot.live.position, int(slot.live.id), slot.ref))
        else:
            tie = int(slot.live.id) if slot.live is not None else NEWER + created
            entries.append((placed[slot.ref], tie, slot.ref))
    return [ref for _, _, ref in sorted(entries) if ref is not None]


Group = tuple[str | None, str]  # ("categories", "category"), or (a category's key or None, "text" or "voice")
CATEGORIES: Group = ("categories", "category")


@dataclass
class Orders:
    """Every group's order, and the group of each configured category and channel."""

    groups: dict[Group, GroupOrder] = field(default_factory=dict)
    group_keys: dict[str, Group] = field(default_factory=dict)

    def of(self, key: str) -> GroupOrder:
        return self.groups[self.group_keys[key]]

    def bulk(self) -> list[ChannelPosition]:
        return [entry for order in self.groups.values() for entry in order.bulk]


def plan_orders(live: LiveGuild, config: ServerConfig, matches: Matches, deleted: Set[str]) -> Orders:
    """Per group (the categories; the text-like and the voice-like channels of each category and outside any),
    what its order needs."""
    orders = Orders()
    named: dict[Group, list[Slot]] = {CATEGORIES: []}
    for category in config.categories:
        key = category_key(category.name)
        found = matches.categories.get(key)
        named[CATEGORIES].append(Slot(ref=key, live=found, here=found is not None))
        orders.group_keys[key] = CATEGORIES
    home: dict[str | None, str | None] = {None: None}  # a live category id -> the configuration's key for it
    for key, live_category in matches.categories.items():
        home[live_category.id] = key
    for _, placed_in, configured in placed_channels(config):
        key = config_channel_key(placed_in.name if placed_in else None, configured)
        parent = category_key(placed_in.name) if placed_in else None
        found = matches.channels.get(key)
        here = found is not None and home.get(found.parent_id, "-") == parent
        group = (parent, group_of(CHANNEL_TYPES[configured.type]))
        named.setdefault(group, []).append(Slot(ref=key, live=found, here=here))
        orders.group_keys[key] = group
    unnamed: dict[Group, list[LiveChannel]] = {}
    for live_channel in live.channels:
        if live_channel.id in matches.claimed or live_channel.id in deleted:
            continue
        if live_channel.is_category:
            unnamed.setdefault(CATEGORIES, []).append(live_channel)
        elif live_channel.parent_id in home:
            unnamed.setdefault((home[live_channel.parent_id], group_of(live_channel.type)), []).append(live_channel)
    orders.groups = {group: order_group(slots, unnamed.get(group, [])) for group, slots in named.items()}
    return orders
