"""The pace of a recording from its /clock samples (wbm_bringup.clock_span): exact integer
arithmetic on sample sequences whose answer is known, and the custom_data round trip."""

from __future__ import annotations

import pytest

from wbm_bringup.clock_span import ClockSpan

MS = 1_000_000  # [ns]


def lockstep_samples() -> list[tuple[int, int]]:
    """A lockstep start: the initial state (robot time 5 ms) republished every 100 ms of wall
    time for 2 s until the first command, then 2 ms of robot time per 1.6 ms of wall time."""
    samples = [(1_000 * MS + 100 * MS * k, 5 * MS) for k in range(21)]
    t_wall = samples[-1][0]
    samples += [(t_wall + round(1.6 * MS) * k, 5 * MS + 2 * MS * k) for k in range(1, 1001)]
    return samples


def test_the_pace_is_counted_from_the_last_sample_before_robot_time_advanced():
    span = ClockSpan()
    samples = lockstep_samples()
    for received, sim_time in samples:
        span.add(received, sim_time)
    assert span.first == samples[0]
    assert span.start == samples[20]  # the last republished initial state
    assert span.last == samples[-1]
    # Exact: 1000 cycles of 2 ms robot time in 1000 x 1.6 ms of wall time.
    assert span.running_simulated == pytest.approx(2.0, abs=1e-12)
    assert span.running_wall == pytest.approx(1.6, abs=1e-12)
    assert span.pace == pytest.approx(1.25, abs=1e-12)


def test_a_reset_does_not_move_the_start():
    """Robot time going back to its initial value later (a reset) is not a new start."""
    span = ClockSpan()
    for received, sim_time in [
        (0, 0),
        (MS, 2 * MS),
        (2 * MS, 4 * MS),
        (3 * MS, 0),
        (4 * MS, 2 * MS),
    ]:
        span.add(received, sim_time)
    assert span.start == (0, 0)
    assert span.last == (4 * MS, 2 * MS)


def test_no_pace_before_robot_time_advanced():
    span = ClockSpan()
    assert span.pace is None and span.custom_data() == {}
    for k in range(5):
        span.add(k * 100 * MS, 0)
    assert span.running_wall is None and span.running_simulated is None and span.pace is None


def test_custom_data_round_trip():
    span = ClockSpan()
    for received, sim_time in lockstep_samples():
        span.add(received, sim_time)
    data = span.custom_data()
    assert all(isinstance(value, str) for value in data.values())
    assert data["wbm.clock.start_sim_ns"] == str(5 * MS)
    assert ClockSpan.from_custom_data(data) == span
    assert ClockSpan.from_custom_data(None) is None
    assert ClockSpan.from_custom_data({"other": "1"}) is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"wbm.clock.first_received_ns": "1"}, "but not the other"),
        ({"wbm.clock.last_received_ns": "1.5", "wbm.clock.last_sim_ns": "2"}, "integers"),
    ],
)
def test_malformed_custom_data_is_named(data, message):
    with pytest.raises(ValueError, match=message):
        ClockSpan.from_custom_data(data)
