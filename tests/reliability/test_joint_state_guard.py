"""The joint state guard: a second publisher, time going back, a restart, a jump (core, no ROS).

References are the guard's stated rules, computed by hand: a joint of speed limit v_max may move
v_max * dt + margin between stamps dt apart; a stamp going back to within 0.5 s of 0 is a
restart; another publisher takes over only after 0.5 s of wall-clock silence of the owner.
"""

from __future__ import annotations

import numpy as np
import pytest

from wbm_control.joint_state_guard import (
    DEFAULT_MAX_SPEED,
    MAX_REJECTED_JUMPS,
    POSITION_MARGIN,
    JointStateGuard,
)
from wbm_description.exceptions import InputError

NAMES = ("hip", "knee", "ankle")
SPEED = np.array([2.0, 4.0, np.inf])  # the ankle has no limit: DEFAULT_MAX_SPEED
MS = 1_000_000  # [ns]
ROBOT, ROGUE = b"robot-gid", b"rogue-gid"


def guard() -> JointStateGuard:
    return JointStateGuard(SPEED, NAMES)


def test_samples_of_the_robot_are_accepted_and_the_speed_limits_bound_a_step():
    g = guard()
    q = np.zeros(3)
    assert g.screen(q, stamp=0, wall_time=0.0, publisher=ROBOT).accepted
    # 10 ms later each joint may have moved v_max * 0.01 + margin (exactly at the bound: kept).
    step = SPEED * 0.01 + POSITION_MARGIN
    step[2] = DEFAULT_MAX_SPEED * 0.01 + POSITION_MARGIN
    assert g.screen(q + 0.999 * step, stamp=10 * MS, wall_time=0.01, publisher=ROBOT).accepted
    np.testing.assert_array_equal(g.max_speed, [2.0, 4.0, DEFAULT_MAX_SPEED])


def test_a_jump_is_rejected_named_and_the_next_samples_compare_with_the_last_accepted():
    g = guard()
    g.screen(np.zeros(3), stamp=0, wall_time=0.0, publisher=ROBOT)
    # knee: 0.2 rad in 2 ms, allowed 4 * 0.002 + 0.05 = 0.058 rad.
    verdict = g.screen(np.array([0, 0.2, 0]), stamp=2 * MS, wall_time=0.002, publisher=ROBOT)
    assert not verdict.accepted and verdict.kind == "jump"
    assert "knee moved 0.200 rad in 2.0 ms (at most 0.058 rad" in verdict.reason
    assert g.rejected == {"jump": 1}
    # 40 ms after the last accepted sample the same position is possible (4 * 0.04 + 0.05).
    assert g.screen(np.array([0, 0.2, 0]), stamp=40 * MS, wall_time=0.04, publisher=ROBOT).accepted


def test_a_robot_really_elsewhere_is_accepted_after_the_rejection_limit():
    g = guard()
    g.screen(np.zeros(3), stamp=0, wall_time=0.0, publisher=ROBOT)
    far = np.array([3.0, 0.0, 0.0])  # 3 rad: 1.5 s at 2 rad/s
    verdicts = [
        g.screen(far, stamp=k * MS, wall_time=k * 1e-3, publisher=ROBOT).accepted
        for k in range(1, MAX_REJECTED_JUMPS + 2)
    ]
    assert verdicts == [False] * MAX_REJECTED_JUMPS + [True]


def test_a_second_publisher_is_rejected_until_the_owner_is_silent():
    g = guard()
    q = np.zeros(3)
    assert g.screen(q, stamp=0, wall_time=0.0, publisher=ROBOT).accepted
    verdict = g.screen(q, stamp=1 * MS, wall_time=0.1, publisher=ROGUE)
    assert not verdict.accepted and verdict.kind == "second publisher"
    assert ROGUE.hex()[:16] in verdict.reason and ROBOT.hex()[:16] in verdict.reason
    assert g.screen(q, stamp=2 * MS, wall_time=0.2, publisher=ROBOT).accepted
    # The owner silent for 0.5 s of wall time: the other publisher takes over, from its state.
    verdict = g.screen(q + 1.0, stamp=1 * MS, wall_time=0.8, publisher=ROGUE)
    assert verdict.accepted and verdict.restart and verdict.kind == "handover"
    assert g.owner == ROGUE
    assert not g.screen(q, stamp=3 * MS, wall_time=0.81, publisher=ROBOT).accepted


def test_time_going_back_is_rejected_but_back_to_zero_is_a_restart():
    g = guard()
    q = np.zeros(3)
    for k in range(0, 3001, 10):  # 3 s
        assert g.screen(q, stamp=k * MS, wall_time=k * 1e-3, publisher=ROBOT).accepted
    verdict = g.screen(q, stamp=2000 * MS, wall_time=3.01, publisher=ROBOT)
    assert not verdict.accepted and verdict.kind == "time going back"
    assert "2.000 s before the previous 3.000 s" in verdict.reason
    # A reset: time 0 and the initial posture far from the current one (no jump check).
    verdict = g.screen(q + 1.0, stamp=0, wall_time=3.02, publisher=ROBOT)
    assert verdict.accepted and verdict.restart and verdict.kind == "restart"
    assert "robot time restarted (3.000 s -> 0.000 s)" in verdict.reason
    assert g.screen(q + 1.0, stamp=2 * MS, wall_time=3.03, publisher=ROBOT).accepted


def test_without_publisher_information_only_time_and_jumps_are_checked():
    g = guard()
    q = np.zeros(3)
    assert g.screen(q, stamp=5 * MS, wall_time=0.0).accepted
    assert g.screen(q, stamp=6 * MS, wall_time=0.0).accepted
    assert g.screen(q, stamp=600 * MS, wall_time=0.0).accepted
    assert g.screen(q, stamp=550 * MS, wall_time=0.0).kind == "time going back"
    assert g.owner is None


def test_speed_limits_of_the_wrong_length_are_refused():
    with pytest.raises(InputError, match="max_speed"):
        JointStateGuard(np.ones(2), NAMES)
