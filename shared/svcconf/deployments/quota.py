"""The platform's creation quota as deployments meet it: warned of before, counted while, read from the platform.

The dry run and the deploy's 202 carry a `quota` warning when the plan makes more roles (or channels) than the
guild's quota has left (`svcconf.deploy_engine.quota` does the arithmetic); the worker records every creation and the
creation buckets' headers, so the next plan knows what is left.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from svcconf.chat import ChatClient
from svcconf.chat.client import CREATE_ROUTES
from svcconf.config.lint import LintWarning
from svcconf.deploy_engine.quota import FIELDS, PLAN_KINDS, Observed, QuotaFigures, QuotaKind, figures, warning_message
from svcconf.deploy_engine.steps import DeploymentPlan
from svcconf.settings import get_settings
from svcconf.store.quota import QuotaRepository

# A bucket resetting sooner is a short per-second limit, not the quota of the past 48 hours.
QUOTA_RESET_AT_LEAST = timedelta(minutes=15)
KINDS: tuple[QuotaKind, ...] = ("role", "channel")


class QuotaWarning(LintWarning):
    """A `quota` warning: the plan passes what the quota has left; its figures beside the sentence."""

    quota: QuotaFigures


def _repository() -> QuotaRepository:
    return QuotaRepository(get_settings().deployments_table)


def quota_warnings(guild_id: str, plan: DeploymentPlan, now: datetime) -> list[QuotaWarning]:
    planned = dict.fromkeys(KINDS, 0)
    for item in plan.items:
        if item.action == "create" and item.kind in PLAN_KINDS:
            planned[PLAN_KINDS[item.kind]] += 1
    repository = _repository()
    warnings = []
    for kind, count in planned.items():
        if not count:
            continue
        own, observed = repository.counted(guild_id, kind, now), repository.bucket(guild_id, kind, now)
        quota = figures(kind, count, own, observed, now)
        if quota.fits_now < count:
            warnings.append(QuotaWarning(field=FIELDS[kind], rule="quota", message=warning_message(quota), quota=quota))
    return warnings


def record_creations(guild_id: str, plan: DeploymentPlan, made: Mapping[str, str], now: datetime) -> None:
    """`made`: the objects steps created (plan key -> id)."""
    kinds = {item.key: item.kind for item in plan.items}
    created: dict[QuotaKind, list[str]] = {kind: [] for kind in KINDS}
    for key, object_id in made.items():
        if kinds.get(key) in PLAN_KINDS:
            created[PLAN_KINDS[kinds[key]]].append(object_id)
    for kind, ids in created.items():
        if ids:
            _repository().record_creations(guild_id, kind, ids, now)


def remember_buckets(client: ChatClient, guild_id: str, now: datetime) -> None:
    """Keeps what the creation buckets' headers said, when they describe the quota (a reset far away)."""
    for kind in KINDS:
        bucket = client.creation_bucket(guild_id, kind)
        if bucket is None or bucket.reset_after < QUOTA_RESET_AT_LEAST.total_seconds():
            continue
        resets_at = now + timedelta(seconds=bucket.reset_after)
        _repository().remember_bucket(guild_id, kind, Observed(bucket.limit, bucket.remaining, resets_at, now))


def wait_reason(route: str | None, resumes_at: datetime) -> str:
    """Why a deployment waits, for `info`: the quota when the closed route is a creation route."""
    what = {f"POST {template}": f"{kind}s" for kind, template in CREATE_ROUTES.items()}.get(route or "")
    when = resumes_at.isoformat(timespec="seconds")
    if what:
        return (
            f"The chat platform lets a bot create only so many {what} per server in 48 hours and this server has "
            f"reached it: what was made is kept, and the deployment resumes by itself at {when}."
        )
    return f"The chat platform asks the service to wait: the deployment resumes by itself at {when}."
