"""Feasible targets (wbm_control.feasible_targets) against closed-form geometry.

The clamps are pure geometry: a convex polygon shrunk by a margin, a height band, the
intersection of two balls, a limb's stretched length. Every expected value below is worked out
by hand; the tolerance 1e-9 m is far below any physical scale (1e-6 where Dykstra's iterations
converge to the projection, which they do to about 1e-10 here).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_control.feasible_targets import (
    QUINTIC_PEAK_ACCELERATION,
    START_SLACK,
    ReachLimit,
    clamp_com_target,
    com_motion_duration,
    limb_root_joint,
    project_into_ball,
    project_into_balls,
)

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])  # counter-clockwise [m]


def com_clamp(point):
    return clamp_com_target(
        np.asarray(point, dtype=float),
        SQUARE,
        margin=0.1,
        home_height=0.5,
        height_up=0.02,
        height_down=0.1,
    )


@pytest.mark.parametrize(
    "point, expected",
    [
        ((5.0, 0.5, 0.5), (0.9, 0.5, 0.5)),  # 5 m ahead: onto the shrunk edge x = 0.9
        ((-5.0, 0.5, 0.5), (0.1, 0.5, 0.5)),  # behind
        ((0.5, 5.0, 0.5), (0.5, 0.9, 0.5)),  # left
        ((0.5, -5.0, 0.5), (0.5, 0.1, 0.5)),  # right
        ((5.0, 5.0, 0.5), (0.9, 0.9, 0.5)),  # diagonal: the shrunk polygon's corner
        ((0.95, 0.5, 0.5), (0.9, 0.5, 0.5)),  # inside the polygon, inside the margin band
    ],
)
def test_com_target_is_brought_over_the_shrunk_polygon(point, expected):
    result = com_clamp(point)
    np.testing.assert_allclose(result.value, expected, atol=1e-9)
    assert result.clamped and "support polygon shrunk by 0.1 m" in result.note


def test_com_target_inside_is_accepted_and_height_is_kept_in_its_band():
    inside = com_clamp((0.3, 0.7, 0.45))
    np.testing.assert_allclose(inside.value, (0.3, 0.7, 0.45), atol=0)
    assert not inside.clamped and inside.note == ""
    high = com_clamp((0.3, 0.7, 5.0))
    assert high.value[2] == pytest.approx(0.52, abs=1e-12)
    assert "height within [0.400, 0.520] m" in high.note
    low = com_clamp((0.3, 0.7, -5.0))
    assert low.value[2] == pytest.approx(0.4, abs=1e-12)
    both = com_clamp((-5.0, 0.5, 5.0))
    np.testing.assert_allclose(both.value, (0.1, 0.5, 0.52), atol=1e-9)
    assert len(both.reasons) == 2


def test_com_target_with_one_sole_point_is_only_height_clamped():
    result = clamp_com_target(
        np.array([5.0, 0.0, 0.5]),
        np.zeros((2, 2)),
        margin=0.1,
        home_height=0.5,
        height_up=0.02,
        height_down=0.1,
    )
    np.testing.assert_allclose(result.value, (5.0, 0.0, 0.5))


def test_projection_into_a_ball_and_into_the_lens_of_two_balls():
    np.testing.assert_allclose(
        project_into_ball(np.array([3.0, 4.0, 0.0]), np.zeros(3), 1.0), (0.6, 0.8, 0.0)
    )
    balls = [(np.zeros(3), 1.0), (np.array([1.5, 0.0, 0.0]), 1.0)]
    # The lens of two unit balls 1.5 m apart: its rim is the circle x = 0.75 of radius
    # sqrt(1 - 0.75^2); its tips are x = 0.5 and x = 1.0 on the axis.
    rim = np.sqrt(1.0 - 0.75**2)
    np.testing.assert_allclose(
        project_into_balls(np.array([0.75, 5.0, 0.0]), balls), (0.75, rim, 0.0), atol=1e-6
    )
    np.testing.assert_allclose(
        project_into_balls(np.array([-5.0, 0.0, 0.0]), balls), (0.5, 0.0, 0.0), atol=1e-6
    )
    np.testing.assert_allclose(
        project_into_balls(np.array([0.8, 0.1, 0.0]), balls), (0.8, 0.1, 0.0), atol=0
    )


def two_armed_robot(upper: float = 0.3, fore: float = 0.2, hand: float = 0.1):
    """A free-flyer torso with two arms (shoulder, elbow) hanging down, and a hand frame each."""
    model = pin.Model()
    base = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    inertia = pin.Inertia.FromSphere(1.0, 0.05)
    model.appendBodyToJoint(base, inertia, pin.SE3.Identity())
    hands = {}
    for side, y in (("l", 0.2), ("r", -0.2)):
        shoulder = model.addJoint(
            base, pin.JointModelRY(), pin.SE3(np.eye(3), np.array([0.0, y, 0.5])), f"{side}_sh"
        )
        model.appendBodyToJoint(shoulder, inertia, pin.SE3.Identity())
        elbow = model.addJoint(
            shoulder,
            pin.JointModelRY(),
            pin.SE3(np.eye(3), np.array([0, 0, -upper])),
            f"{side}_el",
        )
        model.appendBodyToJoint(elbow, inertia, pin.SE3.Identity())
        hands[side] = model.addFrame(
            pin.Frame(
                f"{side}_hand",
                elbow,
                0,
                pin.SE3(np.eye(3), np.array([0.0, 0.0, -fore - hand])),
                pin.FrameType.OP_FRAME,
            )
        )
    return model, hands


def test_limb_reach_is_a_fraction_of_the_stretched_arm_around_the_shoulder():
    model, hands = two_armed_robot()
    data = model.createData()
    q = pin.neutral(model)
    q[7] = 1.2  # left shoulder raised, elbow bent: the reach does not depend on the posture
    q[8] = -2.0
    pin.framesForwardKinematics(model, data, q)
    root = limb_root_joint(model, hands["l"], [hands["r"]])
    assert model.names[root] == "l_sh"
    limit = ReachLimit.at_start(
        model, data, hands["l"], [hands["r"]], max_reach=10.0, reach_fraction=0.8
    )
    # Stretched arm: upper arm 0.3 + forearm and hand 0.3 = 0.6 m.
    assert limit.limb_reach == pytest.approx(0.8 * 0.6, abs=1e-9)
    np.testing.assert_allclose(limit.limb_root, (0.0, 0.2, 0.5), atol=1e-12)
    # A target 5 m ahead ends on the reach sphere, in the direction of the target.
    far = pin.SE3(np.eye(3), np.array([5.0, 0.2, 0.5]))
    clamped = limit.clamp(far)
    np.testing.assert_allclose(clamped.value.translation, (0.48, 0.2, 0.5), atol=1e-6)
    assert "limb's reach 0.480 m" in clamped.note
    # The max_reach ball around the start position applies too (the intersection of both).
    tight = ReachLimit.at_start(
        model, data, hands["l"], [hands["r"]], max_reach=0.05, reach_fraction=0.8
    )
    inside = tight.clamp(far).value.translation
    assert np.linalg.norm(inside - tight.home) <= 0.05 + 1e-6
    assert np.linalg.norm(inside - tight.limb_root) <= tight.limb_reach + 1e-6


def test_limb_reach_never_excludes_the_start_position():
    model, hands = two_armed_robot()
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))  # arm hanging straight
    limit = ReachLimit.at_start(
        model, data, hands["l"], [hands["r"]], max_reach=0.3, reach_fraction=0.5
    )
    # The arm's length (plus the start slack), not 0.3.
    assert limit.limb_reach == pytest.approx(0.6 + START_SLACK, abs=1e-9)
    home = pin.SE3(np.eye(3), limit.home.copy())
    assert not limit.clamp(home).clamped


def test_icub_hand_and_foot_limbs_start_at_shoulder_and_hip(icub):
    model = icub.model
    frames = {name: icub.frame_id(name) for name in ("l_hand", "r_hand", "l_sole", "r_sole")}
    for frame, root in (("l_hand", "l_shoulder_pitch"), ("r_sole", "r_hip_pitch")):
        others = [fid for name, fid in frames.items() if name != frame]
        assert model.names[limb_root_joint(model, frames[frame], others)] == root


def test_com_motion_is_slowed_so_the_lip_zmp_stays_within_the_allowance():
    """The quintic's peak acceleration (10/sqrt(3)) d / T^2, over omega^2, is the ZMP's lead."""
    omega, allowance, distance = np.sqrt(9.81 / 0.5), 0.02, 0.15
    duration = com_motion_duration(distance, 1.0, omega=omega, zmp_allowance=allowance)
    expected = np.sqrt(10.0 / np.sqrt(3.0) * distance / (omega**2 * allowance))
    assert duration == pytest.approx(expected, rel=1e-12)
    assert duration > 1.0
    # Sampled check of the peak: max |s''| of the quintic on a fine grid.
    tau = np.linspace(0.0, 1.0, 200001)
    peak = np.max(np.abs(60 * tau - 180 * tau**2 + 120 * tau**3))
    assert peak == pytest.approx(QUINTIC_PEAK_ACCELERATION, rel=1e-9)
    lead = peak * distance / duration**2 / omega**2
    assert lead == pytest.approx(allowance, rel=1e-9)
    # Short motions keep the requested duration; no allowance means no limit.
    assert com_motion_duration(0.01, 1.0, omega=omega, zmp_allowance=allowance) == 1.0
    assert com_motion_duration(5.0, 1.0, omega=omega, zmp_allowance=0.0) == 1.0
