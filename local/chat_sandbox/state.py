"""The platform's state (loaded from the fixture), the sandbox's settings and its request log, behind one lock."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from local.chat_sandbox import oauth
from local.chat_sandbox.config import SandboxConfig
from local.chat_sandbox.limits import Throttle
from local.chat_sandbox.protocol import PLATFORM_EPOCH_MS

DEFAULT_FIXTURE = Path(__file__).with_name("fixture.json")
ROLE_CREATE, CHANNEL_CREATE = "POST /guilds/{guild_id}/roles", "POST /guilds/{guild_id}/channels"


class SandboxState:
    """Guilds, users, tokens and invites as the platform holds them; tests read and change them here."""

    _fixture: dict[str, Any]  # as loaded: reset() goes back to it
    _last_id: int  # the last snowflake handed out

    def __init__(self, fixture: dict[str, Any] | str | Path | None = None, **config: Any):
        if isinstance(fixture, dict):
            self._fixture = copy.deepcopy(fixture)
        else:
            self._fixture = json.loads(Path(fixture or DEFAULT_FIXTURE).read_text(encoding="utf-8"))
        self.lock = threading.RLock()
        self.config = SandboxConfig().changed(config)
        self.clock_offset = 0.0
        self._load(self._fixture)

    # -- for tests and the control API ---------------------------------------------------------

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Change settings (SandboxConfig's fields); an unknown name or a bad value raises ValueError."""
        with self.lock:
            self.config = self.config.changed(changes)
            if "seed" in changes:
                self.throttle.rng.seed(self.config.seed)
            return self.config.model_dump()

    def reset(self, *, config: bool = False) -> None:
        """Reload the fixture, forget buckets, quotas and the log, set the clock back to real time; with
        `config`, restore the default settings too."""
        with self.lock:
            if config:
                self.config = SandboxConfig()
            self.clock_offset = 0.0
            self._load(self._fixture)

    def clock(self) -> float:
        """The sandbox's own time (epoch seconds): real time plus what tests moved it forward. The creation
        quota runs on it, and `make run`'s scheduler; tokens, invites and ids stay on real time."""
        return time.time() + self.clock_offset

    def advance_clock(self, seconds: float) -> float:
        with self.lock:
            self.clock_offset += seconds
            return self.clock()

    def use_quota(self, guild_id: str, *, roles: int = 0, channels: int = 0, age_seconds: float = 0.0) -> None:
        """Count creations made `age_seconds` ago against a guild's quota, as if the bot had made them."""
        with self.lock:
            for route, count in ((ROLE_CREATE, roles), (CHANNEL_CREATE, channels)):
                if count:
                    self.throttle.created(route, guild_id, self.config, count, age_seconds)

    def quota(self, guild_id: str) -> dict[str, dict[str, float]]:
        with self.lock:
            return {
                name: self.throttle.quota(route, guild_id, self.config)
                for name, route in (("roles", ROLE_CREATE), ("channels", CHANNEL_CREATE))
                if route in self.config.creation_quotas
            }

    @property
    def request_log(self) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(entry) for entry in self._log]

    def requests(self, method: str | None = None, route: str | None = None) -> list[dict[str, Any]]:
        """Logged platform requests, optionally of one method and route template."""
        return [
            entry
            for entry in self.request_log
            if (method is None or entry["method"] == method) and (route is None or entry["route"] == route)
        ]

    @property
    def in_flight(self) -> list[dict[str, Any]]:
        """The requests the sandbox is answering now (their log entries so far): what a test kills a client amid."""
        with self.lock:
            return [dict(entry) for entry in self._arrived.values()]

    def arrived(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self._arrived[id(entry)] = entry

    def clear_log(self) -> None:
        with self.lock:
            self._log.clear()
            self.throttle.faults.clear()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "requests": len(self._log),
                "by_status": dict(Counter(str(entry["status"]) for entry in self._log)),
                "by_route": dict(Counter(f"{entry['method']} {entry['route']}" for entry in self._log)),
                "faults": dict(self.throttle.faults),
                "config": self.config.model_dump(mode="json"),
            }

    def mint_code(
        self,
        user_id: str,
        redirect_uri: str | None = None,
        scope: str | None = None,
        code_challenge: str | None = None,
    ) -> str:
        """A fresh single-use OAuth code for a user, as if they had just approved the app (with `code_challenge`,
        an S256 PKCE challenge: its exchange then needs the verifier)."""
        with self.lock:
            return oauth.mint_code(self, user_id, redirect_uri, scope, code_challenge)

    def guild(self, guild_id: str) -> dict[str, Any]:
        """The live state of one guild (a copy), for tests to assert on."""
        with self.lock:
            return copy.deepcopy(self.guilds[guild_id])

    # -- state ----------------------------------------------------------------------------------

    @staticmethod
    def now() -> float:
        return time.time()

    def next_id(self) -> str:
        """A fresh snowflake: the current time in its high bits, always increasing."""
        snowflake = (int(self.now() * 1000) - PLATFORM_EPOCH_MS) << 22
        self._last_id = max(snowflake, self._last_id + 1)
        return str(self._last_id)

    def record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self._arrived.pop(id(entry), None)
            self._log.append(entry)
            overflow = len(self._log) - self.config.log_limit
            if overflow > 0:
                del self._log[:overflow]

    def _load(self, fixture: dict[str, Any]) -> None:
        now = self.now()
        self.application = dict(fixture["application"])
        self.bot = dict(fixture["bot"])
        self.users = {user["id"]: dict(user) for user in fixture.get("users", [])}
        self.users[self.bot["id"]] = {**self.bot, "bot": True, "discriminator": "0", "email": None, "verified": True}
        self.codes, self.access_tokens, self.refresh_tokens = oauth.load_grants(
            self.application, fixture.get("oauth", {}), now
        )
        self.guilds: dict[str, dict[str, Any]] = {}
        self.channel_guild: dict[str, str] = {}
        for raw in fixture.get("guilds", []):
            # deep copies: a test that changes a guild's `features` (or any list of it) must not change the fixture
            guild = {
                key: copy.deepcopy(value) for key, value in raw.items() if key not in ("members", "roles", "channels")
            }
            guild["members"] = {
                member["user_id"]: {"roles": list(member.get("roles", [])), "joined_at": now - 86400, "nick": None}
                for member in raw.get("members", [])
            }
            guild["roles"] = {role["id"]: copy.deepcopy(role) for role in raw.get("roles", [])}
            guild["channels"] = {}
            for channel in raw.get("channels", []):
                guild["channels"][channel["id"]] = {**copy.deepcopy(channel), "guild_id": raw["id"]}
                self.channel_guild[channel["id"]] = raw["id"]
            self.guilds[raw["id"]] = guild
        self.person_tokens: dict[str, str] = {}  # a second actor's token -> user id (actors.py)
        self.acting_id: str | None = None  # set while a person's request is answered (access.actor_id)
        self.invites = {
            invite["code"]: {
                **invite,
                "expires_at": None if invite.get("expires_in_seconds") is None else now + invite["expires_in_seconds"],
            }
            for invite in fixture.get("invites", [])
        }
        self.throttle = Throttle(self.config.seed, clock=self.clock)
        self._log: list[dict[str, Any]] = []
        self._arrived: dict[int, dict[str, Any]] = {}  # requests arrived, not yet answered: logged once answered
        self._last_id = 0
