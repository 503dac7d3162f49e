"""The controller answers the newest robot sample, not a queue of superseded ones (no ROS).

Cause of the realtime bringup's falls under CPU load (measured on the machine, see the module
docstring of :mod:`wbm_control.controller_inputs`): with trigger ``inputs`` the controller
answered every queued sample in turn, so each command was computed for a state tens of
milliseconds old. Here a backlog is built by hand: the node's clock (the robot's newest
``/clock``) is ahead of the samples being delivered. Stamps are integers [ns] and times exact
multiples of the 2 ms sample period, so the comparisons with the age limit (2 periods, 4 ms)
are exact.
"""

import numpy as np
import pytest

from wbm_control.controller_inputs import ControllerInputs
from wbm_description.exceptions import InputError
from wbm_description.robot_io import ImuReading

NDOF = 3
SENSORS = ("left_foot", "right_foot")
STALE = 0.05  # stale_timeout [s] (the shipped default)
PERIOD = 0.002  # sample period [s] (500 Hz)
MAX_AGE = 2 * PERIOD  # what the node passes [s]
IMU = ImuReading(np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3), np.array([0.0, 0.0, 9.81]))


def sample(inputs: ControllerInputs, k: int, clock: float) -> bool:
    """Sample k (stamp k periods) delivered when the node's clock reads ``clock``; step due?"""
    stamp = round(k * PERIOD * 1e9)
    due = inputs.set_joint_states(
        np.zeros(NDOF), np.zeros(NDOF), None, time=clock, stamp=stamp, wall_time=clock
    )
    due |= inputs.set_imu(IMU, time=clock, stamp=stamp)
    for sensor in SENSORS:
        due |= inputs.set_wrench(sensor, np.zeros(6), time=clock, stamp=stamp)
    return due


def test_a_backlog_of_superseded_samples_is_skipped_and_the_newest_answered():
    inputs = ControllerInputs(
        NDOF, SENSORS, stale_timeout=STALE, trigger="inputs", max_sample_age=MAX_AGE
    )
    # In time: every sample answered (the clock reads each sample's own stamp).
    assert all(sample(inputs, k, k * PERIOD) for k in range(10))
    # The controller fell behind: samples 10..19 queued while the robot published up to 19.
    # Samples more than 2 periods behind the clock (10..16) are skipped, 17..19 answered: the
    # newest. Before the fix all ten were answered, the first one 18 ms late.
    clock = 19 * PERIOD
    answered = [k for k in range(10, 20) if sample(inputs, k, clock)]
    assert answered == [17, 18, 19]
    assert inputs.skipped == 7
    # Lockstep (the clock waits for the command): never skipped.
    assert all(sample(inputs, k, k * PERIOD) for k in range(20, 30))


def test_a_controller_always_behind_still_answers_every_half_stale_timeout():
    inputs = ControllerInputs(
        NDOF, SENSORS, stale_timeout=STALE, trigger="inputs", max_sample_age=MAX_AGE
    )
    assert sample(inputs, 0, 0.0)
    # Every sample arrives 10 periods (20 ms) late: only one every stale_timeout / 2 = 25 ms of
    # clock time is answered (13 periods apart: the first whose clock is >= 25 ms after the last
    # answer), so the robot keeps being commanded.
    answered = [k for k in range(1, 40) if sample(inputs, k, (k + 10) * PERIOD)]
    assert answered == [3, 16, 29]
    # A restart of the robot's time forgets the last answer: the next sample is answered.
    inputs.restart()
    assert sample(inputs, 1, 0.5)


def test_clocks_on_different_time_bases_and_no_limit_never_skip():
    wall = 1.7e9  # the node on wall time, the robot's stamps simulated time
    inputs = ControllerInputs(
        NDOF, SENSORS, stale_timeout=STALE, trigger="inputs", max_sample_age=MAX_AGE
    )
    assert all(sample(inputs, k, wall + k * PERIOD) for k in range(5))
    unlimited = ControllerInputs(NDOF, SENSORS, stale_timeout=STALE, trigger="inputs")
    assert all(sample(unlimited, k, 19 * PERIOD) for k in range(20))
    with pytest.raises(InputError, match="max_sample_age"):
        ControllerInputs(NDOF, SENSORS, stale_timeout=STALE, max_sample_age=0.0)


def test_the_every_sample_trigger_answers_a_backlog_in_order():
    """Trigger every_sample (a lockstep simulator with a command_delay runs samples ahead of the
    commands): the same backlog as above is answered whole, in order, none skipped, even with a
    max_sample_age given (it does not apply); a repeated or partial stamp is still not due."""
    inputs = ControllerInputs(
        NDOF, SENSORS, stale_timeout=STALE, trigger="every_sample", max_sample_age=MAX_AGE
    )
    assert inputs.max_sample_age is None
    assert all(sample(inputs, k, k * PERIOD) for k in range(10))
    clock = 19 * PERIOD
    assert [k for k in range(10, 20) if sample(inputs, k, clock)] == list(range(10, 20))
    assert inputs.skipped == 0
    assert not sample(inputs, 19, clock)  # the same stamp again: answered once
    stamp = round(20 * PERIOD * 1e9)
    assert not inputs.set_imu(IMU, time=clock, stamp=stamp)  # a partial sample: not due
