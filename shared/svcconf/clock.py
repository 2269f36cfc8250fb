"""The service's one notion of now (UTC, timezone-aware); tests move it with monkeypatch."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)
