"""Tests' second actor and crowds of members.

- A person's token (`act_as`, or `POST /_sandbox/actors {user_id}`): sent as `Authorization: <token>` with no
  scheme, it acts through the platform's HTTP API as that member, under the same rules as the bot (membership,
  permissions, role hierarchy; the owner outranks every role): what a person does by hand in the platform's app,
  such as nuking a guild. Its changes reach the audit log under that person's id.
- A crowd (`add_members`, or `POST /_sandbox/guilds/{id}/members {count, roles, per_member}`): `count` new users
  joined to a guild, each holding `per_member` of `roles` (round robin, so every role is held), for the member
  list, backups of members' roles and restores of them: 200 in tests, 10,000 in the benchmark.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

FIRST_CROWD_USER = 1_400_000_000_000_000_000  # above every fixture id, so crowds sort after the fixture's users


class ActAs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: Annotated[str, Field(pattern=r"^[0-9]{17,20}$")]


class AddMembers(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: Annotated[int, Field(ge=1, le=100_000)]
    roles: list[Annotated[str, Field(pattern=r"^[0-9]{1,20}$")]] = Field(default_factory=list, max_length=250)
    per_member: Annotated[int, Field(ge=0, le=250)] = 1


def act_as(state: SandboxState, user_id: str) -> str:
    """A token acting as this user (KeyError: no such user)."""
    with state.lock:
        if user_id not in state.users:
            raise KeyError(user_id)
        token = f"person-{secrets.token_urlsafe(16)}"
        state.person_tokens[token] = user_id
        return token


def add_members(state: SandboxState, guild_id: str, count: int, roles: list[str], per_member: int = 1) -> list[str]:
    """`count` new users joined to the guild, each holding `per_member` of `roles` in turn; their ids, ascending."""
    with state.lock:
        guild = state.guilds[guild_id]
        unknown = [role_id for role_id in roles if role_id not in guild["roles"]]
        if unknown:
            raise ValueError(f"roles not in the guild: {', '.join(unknown)}")
        taken = [int(user_id) for user_id in state.users if int(user_id) >= FIRST_CROWD_USER]
        first = max(taken, default=FIRST_CROWD_USER - 1) + 1
        added = []
        for index in range(count):
            user_id = str(first + index)
            state.users[user_id] = {
                "id": user_id,
                "username": f"member{first + index - FIRST_CROWD_USER}",
                "global_name": None,
                "avatar": None,
                "discriminator": "0",
                "email": None,
                "verified": True,
            }
            held = [roles[(index + turn) % len(roles)] for turn in range(min(per_member, len(roles)))] if roles else []
            guild["members"][user_id] = {"roles": held, "joined_at": state.now() - 3600, "nick": None}
            added.append(user_id)
        return added
