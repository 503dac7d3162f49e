"""The contact estimate of soles without F/T sensors (wbm_control.contact_estimation), on the G1.

References: the model's static contact solution (``static_contact_torques``: the wrenches from
the base rows of g = S^T tau + J^T f, the torques from the joint rows), the closed form m g for the
total load, and placements built by forward kinematics.
"""

from __future__ import annotations

import numpy as np
import pytest

from wbm_control.contact_estimation import ContactEstimator
from wbm_control.exceptions import InputError
from wbm_description import WholeBodyModel
from wbm_description.registry import load_robot

FEET = ("left_foot", "right_foot")


@pytest.fixture(scope="module")
def g1() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("g1"))


def standing(g1: WholeBodyModel, shift: float = 0.0):
    """Initial configuration (the waist rolled by ``shift`` [rad]), its static torques and the
    wrenches of both soles (world-aligned, at the sole origins)."""
    q = g1.initial_configuration()
    frames = [g1.config.sole(name).frame for name in FEET]
    tau, wrenches = g1.static_contact_torques(q, frames)
    if shift:
        joints = g1.joint_positions(q).copy()
        joints[g1.joint_index("waist_roll_joint")] += shift
        base = g1.base_placement_for_reference_frame(joints, "left_sole")
        q = g1.configuration(base, joints)
        tau, wrenches = g1.static_contact_torques(q, frames)
    return q, tau, [wrenches[f] for f in frames]


def test_loads_from_joint_torques_are_the_static_contact_wrenches(g1):
    estimator = ContactEstimator(g1, use_joint_torques=True)
    v = np.zeros(g1.nv)
    for shift in (0.0, 0.2):
        q, tau, wrenches = standing(g1, shift)
        estimate = estimator.update(q, v, FEET, efforts=tau)
        for name, reference in zip(FEET, wrenches, strict=True):
            # The leg rows of the same equations (6 joints, a square J^T): the same wrench up to
            # round-off (1e-8 N, N m on loads of ~160 N).
            np.testing.assert_allclose(estimate.torque_wrenches[name], reference, atol=1e-8)
        total = sum(estimate.loads.values())
        np.testing.assert_allclose(total, g1.total_mass * 9.81, rtol=1e-9)  # m g
        assert estimate.contacts == FEET


def test_a_held_sole_without_load_is_out_of_contact(g1):
    """Torques that hold the robot on the left sole alone: the right sole is unloaded."""
    estimator = ContactEstimator(g1, use_joint_torques=True)
    q = g1.initial_configuration()
    tau, _ = g1.static_contact_torques(q, ["left_sole"])
    estimate = estimator.update(q, np.zeros(g1.nv), FEET, efforts=tau)
    assert estimate.contacts == ("left_foot",)
    np.testing.assert_allclose(estimate.loads["right_foot"], 0.0, atol=1e-8)
    np.testing.assert_allclose(estimate.loads["left_foot"], g1.total_mass * 9.81, rtol=1e-9)


def test_kinematics_confirm_a_touch_down_and_reject_a_lifted_sole(g1):
    """Without torques: plan first; a free sole counts only when on the ground and still."""
    estimator = ContactEstimator(g1, height_tolerance=0.01, speed_tolerance=0.1)
    q = g1.initial_configuration()
    v = np.zeros(g1.nv)
    # Both on the ground, only the left one planned: the right one touches down (kinematics).
    estimate = estimator.update(q, v, ["left_foot"])
    assert estimate.contacts == FEET
    np.testing.assert_allclose(estimate.heights["right_foot"], 0.0, atol=1e-12)
    # The load of a sole in contact is its static share of m g (no torques to tell).
    np.testing.assert_allclose(estimate.loads["right_foot"], g1.total_mass * 9.81 / 2, rtol=1e-12)
    # The right leg bent: its sole 5 cm up, not planned: not in contact, load 0.
    joints = g1.joint_positions(q).copy()
    for name, delta in (("hip_pitch", -0.3), ("knee", 0.6), ("ankle_pitch", -0.3)):
        joints[g1.joint_index(f"right_{name}_joint")] += delta
    lifted = g1.configuration(g1.base_placement_for_reference_frame(joints, "left_sole"), joints)
    estimate = estimator.update(lifted, v, ["left_foot"])
    assert estimate.heights["right_foot"] > 0.05
    assert estimate.contacts == ("left_foot",)
    assert estimate.loads == {"left_foot": g1.total_mass * 9.81, "right_foot": 0.0}
    # On the ground but moving at 0.5 m/s (a base velocity): not a touch-down.
    moving = v.copy()
    moving[0] = 0.5  # base linear velocity, base axes (the base is upright)
    estimate = estimator.update(q, moving, ["left_foot"])
    assert estimate.contacts == ("left_foot",)
    np.testing.assert_allclose(estimate.speeds["right_foot"], 0.5, rtol=1e-6)


def test_leg_columns_are_the_six_leg_joints(g1):
    estimator = ContactEstimator(g1)
    names = [g1.joint_names[i - 6] for i in estimator.leg_columns["left_foot"]]
    assert names == [
        f"left_{n}_joint"
        for n in ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
    ]


def test_bad_arguments_are_named(g1):
    with pytest.raises(InputError, match="height_tolerance"):
        ContactEstimator(g1, height_tolerance=0.0)
    with pytest.raises(InputError, match="unload_threshold"):
        ContactEstimator(g1, load_threshold=10.0, unload_threshold=20.0)
    estimator = ContactEstimator(g1, use_joint_torques=True)
    q = g1.initial_configuration()
    with pytest.raises(InputError, match="efforts"):
        estimator.update(q, np.zeros(g1.nv), FEET, efforts=np.full(g1.ndof, np.nan))


def test_the_base_estimator_anchors_and_releases_soles_on_estimated_loads(g1):
    """Soles without F/T sensors: the loads given to the base estimator (the contact estimate's)
    release and re-anchor them with the thresholds used for F/T loads (40 N / 20 N)."""
    from dataclasses import replace

    from control_helpers import readings_from_state

    from wbm_control.base_estimator import BaseEstimator

    estimator = BaseEstimator(g1, initial_soles=FEET)
    q = g1.initial_configuration()
    readings = readings_from_state(g1, q, np.zeros(g1.nv), {})
    both = estimator.update(readings, {"left_foot": 160.0, "right_foot": 160.0})
    assert both.loaded_soles == FEET
    anchors = estimator.anchors
    one = estimator.update(replace(readings, time=0.002), {"left_foot": 5.0, "right_foot": 320.0})
    assert one.loaded_soles == ("right_foot",)
    # The base is where the right sole's anchor puts it: the true base (1e-12 m, round-off).
    np.testing.assert_allclose(one.q[:3], q[:3], atol=1e-12)
    again = estimator.update(
        replace(readings, time=0.004), {"left_foot": 100.0, "right_foot": 220.0}
    )
    assert again.loaded_soles == FEET
    np.testing.assert_allclose(estimator.anchors["left_foot"], anchors["left_foot"], atol=1e-12)
