"""A read-only check of a deployed stage through its public API: `make smoke URL=<ApiBaseUrl> TOKEN=<bearer JWT>`.

Nothing is written: an unknown operation, a CORS preflight, a call without a token, the deployments of a project
that does not exist, the caller's chat servers, and (with BOT_TOKEN) a code that does not exist. Each line
says what was asked, what came back and how long it took; the exit status is 1 if any check failed. It runs
against `make run` too (docs/11-production.md, step 13): `make smoke URL=http://127.0.0.1:3000 TOKEN=<user token>`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

TIMEOUT_SECONDS = 30  # API Gateway's own limit is 29 s
SMOKE_PROJECT = "smoke-check-read-only"
SMOKE_CODE = "SVC-0000-0000"  # well formed; minted codes are random, so none is ever this one
ORIGIN = "https://smoke.example"
Judge = Callable[[requests.Response], "str | None"]  # None when the answer is right, else what is wrong


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    ms: float


def _json(response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _error_body_ok(response: requests.Response, status: int) -> bool:
    body = _json(response)
    return response.status_code == status and body.get("code") == status and bool(body.get("message"))


def run_checks(url: str, token: str | None, bot_token: str | None) -> list[Check]:
    base = url.rstrip("/")
    session = requests.Session()
    checks: list[Check] = []

    def check(name: str, call: Callable[[], requests.Response], judge: Judge) -> None:
        started = time.perf_counter()
        try:
            response = call()
        except requests.RequestException as failed:
            checks.append(Check(name, False, f"no answer: {failed}", (time.perf_counter() - started) * 1000))
            return
        ms = (time.perf_counter() - started) * 1000
        problem = judge(response)
        checks.append(Check(name, problem is None, problem or f"{response.status_code}", ms))

    def post(operation: str, body: Any, headers: dict[str, str] | None = None) -> Callable[[], requests.Response]:
        return lambda: session.post(
            f"{base}/functions/{operation}", json=body, headers=headers or {}, timeout=TIMEOUT_SECONDS
        )

    def bearer() -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", "Origin": ORIGIN}

    check(
        "an unknown operation is the gateway's 404 in the service's error body",
        post("noSuchOperation", {}, {"Origin": ORIGIN}),
        lambda r: None if _error_body_ok(r, 404) else f"{r.status_code} {r.text[:200]}",
    )
    check(
        "the gateway's own answers carry the CORS origin",
        post("noSuchOperation", {}, {"Origin": ORIGIN}),
        lambda r: (
            None
            if r.headers.get("Access-Control-Allow-Origin")
            else f"{r.status_code} without Access-Control-Allow-Origin"
        ),
    )
    check(
        "a CORS preflight of deployToChat is answered",
        lambda: session.options(
            f"{base}/functions/deployToChat",
            headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"},
            timeout=TIMEOUT_SECONDS,
        ),
        lambda r: (
            None
            if r.status_code in (200, 204) and "POST" in r.headers.get("Access-Control-Allow-Methods", "")
            else f"{r.status_code}, Allow-Methods {r.headers.get('Access-Control-Allow-Methods')!r}"
        ),
    )
    check(
        "deployToChat without a bearer token is refused 401",
        post("deployToChat", {"action": "info", "project_id": SMOKE_PROJECT}),
        lambda r: None if _error_body_ok(r, 401) else f"{r.status_code} {r.text[:200]}",
    )
    if token:
        check(
            "deployToChat info with the token: a project never deployed is 404 (the token was accepted)",
            post("deployToChat", {"action": "info", "project_id": SMOKE_PROJECT}, bearer()),
            lambda r: None if _error_body_ok(r, 404) else f"{r.status_code} {r.text[:200]}",
        )
        check(
            "getChatGuilds with the token answers (200, or 400 while no chat account is linked)",
            post("getChatGuilds", {}, bearer()),
            lambda r: None if r.status_code in (200, 400) else f"{r.status_code} {r.text[:200]}",
        )
    if bot_token:
        check(
            "getConfigByCode with the bot token: a code that does not exist is 404",
            post("getConfigByCode", {"code": SMOKE_CODE}, {"x-bot-token": bot_token}),
            lambda r: None if _error_body_ok(r, 404) else f"{r.status_code} {r.text[:200]}",
        )
    return checks


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="A read-only check of a deployed stage through its public API.")
    parser.add_argument("--url", required=True, help="the stack's ApiBaseUrl output (or make run's base URL)")
    parser.add_argument("--token", help="a user's bearer JWT, as the web app sends it")
    parser.add_argument("--bot-token", help="the bot's token (x-bot-token), to check the bot's operations too")
    args = parser.parse_args(argv)
    checks = run_checks(args.url, args.token, args.bot_token)
    for item in checks:
        print(f"  {'ok  ' if item.ok else 'FAIL'} {item.ms:7.0f} ms  {item.name}: {item.detail}")
    failed = sum(not item.ok for item in checks)
    skipped = ("" if args.token else "; no TOKEN: the bearer checks were left out") + (
        "" if args.bot_token else "; no BOT_TOKEN: the bot's check was left out"
    )
    print(f"smoke: {len(checks) - failed} passed, {failed} failed against {args.url}{skipped}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
