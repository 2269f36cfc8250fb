"""The chat platform's transport: one `requests.Session`, auth headers, rate limits, retries and errors.

The typed calls are `ChatClient`'s (svcconf/chat/client.py), built on `ChatTransport`. One client is meant to
live as long as the Lambda container (`get_chat_client()`), so its connection pool and its learned rate-limit
buckets carry over between invocations.

Every call goes through `_send`, which:
- gives itself until a deadline: `chat_max_wait_seconds` from its start, clipped to the invocation's time left
  less a margin (`svcconf.api.budget`), so a call ends before the Lambda does; each request's timeout is clipped
  to that deadline too, and a call with no time left is a `ChatTimeout` without a request;
- during a user's request, first takes a place in the users' share of the bot's rate across instances
  (`user_share`, set by svcconf.limits), which waits for the next second or refuses with a 503;
- waits for the route's bucket and the global limit (`RateLimiter`), never past the deadline: past it,
  `ChatRateLimited`;
- retries a 429 after the wait it names (never a 429 without rate-limit headers: `ChatBlocked`);
- retries 500/502/503/504 and connection failures a bounded number of times with exponential
  backoff and jitter: then `ChatUnavailable` / `ChatTimeout`. A POST (create role, create channel,
  token exchange) is not retried after a read timeout, a 500 or a 504, because the platform may
  have applied it; a 502/503 or a failure to connect means it did not;
- never retries 401/403 (they count towards the platform's invalid-request ban);
- turns the platform's refusals into `svcconf.chat.errors` by the JSON `code`, not the message.

Tokens and secrets travel only in headers and form bodies; no log line or exception carries them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter

from svcconf.api import budget
from svcconf.chat.errors import (
    ERRORS_BY_CODE,
    ChatApiError,
    ChatBlocked,
    ChatBotUnauthorized,
    ChatClientRejected,
    ChatError,
    ChatInvalidRequest,
    ChatLimitReached,
    ChatNotConfigured,
    ChatRateLimited,
    ChatTimeout,
    ChatUnavailable,
    InvalidGrant,
    InvalidUserToken,
)
from svcconf.chat.models import ChatUser
from svcconf.chat.ratelimit import (
    GLOBAL_REQUESTS_PER_SECOND,
    MAJOR_PARAMETERS,
    RateLimitBlocked,
    RateLimiter,
    RateLimitWaitTooLong,
    RouteKey,
)
from svcconf.settings import get_settings

if TYPE_CHECKING:
    from svcconf.settings import Settings

logger = logging.getLogger(__name__)

CLIENT_VERSION = "1.0.0"
PROJECT_URL = "https://example.com/svcconf"  # placeholder: the project's public page
# The platform requires this exact User-Agent form ("<product> (<url>, <version>)") and may block
# others at its edge.
USER_AGENT = f"DiscordBot ({PROJECT_URL}, {CLIENT_VERSION})"

RETRY_STATUSES = frozenset({500, 502, 503, 504})
POST_RETRY_STATUSES = frozenset({502, 503})  # the request was not applied
# Below this a request cannot get an answer back (a TLS handshake alone takes longer): give up instead.
MIN_REQUEST_SECONDS = 0.05
MAX_AUDIT_REASON = 512
JsonBody = Mapping[str, Any] | Sequence[Any]

# Set while a user's request runs (svcconf.limits.platform_reads): claims one place in the users' share of the bot's
# rate, all instances together, before each request is sent; given the seconds the call may still wait, it waits
# or refuses (503). The deploy workers send without it.
user_share: ContextVar[Callable[[float], None] | None] = ContextVar("svcconf_chat_user_share", default=None)


class Auth:
    """How a call authenticates. The header value is never shown by repr or logs."""

    __slots__ = ("header", "identity", "kind")

    def __init__(self, kind: Literal["bot", "bearer", "client", "none"], header: str | None, identity: str):
        self.kind = kind
        self.header = header
        self.identity = identity  # rate-limit owner: "bot", a digest of the user token, "client", ""

    def __repr__(self) -> str:
        return f"Auth(kind={self.kind!r}, identity={self.identity!r})"


ANONYMOUS = Auth("none", None, "")


class Route:
    """A request's method and path template; the template names the rate-limit route."""

    __slots__ = ("major", "method", "path", "template")

    def __init__(self, method: str, template: str, **params: str | int):
        self.method = method
        self.template = template
        self.path = template.format_map({key: quote(str(value), safe="") for key, value in params.items()})
        self.major = next((str(params[name]) for name in MAJOR_PARAMETERS if name in params), "")

    @property
    def name(self) -> str:
        return f"{self.method} {self.template}"


def _new_session() -> requests.Session:
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=16, max_retries=0)  # retries are ours
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    session.headers["Accept"] = "application/json"
    return session


def _json_or_none(response: requests.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _flatten_errors(errors: Any, path: str = "") -> list[str]:
    """The platform's nested `errors` object as "field.path: message" lines."""
    if not isinstance(errors, Mapping):
        return []
    lines: list[str] = []
    for key, value in errors.items():
        if key == "_errors" and isinstance(value, list):
            for item in value:
                message = item.get("message") if isinstance(item, Mapping) else str(item)
                lines.append(f"{path or 'body'}: {message}")
            continue
        child = f"{path}[{key}]" if str(key).isdigit() else (f"{path}.{key}" if path else str(key))
        lines.extend(_flatten_errors(value, child))
    return lines


class ChatTransport:
    """Requests to the chat platform's REST API (v10): auth, rate limits, retries, deadlines and errors."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        bot_token: str | None = None,
        session: requests.Session | None = None,
        limiter: RateLimiter | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        max_retries: int = 3,
        max_rate_limit_retries: int = 6,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
    ):
        self.settings = settings or get_settings()
        self.base_url = self.settings.chat_api_base_url.rstrip("/")
        # The token endpoint answers under the versioned base too, so one base URL is enough.
        self.token_url = self.settings.chat_oauth_token_url or f"{self.base_url}/oauth2/token"
        self.timeout = self.settings.chat_timeout_seconds
        self.max_wait = self.settings.chat_max_wait_seconds
        self.session = session or _new_session()
        self._clock = clock
        self._sleep = sleep
        # The bot's own requests (a deploy's steps side by side) leave the users' share of the global rate free.
        own_rate = GLOBAL_REQUESTS_PER_SECOND - min(self.settings.chat_user_requests_per_second, 40)
        self.limiter = limiter or RateLimiter(clock=clock, sleep=sleep, global_per_second=own_rate)
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        self.max_retries = max_retries
        self.max_rate_limit_retries = max_rate_limit_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._bot_token = bot_token
        self._bot_user: ChatUser | None = None

    # -- invites ---------------------------------------------------------------------------

    def _has_bot_token(self) -> bool:
        return bool(self._resolve_bot_token())

    def _resolve_bot_token(self) -> str | None:
        # Read each time: in AWS the settings resolve it through Powertools' 5-minute secret cache,
        # so a rotated token is picked up without a cold start.
        return self._bot_token or self.settings.resolved_bot_token()

    def _bot_auth(self) -> Auth:
        token = self._resolve_bot_token()
        if not token:
            raise ChatNotConfigured("The chat-platform bot token (SVC_BOT_TOKEN) is not configured.")
        return Auth("bot", f"Bot {token}", "bot")

    @staticmethod
    def _bearer_auth(access_token: str) -> Auth:
        # Limits are per token; the digest keys them without keeping the token in the limiter.
        digest = hashlib.sha256(access_token.encode()).hexdigest()[:16]
        return Auth("bearer", f"Bearer {access_token}", f"user:{digest}")

    def _json(self, route: Route, auth: Auth, **kwargs: Any) -> Any:
        response = self._send(route, auth, **kwargs)
        data = _json_or_none(response)
        if data is None:
            raise ChatApiError(
                f"The chat platform answered {route.name} without a JSON body.",
                platform_status=response.status_code,
                route=route.name,
            )
        return data

    def _send(
        self,
        route: Route,
        auth: Auth,
        *,
        params: Mapping[str, str] | None = None,
        json_body: JsonBody | None = None,
        form: Mapping[str, str] | None = None,
        reason: str | None = None,
        url: str | None = None,
    ) -> requests.Response:
        key = RouteKey(route.method, route.template, route.major, auth.identity)
        headers: dict[str, str] = {}
        if auth.header:
            headers["Authorization"] = auth.header
        if json_body is not None:
            headers["Content-Type"] = "application/json"
        if reason:
            headers["X-Audit-Log-Reason"] = quote(reason[:MAX_AUDIT_REASON], safe="")
        body = json.dumps(json_body, separators=(",", ":")) if json_body is not None else None
        allowed = budget.clip(self.max_wait)  # the invocation's time left, less the margin to answer
        deadline = self._clock() + allowed
        failures = 0
        rate_limited = 0
        claim_share = user_share.get()
        while True:
            if claim_share is not None:
                claim_share(deadline - self._clock())
            try:
                waited = self.limiter.acquire(key, deadline)
            except RateLimitWaitTooLong as exc:
                raise ChatRateLimited(
                    f"The chat platform's {exc.reason} rate limit on {route.name} needs {exc.wait:.1f}s, "
                    f"more than the {allowed:.1f}s this call may still wait.",
                    retry_after=exc.wait,
                    route=route.name,
                ) from None
            if waited:
                logger.debug("waited %.3fs for the chat platform's rate limit on %s", waited, route.name)
            started = self._clock()
            timeout = min(self.timeout, deadline - started)
            if timeout < MIN_REQUEST_SECONDS:
                self.limiter.release(key)
                raise ChatTimeout(
                    f"No time was left in this invocation for {route.name} after {failures} attempt(s).",
                    route=route.name,
                )
            try:
                response = self.session.request(
                    route.method,
                    url or self.base_url + route.path,
                    params=params,
                    data=body if body is not None else form,
                    headers=headers,
                    timeout=timeout,
                )
            except requests.RequestException as exc:
                self.limiter.release(key)
                failures += 1
                timed_out = isinstance(exc, requests.Timeout)
                applied_maybe = route.method == "POST" and isinstance(exc, requests.ReadTimeout)
                kind = "timed out" if timed_out else f"failed to connect ({type(exc).__name__})"
                logger.warning("chat platform call %s %s (attempt %d)", route.name, kind, failures)
                if applied_maybe or failures > self.max_retries or not self._backoff(failures, deadline):
                    error = ChatTimeout if timed_out else ChatUnavailable
                    raise error(
                        f"The chat platform {kind} on {route.name} after {failures} attempt(s).", route=route.name
                    ) from None
                continue
            status = response.status_code
            logger.debug("chat platform %s -> %d in %.0f ms", route.name, status, (self._clock() - started) * 1000)
            if status == 429:
                rate_limited += 1
                self._rate_limited(route, key, response, rate_limited)
                continue
            self.limiter.record_response(key, response.headers)
            if status in RETRY_STATUSES:
                failures += 1
                retry_allowed = route.method != "POST" or status in POST_RETRY_STATUSES
                logger.warning("chat platform call %s answered %d (attempt %d)", route.name, status, failures)
                if not retry_allowed or failures > self.max_retries or not self._backoff(failures, deadline):
                    raise ChatUnavailable(
                        f"The chat platform answered {status} on {route.name} after {failures} attempt(s).",
                        platform_status=status,
                        route=route.name,
                    )
                continue
            if status >= 400:
                raise self._error(response, route, auth)
            return response

    def _rate_limited(self, route: Route, key: RouteKey, response: requests.Response, count: int) -> None:
        body = _json_or_none(response)
        try:
            verdict = self.limiter.record_rate_limited(key, response.headers, body if isinstance(body, dict) else None)
        except RateLimitBlocked:
            logger.error("chat platform answered 429 without rate-limit headers on %s: blocked, no retry", route.name)
            raise ChatBlocked(route=route.name, platform_status=429) from None
        logger.warning(
            "chat platform rate limit on %s (scope %s, bucket %s): retry after %.3fs",
            route.name,
            verdict.scope,
            response.headers.get("X-RateLimit-Bucket", "-"),
            verdict.retry_after,
        )
        if count > self.max_rate_limit_retries:
            raise ChatRateLimited(
                f"The chat platform rate-limited {route.name} {count} times in a row.",
                retry_after=verdict.retry_after,
                route=route.name,
                platform_status=429,
            )

    def _backoff(self, failures: int, deadline: float) -> bool:
        """Sleep before retry number `failures`; False when the sleep would pass the deadline."""
        ceiling = min(self.backoff_cap, self.backoff_base * 2 ** (failures - 1))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)  # "equal jitter"
        if self._clock() + delay > deadline:
            return False
        self._sleep(delay)
        return True

    @staticmethod
    def _error(response: requests.Response, route: Route, auth: Auth) -> ChatError:
        status = response.status_code
        body = _json_or_none(response)
        body = body if isinstance(body, dict) else {}
        oauth_error = body.get("error") if isinstance(body.get("error"), str) else None
        if oauth_error:  # the token endpoint answers in RFC 6749's shape
            error_class: type[ChatError] = {"invalid_grant": InvalidGrant, "invalid_client": ChatClientRejected}.get(
                oauth_error, ChatApiError
            )
            message = None if error_class is InvalidGrant else f"The chat platform's token endpoint said {oauth_error}."
            return error_class(message, platform_status=status, platform_code=oauth_error, route=route.name)
        code = body.get("code") if isinstance(body.get("code"), int) else None
        text = body.get("message") if isinstance(body.get("message"), str) else ""
        if status == 401 and code in (None, 0, 40001, 50025):
            error_class = {"bearer": InvalidUserToken, "bot": ChatBotUnauthorized}.get(auth.kind, ChatApiError)
        else:
            error_class = ERRORS_BY_CODE.get(code, ChatApiError) if code is not None else ChatApiError
        detail = f"The chat platform answered {status} on {route.name}"
        detail += f" (code {code}: {text})." if code is not None else "."
        kwargs: dict[str, Any] = {"platform_status": status, "platform_code": code, "route": route.name}
        if error_class is ChatInvalidRequest:
            problems = _flatten_errors(body.get("errors"))
            suffix = f" {'; '.join(problems)}" if problems else ""
            return ChatInvalidRequest(detail + suffix, platform_errors=problems, **kwargs)
        if issubclass(error_class, ChatApiError | ChatLimitReached):
            return error_class(detail, **kwargs)
        return error_class(**kwargs)
