"""A fixture grown to a large bot: thousands of plain guilds the bot is in, some with given members.

For benchmarks and tests of what scales with the bot's guild count (`GET /users/@me/guilds` pages by 200).
"""

from __future__ import annotations

import copy
from typing import Any

FIRST_GUILD_ID = 1_300_000_000_000_000_000  # above the fixture's ids, so its guilds keep their order


def with_bot_in_guilds(fixture: dict[str, Any], count: int, *, members: dict[str, int] | None = None) -> dict[str, Any]:
    """`fixture` plus `count` guilds owned by the bot's application owner, the bot in each; `members` maps a
    user id to how many of the new guilds (the first ones) that user is a plain member of."""
    grown = copy.deepcopy(fixture)
    owner = grown["bot"]["id"]
    for index in range(count):
        guild_id = str(FIRST_GUILD_ID + index)
        users = [user_id for user_id, first in (members or {}).items() if index < first]
        grown["guilds"].append(
            {
                "id": guild_id,
                "name": f"Crowd {index}",
                "icon": None,
                "owner_id": owner,
                "features": [],
                "members": [{"user_id": user_id, "roles": []} for user_id in [owner, *users]],
                "roles": [{"id": guild_id, "name": "@everyone", "permissions": "1024", "position": 0}],
                "channels": [],
            }
        )
    return grown
