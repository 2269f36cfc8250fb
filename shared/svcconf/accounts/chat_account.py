"""A user's chat-platform account: the link to the bearer user (svcconf.accounts.sign_in makes it), and their servers.

The link (identity and tokens) is stored per bearer user; tokens are refreshed when expired or refused.
The platform rotates refresh tokens (one use each), so two requests of one user that refresh at once would
sign the user out: the loser's refresh token is refused. The loser waits briefly for the winner's tokens to be
stored (they carry a new revision) and uses them instead.

Bot presence comes from the bot's guild set, which costs one platform request per 200 guilds the bot is in: it
is kept in the chat-cache table, shared by every instance, and fetched again when older than
`CHAT_BOT_GUILDS_CACHE_SECONDS` (60 s), by one instance at a time while the others answer from the stored set.
"""

from __future__ import annotations

import time
from datetime import timedelta

from pydantic import BaseModel, Field

from svcconf.api import budget
from svcconf.api.auth import BearerUser
from svcconf.chat import ChatClient, InvalidGrant, InvalidUserToken, PartialGuild, TokenGrant, get_chat_client
from svcconf.clock import utc_now
from svcconf.errors import BadRequest, Forbidden
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store.chat_cache import ChatCacheRepository
from svcconf.store.chat_links import ChatLink, ChatLinkRepository

# Refresh a little early: a token that expires during the call is refused mid-way.
EXPIRY_MARGIN = timedelta(minutes=1)
# A concurrent refresh stores its tokens within milliseconds of the platform's answer; a refused refresh token
# whose link does not change within this is really refused (revoked, or the app deauthorised).
CONCURRENT_REFRESH_WAIT_SECONDS = 1.0
REVISION_POLL_SECONDS = 0.05
# While one instance fetches the bot's guild set, the others answer from the stored one if it is at most this old.
BOT_GUILDS_MAX_STALE_SECONDS = 600
BOT_GUILDS_REFRESH_LEASE_SECONDS = 15  # one getChatGuilds invocation's timeout: a lost refresher frees it then


class NotLinked(BadRequest):
    default_message = "Sign in with the chat platform again: no usable chat account is linked to this user."


class LinkRefused(NotLinked):
    default_message = (
        "Sign in with the chat platform again: the chat platform refused this account's sign-in (revoked, or the "
        "app was removed), and it is not asked again until you sign in anew."
    )


class ChatIdentity(BaseModel):
    email: str | None
    chatUserId: str  # noqa: N815 - the specification's field names
    chatUsername: str  # noqa: N815
    chatAvatar: str | None  # noqa: N815
    chatAccessToken: str  # noqa: N815
    linked: bool = Field(description="The chat account was linked to the bearer user who sent this request.")


class GuildSummary(BaseModel):
    id: str
    name: str
    icon: str | None = Field(description="CDN URL of the server's icon, or null.")
    owner: bool
    permissions: str = Field(description="The user's server-level permissions, as the platform's decimal string.")
    can_manage: bool = Field(description="Owner, ADMINISTRATOR or MANAGE_GUILD: may deploy to this server.")
    bot_present: bool = Field(description="The service's bot is a member of the server.")


def chat_links() -> ChatLinkRepository:
    settings = get_settings()
    return ChatLinkRepository(settings.chat_links_table, settings.kms_key_id or "")


def _link(
    user: BearerUser, grant: TokenGrant, chat_user_id: str, chat_username: str, previous: ChatLink | None
) -> ChatLink:
    now = utc_now()
    return ChatLink(
        user_id=user.sub,
        chat_user_id=chat_user_id,
        chat_username=chat_username,
        access_token=grant.access_token,
        # The platform may omit a new refresh token on refresh: the old one stays valid then.
        refresh_token=grant.refresh_token or (previous.refresh_token if previous else None),
        expires_at=grant.expires_at(now),
        scope=grant.scope,
        linked_at=previous.linked_at if previous else now,
    )


def new_link(user: BearerUser, grant: TokenGrant, chat_user_id: str, chat_username: str) -> ChatLink:
    """A sign-in's link: the identity and its tokens, for the bearer user (svcconf.accounts.sign_in)."""
    return _link(user, grant, chat_user_id, chat_username, previous=None)


def _refreshed(client: ChatClient, user: BearerUser, link: ChatLink) -> ChatLink:
    """The link with fresh tokens: ours from the platform, or, if another request refreshed first, theirs."""
    if link.refresh_token is None:
        raise _dead(link)
    try:
        grant = client.refresh_token(link.refresh_token.get_secret_value())
    except InvalidGrant as refused:
        newer = _link_stored_after(user, link)
        if newer is None:
            raise _dead(link) from refused
        logger.info("another request refreshed the chat tokens first: using theirs")
        return newer
    fresh = _link(user, grant, link.chat_user_id, link.chat_username, previous=link)
    saved = chat_links().save_if_unchanged(fresh, read=link)
    if saved is None:
        # Stored meanwhile by another request (a new sign-in, or a refresh the platform also granted): theirs
        # stays; ours is valid too and serves this request.
        logger.info("the chat link changed during a refresh: the stored one is kept")
        return fresh
    return saved


def _dead(link: ChatLink) -> LinkRefused:
    """The platform refused the link for good: marked, so that later requests answer 400 without asking it again
    (a sign-in stored meanwhile is not marked)."""
    chat_links().mark_refused(link, utc_now())
    logger.info("the chat platform refused the link's refresh: marked until the user signs in again")
    metrics.add_metric(name="ChatLinkRefused", unit="Count", value=1)
    return LinkRefused()


def _link_stored_after(user: BearerUser, link: ChatLink) -> ChatLink | None:
    """The user's link once another request has stored a newer one, waiting a moment for it; else None."""
    repository = chat_links()
    deadline = time.monotonic() + budget.clip(CONCURRENT_REFRESH_WAIT_SECONDS)
    while True:
        revision = repository.revision(user.sub)
        if revision is None:
            return None  # unlinked meanwhile
        if revision != link.revision:
            return repository.get(user.sub)
        if time.monotonic() + REVISION_POLL_SECONDS > deadline:
            return None
        time.sleep(REVISION_POLL_SECONDS)


def _user_guilds(user: BearerUser) -> tuple[ChatLink, list[PartialGuild]]:
    """The user's link and their guilds, as the platform lists them for the user's own token."""
    link = chat_links().get(user.sub)
    if link is None:
        raise NotLinked()
    if link.refused_at is not None:
        raise LinkRefused()  # the platform refused it already: not asked again until a new sign-in
    client = get_chat_client()
    if link.expires_at <= utc_now() + EXPIRY_MARGIN:
        link = _refreshed(client, user, link)
    try:
        return link, client.get_current_user_guilds(link.access_token.get_secret_value())
    except InvalidUserToken:  # revoked or expired early: one refresh, then the user must sign in again
        link = _refreshed(client, user, link)
        try:
            return link, client.get_current_user_guilds(link.access_token.get_secret_value())
        except InvalidUserToken as refused:
            raise _dead(link) from refused


def bot_guild_ids(client: ChatClient) -> frozenset[str]:
    """The guilds the bot is in: the shared set while it is fresh, else fetched (by one instance at a time)."""
    settings = get_settings()
    max_age = settings.chat_bot_guilds_cache_seconds
    if max_age <= 0:
        return frozenset(client.bot_guild_ids())
    cache = ChatCacheRepository(settings.chat_cache_table)
    now = time.time()
    cached = cache.bot_guilds()
    if cached is not None:
        age = now - cached.fetched_at
        if age < max_age:
            return cached.guild_ids
        if age < BOT_GUILDS_MAX_STALE_SECONDS and not cache.claim_refresh(now, BOT_GUILDS_REFRESH_LEASE_SECONDS):
            return cached.guild_ids  # another instance is fetching it now
    guild_ids = frozenset(client.bot_guild_ids())
    if not cache.put_bot_guilds(guild_ids, now):
        logger.warning("the bot's guild set is too large to share", extra={"guilds": len(guild_ids)})
    return guild_ids


def accessible_guilds(user: BearerUser) -> list[GuildSummary]:
    """The servers the user can access, as the platform lists them for the user's own token."""
    _, guilds = _user_guilds(user)
    bot_guilds = bot_guild_ids(get_chat_client())
    return [
        GuildSummary(
            id=guild.id,
            name=guild.name,
            icon=guild.icon_url(),
            owner=guild.owner,
            permissions=guild.permissions,
            can_manage=guild.can_manage,
            bot_present=guild.id in bot_guilds,
        )
        for guild in guilds
    ]


def managed_guild(user: BearerUser, guild_id: str) -> tuple[str, PartialGuild]:
    """The user's chat id and the guild, when the user owns it or holds ADMINISTRATOR or MANAGE_GUILD there."""
    try:
        link, guilds = _user_guilds(user)
    except NotLinked as missing:
        raise Forbidden(
            "Sign in with the chat platform first (chatAuth with your bearer token): no usable chat account is linked."
        ) from missing
    guild = next((guild for guild in guilds if guild.id == guild_id), None)
    if guild is None or not guild.can_manage:
        raise Forbidden("You must own this server or hold ADMINISTRATOR or MANAGE_GUILD in it.")
    return link.chat_user_id, guild
