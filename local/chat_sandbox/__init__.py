"""A loopback sandbox of the chat platform's REST API (v10), for local runs, tests and benchmarks.

It answers the part of the API the service uses the way the platform does (docs/04-chat-platform.md): invites,
the OAuth2 token endpoint, `users/@me`, `users/@me/guilds`, the guild, its roles (create, modify, delete,
reorder), channels (create, modify, delete, reorder), permission overwrites and members; error bodies with
the platform's JSON codes (50035's nested `errors` included); 201/204 where the platform answers them;
rate-limit headers on every answer and per-bucket limits that answer 429 like the platform. Faults can be
injected (random 429s, global 429s, 5xx, an edge ban) from a seeded RNG, and every request is logged.
Where the platform's behaviour is observed rather than documented, the code says so in a comment.

The API root is `http://HOST:PORT/api/v10` (the client swaps only its base URL); `/_sandbox/...` is the
sandbox's own control API (control.py; docs/04-chat-platform.md documents it).

    state.py      the platform's state from fixture.json, settings, request log
    oauth.py      callers (Bot, Bearer, client credentials), the token endpoint, OAuth codes
    limits.py     rate-limit buckets and fault injection; config.py their settings
    routes/       one module per resource: invites, users, guilds and roles, channels and overwrites, members
    bodies.py     request bodies as pydantic models, refusals in the 50035 shape
    access.py     permission and hierarchy rules; payloads.py the platform's JSON objects
    protocol.py   what they all speak: the platform's constants and refusals, the request being answered
    dispatch.py   one request's way through; server.py the HTTP server; control.py `/_sandbox/...`

Run alone: `python -m local.chat_sandbox --port 8790`. In tests: `server, base_url = start_sandbox(seed=7,
rate_limit_probability=0.3)`; `server.state` is the `SandboxState`; `server.shutdown()` stops it.
"""

from __future__ import annotations

import sys
from importlib.util import find_spec
from pathlib import Path

if find_spec("svcconf") is None:  # `python -m local.chat_sandbox` without the layer on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shared"))

from local.chat_sandbox.config import DEFAULT_CONFIG, SandboxConfig
from local.chat_sandbox.protocol import API_ROOT
from local.chat_sandbox.server import SandboxServer, start_sandbox
from local.chat_sandbox.state import DEFAULT_FIXTURE, SandboxState

__all__ = [
    "API_ROOT",
    "DEFAULT_CONFIG",
    "DEFAULT_FIXTURE",
    "SandboxConfig",
    "SandboxServer",
    "SandboxState",
    "start_sandbox",
]
