"""Links that people paste (invites, templates): their host and path, or the caller's refusal, never a 500."""

from __future__ import annotations

from urllib.parse import urlsplit

from svcconf.errors import BadRequest


def link_parts(text: str, refusal: BadRequest) -> tuple[str, list[str]]:
    """The host and path segments of an http(s) link, with or without its scheme, whose netloc is the host alone (no
    port, not even an empty one; no user or password). Anything else raises `refusal`: text with inner whitespace or
    control characters (urllib would silently delete tabs and newlines), and whatever urllib cannot parse
    (unbalanced brackets, a port that is not a number, full-width characters that normalise into URL syntax)."""
    if not text.isprintable() or any(character.isspace() for character in text):
        raise refusal
    try:
        url = urlsplit(text if "://" in text else f"https://{text}")
        host = (url.hostname or "").lower()
    except ValueError:
        raise refusal from None
    if url.scheme not in ("http", "https") or url.netloc.lower() != host:
        raise refusal
    return host, [segment for segment in url.path.split("/") if segment]
