"""What a deployment journals so that its rollback undoes exactly its own work, and nothing anyone did since.

- **Intents.** Before each write the worker journals the object's key and the time. A run cut off between a
  create and its checkpoint leaves an object the journal does not name; the resumed run adopts it as created
  only if an intent of the same key came just before it: the platform's ids carry their creation time (a
  snowflake's high bits), so an object a person made meanwhile, by the same name, is never taken for ours.
- **Fingerprints.** After each write the journal keeps a digest of the object as the platform answered that write
  (positions aside: others' creations and deletions shift them), and a shorter one per field, in the fields' order,
  to name what changed: about 60 bytes an object, so 500 of them fit the deployment's item. A rollback compares
  the live object with it: a difference means someone (a person, a later deployment) changed it since, and the
  rollback leaves it as it is and names it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from datetime import datetime
from typing import Any

from svcconf.chat import Channel, Guild, Role
from svcconf.deploy_engine.attributes import GuildSettings, attributes_of_type, live_role_attributes

PLATFORM_EPOCH_MS = 1_420_070_400_000  # the first millisecond of 2015: snowflakes count from it
CLOCK_SKEW_MS = 5_000  # between the worker's clock and the platform's
Fingerprint = str  # "<the whole's digest>.<each field's, in order>"
WHOLE_BYTES, FIELD_BYTES = 6, 2


def snowflake_time_ms(snowflake: str) -> int:
    """When the platform made the object of this id (Unix milliseconds)."""
    return (int(snowflake) >> 22) + PLATFORM_EPOCH_MS


def epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def made_by_the_write(object_id: str, intent_ms: int | None, longest_write_seconds: float) -> bool:
    """Whether the object was made within the write journaled at `intent_ms` (which lasts at most that long)."""
    if intent_ms is None:
        return False
    made = snowflake_time_ms(object_id)
    return intent_ms - CLOCK_SKEW_MS <= made <= intent_ms + longest_write_seconds * 1000 + CLOCK_SKEW_MS


def role_fields(role: Role) -> dict[str, Any]:
    return {"name": role.name, **live_role_attributes(role)}


def channel_fields(channel: Channel, deleted_roles: Collection[str] = ()) -> dict[str, Any]:
    """`deleted_roles`: the roles the deployment deletes, whose overwrites go with them (not anyone's change)."""
    overwrites = sorted(
        (o.model_dump() for o in channel.permission_overwrites if o.id not in deleted_roles),
        key=lambda o: (o["type"], o["id"]),
    )
    fields: dict[str, Any] = {"name": channel.name, "parent_id": channel.parent_id, "permission_overwrites": overwrites}
    return fields if channel.is_category else fields | attributes_of_type(channel)


def guild_fields(name: str, settings: GuildSettings) -> dict[str, Any]:
    return {"name": name, **settings.model_dump()}


def fingerprint(fields: dict[str, Any]) -> Fingerprint:
    parts = "".join(_digest(value, FIELD_BYTES) for value in fields.values())
    return f"{_digest(fields, WHOLE_BYTES)}.{parts}"


def fingerprint_of(answer: Role | Channel | Guild, deleted_roles: Collection[str] = ()) -> Fingerprint:
    """The fingerprint of what the platform answered a write with."""
    if isinstance(answer, Role):
        return fingerprint(role_fields(answer))
    if isinstance(answer, Channel):
        return fingerprint(channel_fields(answer, deleted_roles))
    return fingerprint(guild_fields(answer.name, GuildSettings.of(answer)))


def changed_fields(fields: dict[str, Any], after: Fingerprint | None) -> list[str]:
    """The fields of the live object (`fields`) that differ from what the deployment left; none without a
    fingerprint (a deployment journaled before they were kept)."""
    if after is None:
        return []
    now = fingerprint(fields)
    if now == after:
        return []
    width = FIELD_BYTES * 2
    now_parts, after_parts = now.split(".", 1)[1], after.split(".", 1)[1]
    names = [
        name
        for index, name in enumerate(fields)
        if len(now_parts) == len(after_parts)
        and now_parts[index * width : (index + 1) * width] != after_parts[index * width : (index + 1) * width]
    ]
    return sorted(names) or ["its attributes"]


def field_was(fields: dict[str, Any], after: Fingerprint | None, name: str, value: Any) -> bool:
    """Whether the deployment left field `name` (of an object whose fields are `fields`, in their order) at
    `value`, as far as the fingerprint's short per-field digest tells."""
    if after is None or name not in fields:
        return False
    width, index = FIELD_BYTES * 2, list(fields).index(name)
    parts = after.split(".", 1)[1]
    part = parts[index * width : (index + 1) * width]
    return len(parts) == len(fields) * width and part == _digest(value, FIELD_BYTES)


def _digest(value: Any, size: int) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()
