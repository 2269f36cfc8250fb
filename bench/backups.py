"""A backup made from the live guild: a 250-role, 500-channel, 10,000-member server of the sandbox, read by the
service (`svcconf.backups.live.read_live_backup`: the export with ids, members' roles, owner, administrators).

Printed: the platform requests beside the minimum the platform's page sizes allow (the guild with its roles, its
channels, the bot's member, and the member list 1,000 a page: a full last page asks once more), the wall time, and
the backup's size as JSON and compressed as it is stored (bzip2, `svcconf.store.blobs`). BENCH_QUICK: 30 roles,
60 channels, 300 members.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from bench.quick import scaled

ROOT = Path(__file__).resolve().parents[1]
ROLES = scaled(250, 30)  # @everyone and the bot's role included: the platform's maximum is 250
CHANNELS = scaled(500, 60)  # categories included: the platform's maximum is 500
MEMBERS = scaled(10_000, 300)
PER_CATEGORY = 9  # each category holds 9 channels: 50 categories and 450 channels make 500
GUILD = "1500000000000000001"
BOT_ID = "1191000000000000001"


def _guild(fixture: dict[str, Any]) -> dict[str, Any]:
    """A guild of ROLES roles (the bot's managed role on top, ADMINISTRATOR) and CHANNELS channels in categories of
    PER_CATEGORY, each channel with an overwrite of two roles."""
    owner = next(user["id"] for user in fixture["users"])
    roles = [{"id": GUILD, "name": "@everyone", "permissions": "104324673", "position": 0}]
    roles += [
        {"id": str(int(GUILD) + 100 + n), "name": f"role {n:03d}", "permissions": str(1 << (n % 30)), "position": n}
        for n in range(1, ROLES - 1)
    ]
    roles.append(
        {"id": str(int(GUILD) + 99), "name": "svc-bot", "permissions": "8", "position": ROLES - 1, "managed": True}
    )
    channels: list[dict[str, Any]] = []
    categories = CHANNELS // (PER_CATEGORY + 1)
    next_id = int(GUILD) + 10_000
    for c in range(categories):
        category_id = str(next_id)
        next_id += 1
        channels.append({"id": category_id, "type": 4, "name": f"area {c}", "position": c, "permission_overwrites": []})
        for n in range(PER_CATEGORY):
            allowed, denied = roles[1 + (c * PER_CATEGORY + n) % (ROLES - 2)]["id"], GUILD
            channels.append(
                {
                    "id": str(next_id),
                    "type": 0 if n % 3 else 2,
                    "name": f"room-{c}-{n}",
                    "position": n,
                    "parent_id": category_id,
                    "permission_overwrites": [
                        {"id": allowed, "type": 0, "allow": "1024", "deny": "0"},
                        {"id": denied, "type": 0, "allow": "0", "deny": "1024"},
                    ],
                }
            )
            next_id += 1
    return {
        "id": GUILD,
        "name": "Bench Backup Server",
        "icon": None,
        "owner_id": owner,
        "features": [],
        "members": [{"user_id": owner, "roles": []}, {"user_id": BOT_ID, "roles": [roles[-1]["id"]]}],
        "roles": roles,
        "channels": channels[:CHANNELS],
    }


def run() -> None:
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]
    from local.chat_sandbox import DEFAULT_FIXTURE, start_sandbox
    from local.chat_sandbox.actors import add_members
    from svcconf.backups.live import read_live_backup
    from svcconf.chat import ChatClient
    from svcconf.settings import Settings
    from svcconf.store import blobs

    fixture = json.loads(Path(DEFAULT_FIXTURE).read_text())
    fixture["guilds"].append(_guild(fixture))
    server, base_url = start_sandbox(fixture=fixture)
    try:
        plain = [role["id"] for role in fixture["guilds"][-1]["roles"][1:-1]]
        add_members(server.state, GUILD, MEMBERS - 2, plain, per_member=3)
        settings = Settings.model_validate(
            {"CHAT_API_BASE_URL": base_url, "SVC_BOT_TOKEN": fixture["bot"]["token"], "CHAT_MAX_WAIT_SECONDS": 60}
        )
        client = ChatClient(settings)
        server.state.clear_log()
        started = time.perf_counter()
        made = read_live_backup(client, GUILD, user_id=fixture["guilds"][-1]["owner_id"])
        seconds = time.perf_counter() - started
        log = server.state.request_log
        raw = blobs.json_bytes(made.backup_data)
        packed = blobs.pack(raw)
    finally:
        server.shutdown()
    members_total = MEMBERS
    pages = members_total // 1000 + 1  # a page shorter than 1,000 ends the list (a full last page asks once more)
    # the guild, its channels, the maker's member, and v4's AutoMod rules and onboarding (the bot holds MANAGE_GUILD;
    # a welcome screen only in a Community server, which this one is not)
    reads = 5
    minimum = reads + pages
    config_channels = sum(1 + len(c["channels"]) for c in made.backup_data["categories"])
    print(
        f"\nA backup from the live guild: {ROLES} roles, {CHANNELS} channels, {members_total:,} members "
        f"({made.members_count:,} holding roles the backup keeps, {len(made.backup_data['roles'])} roles and "
        f"{config_channels} channels in the configuration)"
    )
    print(f"  platform requests  {len(log):>6}   minimum {minimum} ({reads} reads + {pages} member pages of 1,000)")
    by_route: dict[str, int] = {}
    for entry in log:
        key = f"{entry['method']} {entry['route']}"
        by_route[key] = by_route.get(key, 0) + 1
    for route, count in sorted(by_route.items()):
        print(f"    {count:>4}  {route}")
    print(f"  wall time          {seconds:>6.2f} s")
    where = "inline in its item" if len(packed) <= 96 * 1024 else "in the documents bucket"
    print(
        f"  size               {len(raw) / 1024:>6.0f} KiB JSON, {len(packed) / 1024:.0f} KiB compressed "
        f"({len(packed) / len(raw):.1%}); {where}"
    )
    cold = sum(1 for entry in log if entry["route"] == "/users/@me")
    print(f"  beyond the minimum {len(log) - minimum:>6}   (the bot's own id, read once per container: {cold})")
    assert len(log) - cold == minimum, f"{len(log)} requests, {minimum} at least"
    assert math.isclose(made.members_count or 0, MEMBERS - 1, abs_tol=1)
