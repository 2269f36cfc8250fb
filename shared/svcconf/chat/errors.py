"""What the chat platform's refusals and failures mean to the service.

Each exception is a `ChatError` (so callers can catch the platform's problems as one family) and a
subclass of one of `svcconf.errors`' classes, which gives it the service's HTTP status when an
operation lets it through. Operations decide what an error means for them: `UnknownInvite` is
not an HTTP error for validateChatInvite (it becomes `{valid: false}`), `InvalidUserToken` makes
getChatGuilds refresh the stored token first.

Messages name the route's template and the platform's code, never a token, secret or OAuth code.
"""

from __future__ import annotations

from typing import Any

from svcconf.errors import (
    BadRequest,
    Conflict,
    FieldError,
    Forbidden,
    NotFound,
    ServiceError,
    ServiceUnavailable,
    UpstreamFailed,
)


class ChatError(ServiceError):
    """Base of the chat platform's errors. Mixed in before a `svcconf.errors` class for the status."""

    default_message = "The chat platform refused or failed the request."

    def __init__(
        self,
        message: str | None = None,
        *,
        platform_status: int | None = None,
        platform_code: int | str | None = None,
        route: str | None = None,
        details: list[FieldError] | None = None,
        **extra: Any,
    ):
        self.platform_status = platform_status  # the platform's HTTP status, when it answered
        self.platform_code = platform_code  # its JSON `code` (or the OAuth `error`)
        self.route = route  # e.g. "GET /invites/{code}"
        super().__init__(message, details=details, **extra)


class ChatApiError(ChatError, UpstreamFailed):
    """The platform refused a request in a way the service does not expect (a bug on our side): 502."""

    default_message = "The chat platform refused the request."


class ChatUnreadableAnswer(ChatApiError):
    """The platform answered in a shape the service cannot read (a field of a type its description does not give):
    the platform's failure, a 502; `field` names the first field that could not be read, for the log."""

    default_message = "The chat platform answered in a shape the service cannot read."

    def __init__(self, message: str | None = None, *, field: str = "", **kwargs: Any):
        self.field = field
        super().__init__(message, **kwargs)


class ChatInvalidRequest(ChatApiError):
    """The platform found the request's body invalid (code 50035); `platform_errors` lists the fields."""

    default_message = "The chat platform found the request invalid."

    def __init__(self, message: str | None = None, *, platform_errors: list[str] | None = None, **kwargs: Any):
        self.platform_errors = platform_errors or []  # "name: Must be between 1 and 100 in length."
        super().__init__(message, **kwargs)


# -- unknown objects (404) ---------------------------------------------------------------------


class UnknownInvite(ChatError, NotFound):
    """The invite does not exist, expired or was revoked (code 10006)."""

    default_message = "The invite is unknown or has expired."


class UnknownGuild(ChatError, NotFound):
    """The guild does not exist or the bot is not in it (code 10004: the platform does not tell which)."""

    default_message = "The server is unknown to the bot."


class UnknownTemplate(ChatError, NotFound):
    """No server template has this code (code 10057)."""

    default_message = "The server template is unknown."


class UnknownChannel(ChatError, NotFound):
    default_message = "The channel is unknown."


class UnknownRole(ChatError, NotFound):
    default_message = "The role is unknown."


class UnknownOverwrite(ChatError, NotFound):
    """The channel has no permission overwrite for that role or member (code 10009)."""

    default_message = "The permission overwrite is unknown."


class UnknownMember(ChatError, NotFound):
    """The user is not a member of the guild (codes 10007 Unknown Member, 10013 Unknown User)."""

    default_message = "The user is not a member of this server."


# -- the bot may not (403) ---------------------------------------------------------------------


class MissingAccess(ChatError, Forbidden):
    """The bot cannot see the resource (code 50001)."""

    default_message = "The bot has no access to this server or channel."


class MissingPermissions(ChatError, Forbidden):
    """The bot lacks a permission for the action, or the target role is above its own (code 50013)."""

    default_message = "The bot lacks the permissions for this action."


class ChatLimitReached(ChatError, Conflict):
    """A platform maximum is reached: roles (30005), channels (30013), overwrites (30060)."""

    default_message = "The server has reached one of the chat platform's limits."


# -- OAuth2 and tokens -------------------------------------------------------------------------


class InvalidGrant(ChatError, BadRequest):
    """The OAuth code or refresh token was refused (`invalid_grant`): used, expired, or another redirect."""

    default_message = "The chat-platform authorization code is invalid, expired or already used."


class InvalidUserToken(ChatError, BadRequest):
    """The platform refused a user's access token (401 on a Bearer call, code 50025): refresh it."""

    default_message = "The chat-platform sign-in has expired; sign in with the chat platform again."


class ChatClientRejected(ChatError, UpstreamFailed):
    """The platform refused the service's OAuth client id or secret (`invalid_client`)."""

    default_message = "The chat platform refused the service's OAuth client credentials."


class ChatBotUnauthorized(ChatError, UpstreamFailed):
    """The platform refused the bot token (401 on a Bot call)."""

    default_message = "The chat platform refused the bot's token."


class ChatNotConfigured(ChatError, ServiceUnavailable):
    """A credential the call needs (bot token, OAuth client) is not configured: 503."""

    default_message = "The chat-platform integration is not configured."


# -- the platform is slow, busy or down (502) ----------------------------------------------------


class ChatRateLimited(ChatError, UpstreamFailed):
    """The platform's rate limits would hold the call past its wait cap (or past its 429 retries)."""

    default_message = "The chat platform is rate limiting the service; try again later."

    def __init__(self, message: str | None = None, *, retry_after: float | None = None, **kwargs: Any):
        self.retry_after = retry_after  # seconds the platform asked for, when known
        super().__init__(message, **kwargs)


class ChatBlocked(ChatRateLimited):
    """A 429 without rate-limit headers: the platform's edge blocked this address. Never retried."""

    default_message = "The chat platform is temporarily blocking the service's requests."


class ChatUnavailable(ChatError, UpstreamFailed):
    """The platform answered 5xx, or could not be reached, on every attempt."""

    default_message = "The chat platform is not available right now."


class ChatTimeout(ChatUnavailable):
    """The platform did not answer in time on every attempt (still a 502: the contract's answer)."""

    default_message = "The chat platform did not answer in time."


# Platform JSON codes with their own exception. Anything else becomes a ChatApiError.
ERRORS_BY_CODE: dict[int, type[ChatError]] = {
    10003: UnknownChannel,
    10004: UnknownGuild,
    10006: UnknownInvite,
    10007: UnknownMember,
    10009: UnknownOverwrite,
    10011: UnknownRole,
    10057: UnknownTemplate,
    10013: UnknownMember,
    30005: ChatLimitReached,
    30013: ChatLimitReached,
    30060: ChatLimitReached,
    50001: MissingAccess,
    50013: MissingPermissions,
    50025: InvalidUserToken,
    50035: ChatInvalidRequest,
}

__all__ = [
    "ERRORS_BY_CODE",
    "ChatApiError",
    "ChatBlocked",
    "ChatBotUnauthorized",
    "ChatClientRejected",
    "ChatError",
    "ChatInvalidRequest",
    "ChatLimitReached",
    "ChatNotConfigured",
    "ChatRateLimited",
    "ChatTimeout",
    "ChatUnavailable",
    "ChatUnreadableAnswer",
    "InvalidGrant",
    "InvalidUserToken",
    "MissingAccess",
    "MissingPermissions",
    "UnknownChannel",
    "UnknownGuild",
    "UnknownInvite",
    "UnknownMember",
    "UnknownOverwrite",
    "UnknownRole",
    "UnknownTemplate",
]
