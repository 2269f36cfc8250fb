"""The platform's creation quota: how many roles and channels a guild may still get now, and when the rest can.

Besides its caps the platform lets a bot create only about 250 roles and 500 channels per guild in 48 hours,
deleted ones counted (observed and unofficial: docs/05-deploy-engine.md, The creation quota). Each creation
holds one slot of the quota until it is 48 hours old. No I/O here: the caller brings the service's own
creations of the past 48 hours and, when the platform has sent them, the route bucket's headers (`Observed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

QuotaKind = Literal["role", "channel"]
WINDOW = timedelta(hours=48)
# The observed limits; a bucket's own `X-RateLimit-Limit` wins when the platform has sent one.
LIMITS: dict[QuotaKind, int] = {"role": 250, "channel": 500}
PLAN_KINDS: dict[str, QuotaKind] = {"role": "role", "category": "channel", "channel": "channel"}
FIELDS: dict[QuotaKind, str] = {"role": "roles", "channel": "categories"}  # where the configuration lists them


@dataclass(frozen=True)
class Observed:
    """What the route's bucket said last: its limit, what remained, when it resets, and when it said so."""

    limit: int | None
    remaining: int
    resets_at: datetime
    observed_at: datetime


class QuotaFigures(BaseModel):
    kind: QuotaKind
    planned: int = Field(description="Creations the plan makes.")
    left: int = Field(description="Creations the quota allows now.")
    fits_now: int = Field(description="Of the planned creations, how many can be made now.")
    expected_finish: datetime = Field(description="When the last planned creation can be made (ISO 8601).")


def left_now(kind: QuotaKind, own: Sequence[datetime], observed: Observed | None, now: datetime) -> int:
    """Creations the quota allows now: what our own counted creations leave, or less if the bucket said so."""
    limit = observed.limit if observed and observed.limit else LIMITS[kind]
    counted = [at for at in own if at > now - WINDOW]
    left = limit - len(counted)
    if observed is not None and observed.resets_at > now:
        since = sum(1 for at in counted if at > observed.observed_at)
        left = min(left, observed.remaining - since)
    return max(0, left)


def figures(
    kind: QuotaKind, planned: int, own: Sequence[datetime], observed: Observed | None, now: datetime
) -> QuotaFigures:
    """What fits now and when the last planned creation can be made.

    Slots free up as counted creations turn 48 hours old: our own at their time + 48 h, those only the bucket
    knows of (other apps, people) when it resets, and the ones made now at now + 48 h."""
    left = left_now(kind, own, observed, now)
    fits = min(planned, left)
    if planned <= left:
        return QuotaFigures(kind=kind, planned=planned, left=left, fits_now=fits, expected_finish=now)
    counted = sorted(at + WINDOW for at in own if at > now - WINDOW)
    limit = observed.limit if observed and observed.limit else LIMITS[kind]
    unknown = max(0, limit - left - len(counted))
    resets = observed.resets_at if observed is not None and observed.resets_at > now else now + WINDOW
    releases = sorted([*counted, *[resets] * unknown, *[now + WINDOW] * fits])
    needed = planned - left
    # More than one window's worth (beyond the caps the preflight enforces): a window after the last release.
    finish = releases[needed - 1] if needed <= len(releases) else releases[-1] + WINDOW
    return QuotaFigures(kind=kind, planned=planned, left=left, fits_now=fits, expected_finish=max(finish, now))


def warning_message(quota: QuotaFigures) -> str:
    noun = "roles" if quota.kind == "role" else "channels and categories"
    return (
        f"The chat platform lets a bot create about {LIMITS[quota.kind]} {noun} per server in 48 hours: "
        f"{quota.fits_now} of the {quota.planned} planned can be made now; the deployment waits for the rest and "
        f"should finish at {quota.expected_finish.isoformat(timespec='seconds')}."
    )
