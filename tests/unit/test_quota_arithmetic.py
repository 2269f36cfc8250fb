"""The creation quota's arithmetic: what is left, what fits now, and when the last planned creation can be made."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from svcconf.deploy_engine.quota import WINDOW, Observed, figures, left_now

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def test_the_service_own_creations_of_the_past_48_hours_are_what_is_counted():
    own = [NOW - 50 * HOUR] * 10 + [NOW - 24 * HOUR] * 245  # the 10 older ones no longer count

    assert left_now("role", own, None, NOW) == 5


def test_a_plan_within_what_is_left_fits_now_and_finishes_now():
    quota = figures("role", 5, [NOW - HOUR] * 245, None, NOW)

    assert (quota.left, quota.fits_now, quota.expected_finish) == (5, 5, NOW)


def test_the_rest_waits_until_enough_counted_creations_turn_48_hours_old():
    own = [NOW - 30 * HOUR] * 3 + [NOW - 20 * HOUR] * 242  # 245 counted: 5 left
    quota = figures("role", 12, own, None, NOW)

    assert (quota.left, quota.fits_now) == (5, 5)
    # 7 more slots: the 3 made 30 hours ago free at +18 h, then 4 of those made 20 hours ago at +28 h.
    assert quota.expected_finish == NOW + 28 * HOUR


def test_a_bucket_that_says_less_remains_wins_and_unknown_creations_free_when_it_resets():
    observed = Observed(limit=250, remaining=0, resets_at=NOW + 10 * HOUR, observed_at=NOW - HOUR)
    quota = figures("role", 3, [], observed, NOW)

    assert (quota.left, quota.fits_now) == (0, 0)
    assert quota.expected_finish == NOW + 10 * HOUR


def test_creations_after_the_bucket_spoke_come_off_what_it_said_remained():
    observed = Observed(limit=250, remaining=4, resets_at=NOW + 10 * HOUR, observed_at=NOW - 2 * HOUR)

    assert left_now("role", [NOW - HOUR] * 3, observed, NOW) == 1


def test_a_bucket_that_has_reset_says_nothing_any_more():
    observed = Observed(limit=250, remaining=0, resets_at=NOW - HOUR, observed_at=NOW - WINDOW)

    assert left_now("role", [], observed, NOW) == 250


def test_channels_have_a_quota_of_their_own_of_500():
    quota = figures("channel", 20, [NOW - HOUR] * 490, None, NOW)

    assert (quota.left, quota.fits_now) == (10, 10)
    assert quota.expected_finish == NOW - HOUR + WINDOW
