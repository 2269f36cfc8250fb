"""The guild `bench.restore` nukes and brings back, and the second actor who nukes it, both through the sandbox's
HTTP API only (the running service's sandbox lives in another process).

The guild is built by its owner (a person's token, `POST /_sandbox/actors`) with the creation limits lifted for
the build alone (restored before anything is measured); its members are a crowd (`POST /_sandbox/guilds/{id}/
members`), each holding two of the plain roles; the nuker is one more member holding `Moderators`
(ADMINISTRATOR), the highest role but the bot's, as a moderator who turns on a server holds it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import requests

from bench.deploy import CHANNEL_CREATE, ROLE_CREATE

# harmless permissions the plain roles carry in turn (none of the dangerous ones, docs/05: a restore grants them back
# without `acknowledge`)
PLAIN_PERMISSIONS = [1 << 6, 1 << 10, 1 << 11, 1 << 14, 1 << 15, 1 << 16, 1 << 18, 1 << 20, 1 << 21, 1 << 26]
ADMINISTRATOR = 1 << 3
SEND_MESSAGES = 1 << 11
MEMBER_ROLE_REMOVE = "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}"


def gone(index: int) -> bool:
    """Whether the nuker deletes the object at `index` of its kind: three in five, 60 %."""
    return index % 5 < 3


def renamed(index: int) -> bool:
    """Whether the nuker renames the object at `index` (one in five, of those it keeps)."""
    return index % 5 == 3


@dataclass
class Person:
    """A person acting through the platform's HTTP API with a token of their own (no scheme)."""

    api: str  # .../api/v10
    token: str
    sent: int = 0
    limited: int = 0  # 429s met (a person's client waits them out, as the platform's app does)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        while True:
            answer = requests.request(
                method, f"{self.api}{path}", json=body, headers={"Authorization": self.token}, timeout=60
            )
            self.sent += 1
            if answer.status_code != 429:
                assert answer.status_code < 300, f"{method} {path}: {answer.status_code} {answer.text}"
                return answer.json() if answer.content else None
            self.limited += 1
            time.sleep(float(answer.json().get("retry_after", 0.5)))


def person(sandbox: str, user_id: str) -> Person:
    made = requests.post(f"{sandbox}/_sandbox/actors", json={"user_id": user_id}, timeout=30)
    assert made.status_code == 201, made.text
    return Person(api=f"{sandbox}/api/v10", token=made.json()["token"])


def view(sandbox: str, guild_id: str) -> dict[str, Any]:
    """The guild as the sandbox holds it (not a platform request: the request log does not count it)."""
    answer = requests.get(f"{sandbox}/_sandbox/guilds/{guild_id}", timeout=60)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


@dataclass
class Built:
    moderators: str
    roles: list[str]  # the plain roles' ids, in the order made
    channels: list[str]  # categories and channels, in the order made
    nuker: str
    members: list[str] = field(default_factory=list)


def build(sandbox: str, guild_id: str, owner: str, size: tuple[int, int, int, int]) -> Built:
    """`size`: roles (Moderators included), categories, channels (categories left out), members."""
    roles, categories, channels, members = size
    limits = requests.get(f"{sandbox}/_sandbox/stats", timeout=30).json()["config"]["route_limits"]
    lifted = {ROLE_CREATE: [1000, 1.0], CHANNEL_CREATE: [1000, 1.0]}
    assert requests.post(f"{sandbox}/_sandbox/config", json={"route_limits": lifted}, timeout=30).ok
    try:
        maker = person(sandbox, owner)
        top = maker.call("POST", f"/guilds/{guild_id}/roles", {"name": "Moderators", "permissions": str(ADMINISTRATOR)})
        plain = [
            maker.call(
                "POST",
                f"/guilds/{guild_id}/roles",
                {"name": f"role-{n:02d}", "permissions": str(PLAIN_PERMISSIONS[n % 10]), "color": 0x1000 * n},
            )["id"]
            for n in range(1, roles)
        ]
        made: list[str] = []
        per_category = channels // categories
        for c in range(categories):
            category = maker.call("POST", f"/guilds/{guild_id}/channels", {"name": f"Area {c}", "type": 4})["id"]
            made.append(category)
            for n in range(per_category + (channels % categories if c == categories - 1 else 0)):
                role = plain[(len(made) + n) % len(plain)]
                body = {
                    "name": f"room-{c}-{n}",
                    "type": 2 if n % 4 == 3 else 0,
                    "parent_id": category,
                    "permission_overwrites": [{"id": role, "type": 0, "allow": str(SEND_MESSAGES), "deny": "0"}],
                }
                made.append(maker.call("POST", f"/guilds/{guild_id}/channels", body)["id"])
    finally:
        assert requests.post(f"{sandbox}/_sandbox/config", json={"route_limits": limits}, timeout=30).ok
    nuker = _crowd(sandbox, guild_id, 1, [top["id"]], 1)[0]
    crowd = _crowd(sandbox, guild_id, members, plain, 2)
    return Built(moderators=top["id"], roles=plain, channels=made, nuker=nuker, members=crowd)


def _crowd(sandbox: str, guild_id: str, count: int, roles: list[str], per_member: int) -> list[str]:
    body = {"count": count, "roles": roles, "per_member": per_member}
    added = requests.post(f"{sandbox}/_sandbox/guilds/{guild_id}/members", json=body, timeout=60)
    assert added.status_code == 201, added.text
    first, last = int(added.json()["first"]), int(added.json()["last"])
    return [str(user_id) for user_id in range(first, last + 1)]


@dataclass
class Nuke:
    deleted_roles: list[str]
    deleted_channels: list[str]
    renamed: dict[str, str]  # id -> the nuker's name
    stripped: dict[str, list[str]]  # user id -> the roles taken from them by hand
    requests: int
    limited: int


def nuke(sandbox: str, guild_id: str, built: Built) -> Nuke:
    """The nuker deletes three in five roles and channels (categories included: their channels are left without
    one), renames one in five, and takes the roles it kept from every other member."""
    nuker = person(sandbox, built.nuker)
    deleted_roles = [role for n, role in enumerate(built.roles) if gone(n)]
    deleted_channels = [channel for n, channel in enumerate(built.channels) if gone(n)]
    names: dict[str, str] = {}
    for role in deleted_roles:
        nuker.call("DELETE", f"/guilds/{guild_id}/roles/{role}")
    for channel in deleted_channels:
        nuker.call("DELETE", f"/channels/{channel}")
    for n, role in enumerate(built.roles):
        if renamed(n):
            names[role] = f"nuked-role-{n}"
            nuker.call("PATCH", f"/guilds/{guild_id}/roles/{role}", {"name": names[role]})
    for n, channel in enumerate(built.channels):
        if renamed(n):
            names[channel] = f"nuked-{n}"
            nuker.call("PATCH", f"/channels/{channel}", {"name": names[channel]})
    kept = set(built.roles) - set(deleted_roles)
    held = {m["user_id"]: m["roles"] for m in view(sandbox, guild_id)["members"]}
    stripped: dict[str, list[str]] = {}
    for n, user_id in enumerate(built.members):
        if n % 2:
            continue
        taken = [role for role in held[user_id] if role in kept]
        for role in taken:
            nuker.call("DELETE", f"/guilds/{guild_id}/members/{user_id}/roles/{role}")
        if taken:
            stripped[user_id] = taken
    return Nuke(deleted_roles, deleted_channels, names, stripped, nuker.sent, nuker.limited)


def rename(sandbox: str, user_id: str, channel_id: str, name: str) -> None:
    person(sandbox, user_id).call("PATCH", f"/channels/{channel_id}", {"name": name})


# ---------------------------------------------------------------- what the nuke did, read from the sandbox


def held_names(view_of: dict[str, Any]) -> dict[str, set[str]]:
    """Each member's roles by name (the bot left out: its role is managed)."""
    names = {role["id"]: role["name"] for role in view_of["roles"]}
    return {m["user_id"]: {names[r] for r in m["roles"] if r in names} for m in view_of["members"]}


def lost_roles(before: dict[str, Any], after: dict[str, Any], bot_id: str) -> dict[str, set[str]]:
    """The roles (by their names before) each member held before and lacks now: what a restore grants back."""
    names = {role["id"]: role["name"] for role in before["roles"]}
    now = {m["user_id"]: set(m["roles"]) for m in after["members"]}
    lost = {}
    for member in before["members"]:
        gone_ = {names[r] for r in member["roles"] if r not in now.get(member["user_id"], set())}
        if gone_ and member["user_id"] != bot_id:
            lost[member["user_id"]] = gone_
    return lost


def lost_overwrites(before: dict[str, Any], after: dict[str, Any]) -> int:
    """Overwrites the backup holds that the guild lacks now: on deleted channels, and of deleted roles."""
    now = {c["id"]: {o["id"] for o in c["permission_overwrites"]} for c in after["channels"]}
    return sum(
        1
        for channel in before["channels"]
        for overwrite in channel["permission_overwrites"]
        if overwrite["id"] not in now.get(channel["id"], set())
    )


def stripped_channels(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """Channels still there that lost an overwrite with a deleted role."""
    now = {c["id"]: len(c["permission_overwrites"]) for c in after["channels"]}
    return {c["id"] for c in before["channels"] if c["id"] in now and now[c["id"]] < len(c["permission_overwrites"])}


def orphans(built: Built, done: Nuke, after: dict[str, Any]) -> set[str]:
    """Channels left without their category (deleted by the nuker) that are still there."""
    deleted = set(done.deleted_channels)
    return {c["id"] for c in after["channels"] if c["id"] in set(built.channels) and c["parent_id"] is None} - {
        c for c in built.channels if c not in deleted and _is_category(after, c)
    }


def _is_category(view_of: dict[str, Any], channel_id: str) -> bool:
    return any(c["id"] == channel_id and c["type"] == 4 for c in view_of["channels"])
