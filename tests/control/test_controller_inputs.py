"""The controller node's input assembly and safe-hold bookkeeping, without ROS.

Ages are compared with the stated timeouts exactly: the one test at the boundary (an input exactly
stale_timeout old) starts at t = 0, so the age is the timeout itself; other times are chosen at
least 10 ms away from the timeouts.
"""

import numpy as np
import pytest

from wbm_control.controller_inputs import ControllerInputs, stale_reason
from wbm_control.safe_hold import SafeHold
from wbm_description.exceptions import InputError
from wbm_description.robot_io import ImuReading

NDOF = 3
SENSORS = ("left_foot", "right_foot")
STALE = 0.05  # stale_timeout under test [s] (the shipped default)
IMU = ImuReading(np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3), np.array([0.0, 0.0, 9.81]))


def send_all(inputs: ControllerInputs, *, time: float, stamp: int, wall: float = 0.0) -> list:
    """One robot sample: joint_states, imu and each F/T sensor; what each call answered."""
    due = [
        inputs.set_joint_states(
            np.full(NDOF, 0.1), np.zeros(NDOF), None, time=time, stamp=stamp, wall_time=wall
        ),
        inputs.set_imu(IMU, time=time, stamp=stamp),
    ]
    for sensor in SENSORS:
        due.append(inputs.set_wrench(sensor, np.zeros(6), time=time, stamp=stamp))
    return due


def test_a_tick_holds_only_when_inputs_were_stale_at_the_tick_before_too():
    """The node takes /clock before the other inputs of a moment; after a starved process's
    clock jump one tick can see inputs still queued as stale: that tick is skipped, and only a
    second stale tick in a row holds (the input really stopped)."""
    inputs = ControllerInputs(NDOF, SENSORS, stale_timeout=STALE)
    send_all(inputs, time=0.0, stamp=0)
    assert inputs.stale_at_tick(0.002) == ([], False)
    # The clock jumped 0.1 s; joint_states was taken after it, the rest not yet.
    inputs.set_joint_states(
        np.zeros(NDOF), np.zeros(NDOF), None, time=0.1, stamp=100_000_000, wall_time=1.0
    )
    stale = ["imu", "ft/left_foot", "ft/right_foot"]
    assert inputs.stale_at_tick(0.1) == (stale, False) and inputs.deferred == 1
    send_all(inputs, time=0.1, stamp=100_000_000)  # taken before the next tick: no hold
    assert inputs.stale_at_tick(0.102) == ([], False)
    # An input that stopped: stale at two ticks in a row, held at the second.
    assert inputs.stale_at_tick(0.151) == (list(inputs.required), False)
    assert inputs.stale_at_tick(0.153) == (list(inputs.required), True)
    assert inputs.stale_at_tick(0.155) == (list(inputs.required), True)
    assert inputs.deferred == 2


def test_each_input_goes_stale_after_the_timeout_and_the_reason_names_it():
    inputs = ControllerInputs(NDOF, SENSORS, stale_timeout=STALE)
    assert inputs.required == ("joint_states", "imu", "ft/left_foot", "ft/right_foot")
    # Nothing received yet: every input is stale.
    assert inputs.stale(0.0) == list(inputs.required)
    assert not inputs.has_joint_states
    send_all(inputs, time=0.0, stamp=1)
    assert inputs.stale(0.0) == [] and inputs.stale_reason(0.0) is None
    # Exactly at the timeout an input is still fresh (older than, not as old as).
    assert inputs.stale(STALE) == []
    # Only the IMU is refreshed: 40 ms later everything is fresh, 20 ms after that every input
    # but the IMU is 60 ms old (> 50 ms) and named in the reason.
    inputs.set_imu(IMU, time=0.04, stamp=2)
    assert inputs.stale(0.04) == []
    assert inputs.stale(0.06) == ["joint_states", "ft/left_foot", "ft/right_foot"]
    assert inputs.stale_reason(0.06) == "stale inputs: joint_states, ft/left_foot, ft/right_foot"
    # One F/T sensor alone stops: the reason names exactly that one.
    for t in (1.1, 1.2):
        inputs.set_joint_states(np.zeros(NDOF), np.zeros(NDOF), None, time=t, stamp=3, wall_time=t)
        inputs.set_imu(IMU, time=t, stamp=3)
        inputs.set_wrench("left_foot", np.zeros(6), time=t, stamp=3)
    assert inputs.stale_reason(1.2) == "stale inputs: ft/right_foot"
    assert stale_reason(["imu"]) == "stale inputs: imu"


def test_the_inputs_trigger_fires_once_per_complete_stamp():
    inputs = ControllerInputs(NDOF, SENSORS, stale_timeout=STALE, trigger="inputs")
    # The last input of a stamp completes it: one step, not before.
    assert send_all(inputs, time=0.0, stamp=1000) == [False, False, False, True]
    # The same stamp again (a repeated message): no second step.
    assert send_all(inputs, time=0.001, stamp=1000) == [False] * 4
    # A partial sample (the right F/T sensor sends an old stamp): no step.
    due = [
        inputs.set_joint_states(
            np.zeros(NDOF), np.zeros(NDOF), None, time=0.002, stamp=2000, wall_time=0.0
        ),
        inputs.set_imu(IMU, time=0.002, stamp=2000),
        inputs.set_wrench("left_foot", np.zeros(6), time=0.002, stamp=2000),
        inputs.set_wrench("right_foot", np.zeros(6), time=0.002, stamp=1000),
    ]
    assert due == [False] * 4
    # Its last input arrives: the step, once.
    assert inputs.set_wrench("right_foot", np.zeros(6), time=0.003, stamp=2000)
    assert not inputs.set_wrench("right_foot", np.zeros(6), time=0.003, stamp=2000)
    # Inputs of one stamp in any order, interleaved with the next stamp's first ones.
    assert not inputs.set_imu(IMU, time=0.004, stamp=3000)
    assert not inputs.set_wrench("left_foot", np.zeros(6), time=0.004, stamp=3000)
    assert not inputs.set_wrench("right_foot", np.zeros(6), time=0.004, stamp=3000)
    assert inputs.set_joint_states(
        np.zeros(NDOF), np.zeros(NDOF), None, time=0.004, stamp=3000, wall_time=0.0
    )
    # 100 complete samples: exactly 100 steps.
    steps = sum(sum(send_all(inputs, time=0.01 * k, stamp=10_000 + k)) for k in range(100))
    assert steps == 100


def test_the_timer_trigger_never_asks_for_a_step():
    inputs = ControllerInputs(NDOF, SENSORS, stale_timeout=STALE, trigger="timer")
    assert send_all(inputs, time=0.0, stamp=1) == [False] * 4
    assert send_all(inputs, time=0.1, stamp=2) == [False] * 4


def test_the_wall_clock_watchdog_trips_and_recovers():
    # stale_timeout 0.05 s < 0.5 s: the watchdog waits 0.5 s of wall time (its floor).
    inputs = ControllerInputs(NDOF, SENSORS, stale_timeout=STALE, wall_timeout=0.5)
    assert inputs.watchdog(100.0) is None  # no joint_states ever: nothing to watch yet
    send_all(inputs, time=0.0, stamp=1, wall=100.0)
    assert inputs.watchdog(100.25) is None
    assert inputs.wall_silence(100.25) == 0.25
    assert inputs.watchdog(100.5) == "stale inputs: no joint_states for 0.5 s (wall clock)"
    assert inputs.watchdog(102.0) == "stale inputs: no joint_states for 2.0 s (wall clock)"
    # Only the IMU comes back: still tripped (joint_states are what it watches).
    inputs.set_imu(IMU, time=0.0, stamp=2)
    assert inputs.watchdog(102.5) is not None
    # joint_states come back: recovered.
    send_all(inputs, time=0.0, stamp=3, wall=103.0)
    assert inputs.watchdog(103.25) is None
    # A stale_timeout longer than the floor sets the watchdog's timeout.
    slow = ControllerInputs(NDOF, SENSORS, stale_timeout=2.0, wall_timeout=0.5)
    send_all(slow, time=0.0, stamp=1, wall=0.0)
    assert slow.watchdog(1.5) is None and slow.watchdog(2.0) is not None


def test_readings_ground_truth_and_efforts():
    inputs = ControllerInputs(NDOF, SENSORS, stale_timeout=STALE)
    with pytest.raises(InputError, match="joint_states and imu"):
        inputs.readings(0.0)
    inputs.set_ground_truth_base(np.arange(7.0), np.arange(6.0))
    assert inputs.ground_truth is None  # no joints yet
    positions, velocities = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    inputs.set_joint_states(positions, velocities, None, time=0.0, stamp=1, wall_time=0.0)
    inputs.set_imu(IMU, time=0.0, stamp=1)
    inputs.set_wrench("left_foot", np.arange(6.0), time=0.0, stamp=1)
    readings = inputs.readings(0.5)
    assert readings.time == 0.5
    np.testing.assert_array_equal(readings.joint_positions, positions)
    np.testing.assert_array_equal(readings.joint_efforts, np.zeros(NDOF))  # none sent yet
    np.testing.assert_array_equal(readings.wrenches["left_foot"], np.arange(6.0))
    # Efforts are kept from the last message that had them.
    inputs.set_joint_states(positions, velocities, np.ones(NDOF), time=0, stamp=2, wall_time=0)
    inputs.set_joint_states(positions, velocities, None, time=0.0, stamp=3, wall_time=0.0)
    np.testing.assert_array_equal(inputs.readings(0.0).joint_efforts, np.ones(NDOF))
    inputs.set_ground_truth_base(np.arange(7.0), np.arange(6.0))
    q, v = inputs.ground_truth
    np.testing.assert_array_equal(q, np.concatenate([np.arange(7.0), positions]))
    np.testing.assert_array_equal(v, np.concatenate([np.arange(6.0), velocities]))


def test_bad_arguments_are_refused():
    with pytest.raises(InputError, match="trigger"):
        ControllerInputs(NDOF, SENSORS, stale_timeout=STALE, trigger="sometimes")
    with pytest.raises(InputError, match="stale_timeout"):
        ControllerInputs(NDOF, SENSORS, stale_timeout=0.0)


def test_safe_hold_logs_each_reason_once_per_episode_and_the_resume():
    hold = SafeHold()
    assert not hold.active and hold.leave() is None
    line = hold.enter("stale inputs: imu")
    assert line.level == "error"
    assert line.text == "safe mode (holding the posture with static torques): stale inputs: imu"
    assert hold.active and hold.reason == "stale inputs: imu"
    assert hold.enter("stale inputs: imu") is None  # the same reason at the next tick
    # The watchdog's reason changes every tick (its duration): logged once by its kind.
    first = hold.enter("stale inputs: no joint_states for 0.5 s (wall clock)", kind="watchdog")
    assert first is not None and "0.5 s" in first.text
    assert hold.enter("stale inputs: no joint_states for 0.6 s", kind="watchdog") is None
    # Alternating with the timer's reason: neither is logged again in this episode.
    assert hold.enter("stale inputs: imu") is None
    assert hold.reason == "stale inputs: imu"
    # A new reason is.
    assert hold.enter("stale inputs: imu, joint_states") is not None
    # A normal step: one info line naming the last reason, then nothing.
    resumed = hold.after_step(False, "")
    assert resumed.level == "info"
    assert resumed.text == "normal control resumed (was: stale inputs: imu, joint_states)"
    assert not hold.active and hold.after_step(False, "") is None
    # A new episode logs its reasons again; a failed step enters it through after_step.
    assert hold.after_step(True, "stale inputs: imu") is not None
    assert hold.after_step(True, "whole_body_qp: no solution found") is not None
    assert hold.after_step(True, "whole_body_qp: no solution found") is None
