"""The creation quota's arithmetic: what is left, what fits now, and when the last planned creation can be made."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from svcconf.deploy_engine.quota import WINDOW, Observed, QuotaFigures, figures, left_now, warning_message

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


def test_a_creation_exactly_48_hours_old_no_longer_counts():
    own = [NOW - WINDOW] * 10 + [NOW - WINDOW + timedelta(seconds=1)] * 245

    assert left_now("role", own, None, NOW) == 5
    assert figures("role", 6, own, None, NOW).expected_finish == NOW + timedelta(seconds=1)


def test_a_bucket_that_resets_this_instant_says_nothing_any_more():
    observed = Observed(limit=250, remaining=0, resets_at=NOW, observed_at=NOW - HOUR)

    assert left_now("role", [], observed, NOW) == 250


def test_a_creation_at_the_instant_the_bucket_spoke_is_already_in_what_it_said():
    observed = Observed(limit=250, remaining=4, resets_at=NOW + 10 * HOUR, observed_at=NOW - 2 * HOUR)

    assert left_now("role", [NOW - 2 * HOUR] * 3, observed, NOW) == 4


def test_the_buckets_own_limit_wins_over_the_observed_one():
    observed = Observed(limit=100, remaining=100, resets_at=NOW + HOUR, observed_at=NOW)

    quota = figures("role", 120, [], observed, NOW)

    assert (quota.left, quota.fits_now) == (100, 100)
    assert quota.expected_finish == NOW + WINDOW  # the 20 beyond wait for the 100 made now, not the reset


def test_the_last_creation_waits_for_exactly_the_slot_it_needs():
    # Five creations turn 48 hours old one hour apart, the rest much later; 2 slots are left now.
    own = [NOW - WINDOW + k * HOUR for k in range(1, 6)] + [NOW - HOUR] * 243

    quota = figures("role", 5, own, None, NOW)

    assert (quota.left, quota.fits_now) == (2, 2)
    assert quota.expected_finish == NOW + 3 * HOUR  # the 3 beyond take the slots freed at +1 h, +2 h and +3 h


def test_a_plan_of_exactly_two_windows_worth_finishes_within_the_second_window():
    assert figures("role", 500, [], None, NOW).expected_finish == NOW + WINDOW


def test_a_plan_beyond_what_the_releases_free_finishes_a_window_after_the_last_release():
    own = [NOW - WINDOW + HOUR] * 249  # one slot left; 249 free at +1 h, the one made now at +48 h

    assert figures("role", 252, own, None, NOW).expected_finish == NOW + 2 * WINDOW
    assert figures("role", 501, [], None, NOW).expected_finish == NOW + 2 * WINDOW


def test_the_warning_names_the_kind_its_figures_and_the_finish_to_the_second():
    finish = NOW + 28 * HOUR + timedelta(microseconds=5)
    roles = QuotaFigures(kind="role", planned=12, left=5, fits_now=5, expected_finish=finish)
    channels = QuotaFigures(kind="channel", planned=20, left=10, fits_now=10, expected_finish=finish)

    assert warning_message(roles) == (
        "The chat platform lets a bot create about 250 roles per server in 48 hours: 5 of the 12 planned can be "
        "made now; the deployment waits for the rest and should finish at 2026-11-25T16:00:00+00:00."
    )
    assert warning_message(channels) == (
        "The chat platform lets a bot create about 500 channels and categories per server in 48 hours: 10 of the "
        "20 planned can be made now; the deployment waits for the rest and should finish at 2026-11-25T16:00:00+00:00."
    )


def test_what_is_left_counts_down_from_the_buckets_own_limit():
    observed = Observed(limit=100, remaining=100, resets_at=NOW + HOUR, observed_at=NOW)

    assert left_now("role", [NOW - 2 * HOUR] * 10, observed, NOW) == 90
