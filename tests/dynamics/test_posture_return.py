"""The watchdog's posture return: from the references a trip replaces to the posture hold.

References: the minimum-jerk profile's closed form (s(1/2) = 1/2, s'(1/2) = 15/8, zero velocity
at both ends), its derivative checked by central finite differences, and the continuity
conditions the robot side needs (no step in the position references at a trip, the hold
exactly at the end). Then through the pacing loop (panda on the simulator backend, as
``test_pacing.py``): a trip with the arm held away from the initial posture starts the
references where the controller's were, and ends on the hold.
"""

from __future__ import annotations

import numpy as np
import pytest

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.backends import SimulatorBackend
from wbm_dynamics.held_command import CommandUpdate
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.pacing import PacingLoop
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.watchdog import PostureReturn

HOLD = JointCommand(position=np.array([0.0, 1.0, -2.0]), effort=np.array([0.5, -1.0, 2.0]))
START = np.array([0.4, 0.0, -2.0])
DURATION = 0.5  # [s]


def test_the_return_starts_where_the_joints_are_and_ends_on_the_hold():
    posture = PostureReturn(HOLD, DURATION)
    first = posture.trip(10.0, START)
    # No step at the trip: the references are the joints' positions, at rest; no command
    # replaced (none given): the hold's feed-forward.
    np.testing.assert_array_equal(first.position, START)
    np.testing.assert_array_equal(first.velocity, np.zeros(3))
    np.testing.assert_array_equal(first.effort, HOLD.effort)
    # Half way: the minimum-jerk profile's closed form, s(1/2) = 1/2, s'(1/2) = 15/8.
    half = posture.command(10.0 + DURATION / 2)
    np.testing.assert_allclose(half.position, START + 0.5 * (HOLD.position - START), atol=1e-15)
    np.testing.assert_allclose(
        half.velocity, 15.0 / 8.0 / DURATION * (HOLD.position - START), atol=1e-14
    )
    # The end: exactly the hold, at rest, and it stays there.
    for t in (10.0 + DURATION, 12.0):
        end = posture.command(t)
        np.testing.assert_array_equal(end.position, HOLD.position)
        np.testing.assert_array_equal(end.velocity, np.zeros(3))
        np.testing.assert_array_equal(end.effort, HOLD.effort)
    assert posture.returning(10.0 + DURATION - 1e-6) and not posture.returning(10.0 + DURATION)


def test_the_return_starts_from_the_position_references_it_replaces():
    """Torque control (effort only) and position control (references), joint by joint: the
    position references start at the replaced command's (the measured positions where it gave
    none); the feed-forward is the hold's from the trip on (module docstring of the watchdog:
    the replaced effort as a start fell in a slow loop)."""
    posture = PostureReturn(HOLD, DURATION)
    last = JointCommand(
        position=np.array([np.nan, 0.3, np.nan]), effort=np.array([-9.0, np.nan, 4.0])
    )
    first = posture.trip(0.0, START, last)
    np.testing.assert_array_equal(first.position, [START[0], 0.3, START[2]])
    np.testing.assert_array_equal(first.effort, HOLD.effort)
    half = posture.command(DURATION / 2)
    np.testing.assert_allclose(half.position[1], (0.3 + 1.0) / 2, atol=1e-15)


def test_the_velocity_references_are_the_derivative_of_the_positions():
    posture = PostureReturn(HOLD, DURATION)
    posture.trip(0.0, START)
    h = 1e-6
    for t in np.linspace(0.01, DURATION - 0.01, 9):
        difference = (posture.command(t + h).position - posture.command(t - h).position) / (2 * h)
        # Central differences of a quintic: error ~ h^2 |s'''| / 6 (|s'''| <= 60 / 0.5^3).
        np.testing.assert_allclose(posture.command(t).velocity, difference, atol=1e-6)


def test_a_trip_during_a_return_continues_it_and_one_after_it_starts_again():
    posture = PostureReturn(HOLD, DURATION)
    posture.trip(0.0, START)
    expected = posture.command(0.3)
    # Tripped again at 0.2 s with the joints elsewhere (a loop missing most of its cycles):
    # the same return goes on, it does not restart from where the joints sagged to.
    posture.trip(0.2, START + 0.3)
    np.testing.assert_array_equal(posture.command(0.3).position, expected.position)
    # After the end, a new trip starts from the joints again.
    elsewhere = HOLD.position + np.array([0.0, 0.2, 0.0])
    np.testing.assert_array_equal(posture.trip(0.6, elsewhere).position, elsewhere)
    posture.reset()  # a robot reset forgets the return
    np.testing.assert_array_equal(posture.trip(0.7, START).position, START)


def test_zero_duration_is_the_hold_at_once_and_bad_durations_are_refused():
    posture = PostureReturn(HOLD, 0.0)
    command = posture.trip(1.0, START)
    np.testing.assert_array_equal(command.position, HOLD.position)
    assert command.velocity is None  # the hold itself: its servos damp towards rest
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(InputError, match="duration"):
            PostureReturn(HOLD, bad)


def test_a_trip_of_the_pacing_loop_moves_the_arm_from_where_it_was_to_the_hold(panda):
    """Panda's first joint commanded 0.5 rad from its initial posture, then silence: the servos'
    position references start at the last command's (not at the hold, 0.5 rad away: the old
    law's step, kp 0.5 rad at once) and reach the hold after command_timeout_return."""
    timeout, duration = 0.01, 0.2
    backend = SimulatorBackend(panda, SimulatorSettings())
    loop = PacingLoop(
        backend,
        RobotInterfaceSettings(
            robot="panda",
            pacing="as_fast_as_possible",
            command_timeout=timeout,
            command_timeout_return=duration,
        ),
        publish=lambda outputs: None,
        log=lambda level, text: None,
    )
    hold = backend.hold_posture_command()
    loop.start(thread=False)
    target = hold.position.copy()
    target[0] += 0.5
    effort = hold.effort + 0.25  # a feed-forward of the controller's own
    for _ in range(250):  # 0.5 s: the arm settles at the target
        loop.command(
            CommandUpdate(np.arange(panda.ndof), position=target, effort=effort),
            stamp=backend.time,
        )
        loop.run_once()
    assert abs(backend.read().joint_positions[0] - target[0]) < 0.02  # settled near it
    servos = backend.engine.servos
    while loop.trips == 0:
        tripped = backend.time
        loop.run_once()
    # At the trip: the last command's references, not the hold 0.5 rad away; the hold's
    # feed-forward.
    np.testing.assert_array_equal(servos.position, target)
    np.testing.assert_array_equal(servos.effort, hold.effort)
    assert abs(servos.position[0] - hold.position[0]) > 0.45
    while backend.time < tripped + duration + 0.01:
        loop.run_once()
        assert np.abs(backend.read().joint_velocities).max() < 5.0  # no slam
    np.testing.assert_allclose(servos.position, hold.position, atol=1e-6)
    np.testing.assert_allclose(servos.effort, hold.effort, atol=1e-6)
