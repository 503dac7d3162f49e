"""Cores of the robot-interface command check and of the soak run (no ROS).

- effort limits: an update is refused when |effort| exceeds the joint's torque limit (the
  robot config's value, times 1 + 1e-6), naming the first joint over, its value and its limit;
- soak bookkeeping: the hand target is a circle of the stated radius around the hand's position
  (|target - center - (0, 0, r)| = r), pushes come every period in turn front, left, back,
  right, and the verdict applies the stated thresholds (5 % memory, 0.1 m drop).
"""

from __future__ import annotations

import numpy as np
import pytest

from wbm_bringup.benchmarks.soak import (
    ReasonCounts,
    SoakMinute,
    SoakSchedule,
    resident_memory,
    summarize,
)
from wbm_description.exceptions import InputError
from wbm_dynamics.held_command import CommandUpdate, check_effort_limits

NAMES = ("a", "b", "c")
LIMITS = np.array([10.0, 20.0, np.inf])


def test_efforts_within_the_torque_limits_pass():
    update = CommandUpdate(np.array([0, 1, 2]), effort=np.array([-10.0, 20.0 * (1 + 1e-7), 1e9]))
    check_effort_limits(update, LIMITS, NAMES)  # c is unlimited; b within the 1e-6 slack
    check_effort_limits(CommandUpdate(np.array([0]), position=np.zeros(1)), LIMITS, NAMES)


def test_an_effort_over_its_limit_refuses_the_update_naming_the_joint():
    update = CommandUpdate(np.array([2, 1, 0]), effort=np.array([0.0, -1e9, 1e9]))
    with pytest.raises(InputError) as error:
        check_effort_limits(update, LIMITS, NAMES)
    text = str(error.value)
    assert "effort[b]" in text and "torque limit 20 N m" in text and "got -1e+09" in text
    assert "2 joint(s) over their limits" in text


def test_the_icub_command_of_the_issue_is_refused(icub):
    update = CommandUpdate(np.arange(icub.ndof), effort=np.full(icub.ndof, 1e9))
    with pytest.raises(InputError, match=f"effort\\[{icub.joint_names[0]}\\]"):
        check_effort_limits(update, icub.torque_limits, icub.joint_names)


def test_the_soak_schedule():
    center = np.array([0.1, 0.2, 0.3])
    schedule = SoakSchedule(center, hand_radius=0.05, hand_period=8.0, push_every=10.0)
    for t in np.linspace(0.0, 16.0, 33):
        offset = schedule.hand_target(t) - center - [0.0, 0.0, 0.05]
        assert np.linalg.norm(offset) == pytest.approx(0.05, abs=1e-12)
        assert offset[0] == 0.0
    np.testing.assert_allclose(schedule.hand_target(0.0), center, atol=1e-15)
    np.testing.assert_allclose(schedule.hand_target(4.0), center + [0, 0, 0.1], atol=1e-15)
    assert not schedule.push_due(9.99, None) and schedule.push_due(10.0, None)
    assert not schedule.push_due(19.0, 10.0) and schedule.push_due(20.0, 10.0)
    assert not schedule.push_due(3.0, None)  # after a reset, time restarts at 0
    forces = [schedule.push(i) for i in range(5)]
    np.testing.assert_array_equal(forces[0], [30, 0, 0])
    np.testing.assert_array_equal(forces[1], [0, 30, 0])
    np.testing.assert_array_equal(forces[2], [-30, 0, 0])
    np.testing.assert_array_equal(forces[4], forces[0])
    assert schedule.after_push(11.5, [10.0]) and not schedule.after_push(12.5, [10.0])
    assert not schedule.after_push(9.5, [10.0])


def minute(k, memory, lowest=0.59, holds=0):
    return SoakMinute(
        k,
        60.0 * k,
        memory,
        states=100,
        commands=98,
        lowest_base=lowest,
        safe_hold_outside_pushes=holds,
        pushes=6,
    )


def test_the_soak_verdict():
    flat = [minute(k, {"controller": 100e6 * (1 + 0.01 * (k % 2))}) for k in range(0, 5)]
    verdict = summarize(flat, initial_height=0.6)
    assert verdict.passed, verdict.problems
    assert verdict.memory_change["controller"] == pytest.approx((0.0, 0.01))
    assert verdict.answered == pytest.approx(0.98)
    growing = [minute(k, {"controller": 100e6 * (1 + 0.02 * k)}) for k in range(0, 4)]
    verdict = summarize(growing, initial_height=0.6)
    assert not verdict.passed and "+6.0 %" in verdict.problems[0]
    fallen = summarize([minute(1, {"x": 1.0}, lowest=0.45)], initial_height=0.6)
    assert fallen.fell and not fallen.passed
    reset = minute(1, {"x": 1.0})
    reset.falls = 2
    counted = summarize([reset], initial_height=0.6)
    assert counted.fell and counted.falls == 2 and "fell 2 time(s)" in counted.problems[0]
    held = summarize([minute(1, {"x": 1.0}, holds=3)], initial_height=0.6)
    assert held.safe_holds_outside_pushes == 3 and not held.passed
    gone = summarize([minute(1, {"x": 1.0}), minute(2, {"x": None})], initial_height=0.6)
    assert gone.problems == ["x exited during the run"]


def test_the_soak_counts_diagnostics_by_reason():
    """Numbers in a reason (a silence, an age) do not split it; safe holds and other non-OK
    diagnostics (a QP fallback) are told apart; counts outside / inside push windows."""
    counts = ReasonCounts()
    assert ReasonCounts.kind("no joint_states for 0.6 s (wall clock)") == (
        "no joint_states for # s (wall clock)"
    )
    counts.add("stale inputs: ft/l_foot", safe=True, outside=True)
    counts.add("stale inputs: ft/l_foot", safe=True, outside=True)
    counts.add("stale inputs: ft/l_foot", safe=True, outside=False)
    counts.add("stale inputs: no joint_states for 0.6 s (wall clock)", safe=True, outside=True)
    counts.add("stale inputs: no joint_states for 1.2 s (wall clock)", safe=True, outside=False)
    counts.add("controlling with fallback relaxed", safe=False, outside=False)
    lines = counts.lines()
    assert len(lines) == 3
    assert lines[0].split() == ["2", "/", "1", "safe", "hold", "stale", "inputs:", "ft/l_foot"]
    assert lines[1].split()[:3] == ["1", "/", "1"] and lines[1].endswith("(wall clock)")
    assert lines[2].split()[:5] == ["0", "/", "1", "other", "controlling"]


def test_resident_memory_of_this_process():
    import os

    rss = resident_memory(os.getpid())
    assert rss is not None and 10e6 < rss < 10e9
    assert resident_memory(2**22 + 12345) is None  # above pid_max's default: no such process
