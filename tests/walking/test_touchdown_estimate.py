"""Touch-down of soles without F/T sensors (wbm_control.walking.touchdown_estimate).

References: closed cases of the gate (a sole in the air, on the ground, sliding), the G1's weight
m g from the URDF's masses for the load the joint torques give (the static contact solution,
``static_contact_torques``), a leg pushing 100 N in the air (its torques J^T f built by hand),
and the state machine's own clock (the planned end of a swing) for when a touch-down is taken.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from walking_helpers import standing_feet

from wbm_control.contact_estimation import ContactEstimator
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.walking import (
    ActivateContact,
    ContactState,
    FootstepPlanner,
    WalkingState,
    WalkingStateMachine,
)
from wbm_control.walking.touchdown_estimate import TouchdownEstimate
from wbm_control.walking_behaviour import WalkingBehaviour
from wbm_description import WholeBodyModel, load_robot
from wbm_description.exceptions import InputError

FEET = ("left_foot", "right_foot")
DT = 0.002  # control period of the state machine test [s]


@pytest.fixture(scope="module")
def g1() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("g1"))


def test_the_gate_passes_a_load_only_on_the_ground_and_still():
    gate = TouchdownEstimate(height_tolerance=0.01, speed_tolerance=0.1)
    # On the ground, still: the load is the reading's force (exactly).
    assert gate.reading(0.002, 0.01, 120.0).normal_force == 120.0
    assert gate.reading(0.002, 0.01, 120.0).above(30.0) is True
    # 3 cm up (a swing leg's inertia reads as 120 N): no load.
    assert gate.reading(0.03, 0.01, 120.0).normal_force == 0.0
    assert gate.reading(0.03, 0.01, 120.0).above(30.0) is False
    # On the ground but moving at 0.5 m/s: not down yet.
    assert gate.reading(0.0, 0.5, 120.0).above(30.0) is False
    # Down but unloaded: not a touch-down of 30 N.
    assert gate.reading(0.0, 0.0, 10.0).above(30.0) is False
    # Without joint torques: the flag of the kinematics alone.
    assert gate.reading(0.005, 0.05, None).in_contact is True
    assert gate.reading(0.02, 0.05, None).in_contact is False
    # The tolerances are strict bounds.
    assert gate.near_ground(0.01, 0.0) is False and gate.near_ground(0.0, 0.1) is False
    with pytest.raises(InputError, match="height_tolerance"):
        TouchdownEstimate(height_tolerance=0.0)
    with pytest.raises(InputError, match="speed"):
        gate.reading(0.0, math.nan, 1.0)


def test_on_the_g1_a_loaded_leg_in_the_air_is_no_touch_down(g1):
    """The right leg bent (its sole 5 cm up), the robot on its left sole; the right leg's torques
    also push 100 N down along z in the air (J^T f added by hand): the torques' wrench says 100 N,
    the gate says 0; the left sole carries m g."""
    estimator = ContactEstimator(g1, use_joint_torques=True)
    gate = TouchdownEstimate(estimator.height_tolerance, estimator.speed_tolerance)
    q = g1.initial_configuration()
    joints = g1.joint_positions(q).copy()
    for name, delta in (("hip_pitch", -0.3), ("knee", 0.6), ("ankle_pitch", -0.3)):
        joints[g1.joint_index(f"right_{name}_joint")] += delta
    lifted = g1.configuration(g1.base_placement_for_reference_frame(joints, "left_sole"), joints)
    tau, _ = g1.static_contact_torques(lifted, ["left_sole"])
    data = g1.model.createData()
    pin.computeJointJacobians(g1.model, data, lifted)
    pin.updateFramePlacements(g1.model, data)
    jacobian = pin.getFrameJacobian(
        g1.model, data, g1.frame_id("right_sole"), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    )
    push = np.array([0.0, 0.0, 100.0, 0.0, 0.0, 0.0])
    tau = tau - (jacobian.T @ push)[6:]  # the leg's torques as if the ground pushed 100 N
    estimate = estimator.update(lifted, np.zeros(g1.nv), ["left_foot"], efforts=tau)
    # The torques' wrench of the lifted sole is the 100 N (round-off: 1e-8 N).
    np.testing.assert_allclose(estimate.torque_wrenches["right_foot"], push, atol=1e-8)
    raw = {name: float(wrench[2]) for name, wrench in estimate.torque_wrenches.items()}
    readings = gate.readings(estimate.heights, estimate.speeds, raw)
    assert estimate.heights["right_foot"] > 0.05
    assert readings["right_foot"].normal_force == 0.0
    # The left sole: on the ground, carrying m g (1e-9 relative: round-off).
    np.testing.assert_allclose(readings["left_foot"].normal_force, g1.total_mass * 9.81, rtol=1e-9)
    # And the contact estimate's own loads give the lifted sole nothing either.
    assert estimate.loads["right_foot"] == 0.0


def test_a_swing_ends_when_the_sole_is_down_not_when_loaded_in_the_air(settings, feet):
    """Right foot stance; the left swing's reading is 300 N all along (inertia) but the sole is
    5 cm up until 0.1 s after the planned end: the touch-down comes then ("touchdown", measured),
    not at the planned end (the clock) nor at the timeout."""
    left, right = standing_feet()
    steps = FootstepPlanner(settings, feet).plan_from_velocity(
        (0.2, 0.0, 0.0), stance=right, swing_foot=left, n_steps=1
    )
    machine = WalkingStateMachine(settings, feet, left=left, right=right)
    machine.set_footsteps(steps, 0.0)
    gate = TouchdownEstimate()
    planned_end = settings.initial_double_support_duration + settings.single_support_duration
    down_at = planned_end + 0.5 * settings.max_touchdown_delay
    commands = []
    for t in np.arange(0.0, planned_end + settings.max_touchdown_delay + 0.1, DT):
        height = 0.0 if t >= down_at or t < settings.initial_double_support_duration else 0.05
        contact = ContactState(gate.reading(height, 0.0, 300.0), gate.reading(0.0, 0.0, 300.0))
        commands += machine.update(float(t), contact)
    landed = [c for c in commands if isinstance(c, ActivateContact)]
    assert len(landed) == 1
    assert landed[0].reason == "touchdown"
    assert landed[0].time == pytest.approx(down_at, abs=DT)  # one control period
    assert machine.state in (WalkingState.STOPPING, WalkingState.STANDING)


def test_the_behaviour_reads_the_estimate_for_soles_without_ft(g1, icub):
    """G1 (no F/T): the contact state is the gated contact estimate; iCub (ankle F/T): none is
    built and the F/T forces are read as before."""
    settings = ControllerSettings.from_yaml(_controller_yaml("g1"))
    controller = WholeBodyController(g1, replace(settings, mode="torque"))
    behaviour = WalkingBehaviour(controller, settings.walking)
    assert behaviour._touchdown_estimate is not None  # noqa: SLF001
    q = g1.initial_configuration()
    tau, _ = g1.static_contact_torques(q, [g1.config.sole(n).frame for n in FEET])
    controller.contact_estimate = controller.contact_estimator.update(
        q, np.zeros(g1.nv), FEET, efforts=tau
    )
    estimate = _fake_estimate(controller.contact_estimate.loads)
    state = behaviour.contact_state(estimate)
    total = state.left.normal_force + state.right.normal_force
    np.testing.assert_allclose(total, g1.total_mass * 9.81, rtol=1e-9)  # m g
    icub_controller = WholeBodyController(
        icub, replace(ControllerSettings.from_yaml(_controller_yaml("icub")), mode="torque")
    )
    assert WalkingBehaviour(icub_controller)._touchdown_estimate is None  # noqa: SLF001


def _controller_yaml(robot: str) -> Path:
    return Path(__file__).resolve().parents[2] / "config" / robot / "controller.yaml"


def _fake_estimate(forces):
    """A base estimate carrying only normal forces (what contact_state reads of it)."""
    from wbm_control.base_estimator import BaseEstimate

    return BaseEstimate(np.zeros(1), np.zeros(1), (), {}, dict(forces))
