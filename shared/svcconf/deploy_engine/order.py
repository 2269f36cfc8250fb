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

from dataclasses import dataclass

from svcconf.chat import Channel as LiveChannel
from svcconf.deploy_engine.attributes import VOICE_LIKE
from svcconf.deploy_engine.steps import ChannelPosition

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
    index_now = {ref_of.get(channel.id, channel.id): index for index, channel in enumerate(now)}
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
