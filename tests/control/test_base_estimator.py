"""The base estimator (IMU + leg kinematics) against ground truth built independently."""

import math
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from control_helpers import readings_from_state

from wbm_control.base_estimator import BaseEstimator
from wbm_description.exceptions import InputError

STANCE_FORCE = np.array([0.0, 0.0, 140.0, 0.0, 0.0, 0.0])  # ~half of iCub's weight [N]


def state_with_sole_fixed(model, rng, sole_frame, *, base_rpy=(0.05, -0.08, 0.3)):
    """A configuration with the sole frame at the world origin and a velocity that keeps it fixed.

    The velocity is a random vector projected on the null space of the sole's 6D Jacobian (SVD),
    a different computation from the estimator's (gyro inversion + 3D least squares).
    """
    q = model.initial_configuration()
    q[7:] += rng.normal(0, 0.05, model.ndof)
    q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(*base_rpy)).coeffs()
    placement = model.frame_placement(q, sole_frame)
    q[:3] -= placement.translation  # sole origin at the world origin
    J = model.frame_jacobian(q, sole_frame, representation="body")
    _, singular, vt = np.linalg.svd(J)
    null_space = vt[np.sum(singular > 1e-10) :].T
    v = null_space @ rng.normal(0, 0.5, null_space.shape[1])
    return q, v


def test_single_support_state_is_recovered(icub):
    rng = np.random.default_rng(1)
    q, v = state_with_sole_fixed(icub, rng, "l_sole")
    np.testing.assert_allclose(icub.frame_velocity(q, v, "l_sole"), 0, atol=1e-12)
    estimator = BaseEstimator(icub)  # anchors the left sole at the world origin at start
    readings = readings_from_state(icub, q, v, {"left_foot": STANCE_FORCE * 2})
    estimate = estimator.update(readings)
    # Exact kinematics on both sides: only rounding (1e-12 on values of order 1).
    np.testing.assert_allclose(estimate.q[:3], q[:3], atol=1e-12)
    np.testing.assert_allclose(
        pin.Quaternion(estimate.q[3:7]).toRotationMatrix(),
        pin.Quaternion(q[3:7]).toRotationMatrix(),
        atol=1e-12,
    )
    np.testing.assert_allclose(estimate.q[7:], q[7:], atol=0)
    np.testing.assert_allclose(estimate.v, v, atol=1e-10)
    assert estimate.loaded_soles == ("left_foot",)


def test_double_support_and_transfer_to_the_other_foot(icub):
    rng = np.random.default_rng(2)
    q = icub.initial_configuration()  # both soles flat on the ground, left at the origin
    estimator = BaseEstimator(icub)
    both = {"left_foot": STANCE_FORCE, "right_foot": STANCE_FORCE}
    estimate = estimator.update(readings_from_state(icub, q, np.zeros(icub.nv), both))
    np.testing.assert_allclose(estimate.q, q, atol=1e-12)
    right_anchor = estimator.anchors["right_foot"]
    np.testing.assert_allclose(
        right_anchor, icub.frame_placement(q, "r_sole").translation, atol=1e-12
    )
    # Lift the left foot: single support on the right, moving with the right sole fixed.
    q2 = q.copy()
    q2[7:] += rng.normal(0, 0.03, icub.ndof)
    q2[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.02, 0.03, -0.1)).coeffs()
    q2[:3] += right_anchor - icub.frame_placement(q2, "r_sole").translation
    J = icub.frame_jacobian(q2, "r_sole", representation="body")
    _, singular, vt = np.linalg.svd(J)
    v2 = vt[6:].T @ rng.normal(0, 0.5, icub.nv - 6)
    readings = readings_from_state(
        icub, q2, v2, {"left_foot": np.zeros(6), "right_foot": 2 * STANCE_FORCE}, time=0.1
    )
    estimate = estimator.update(readings)
    assert estimate.loaded_soles == ("right_foot",)
    np.testing.assert_allclose(estimate.q[:3], q2[:3], atol=1e-12)
    np.testing.assert_allclose(estimate.v, v2, atol=1e-10)


def test_estimator_needs_an_imu(icub):
    q = icub.initial_configuration()
    readings = readings_from_state(icub, q, np.zeros(icub.nv), {"left_foot": STANCE_FORCE})
    from dataclasses import replace

    with pytest.raises(InputError, match="imu"):
        BaseEstimator(icub).update(replace(readings, imu=None))
    with pytest.raises(InputError, match="joint_positions"):
        BaseEstimator(icub).update(replace(readings, joint_positions=np.full(icub.ndof, np.nan)))


def test_invalid_readings_are_named_in_the_order_checked(icub):
    """One finiteness test covers all the readings; the first bad one is still the one named
    (joint positions, joint velocities, gyro, F/T); large finite values (1e200) are accepted."""
    q = icub.initial_configuration()
    readings = readings_from_state(icub, q, np.zeros(icub.nv), {"left_foot": STANCE_FORCE})
    nan_joints = np.full(icub.ndof, np.nan)
    cases = [
        ("joint_positions", replace(readings, joint_positions=nan_joints, joint_velocities=[0.0])),
        ("joint_velocities", replace(readings, joint_velocities=nan_joints)),
        ("joint_velocities", replace(readings, joint_velocities=np.zeros(icub.ndof + 1))),
        ("angular_velocity", replace(readings, imu=replace(readings.imu, angular_velocity=[0.0]))),
        (
            "angular_velocity",
            replace(readings, imu=replace(readings.imu, angular_velocity=[0.0, np.inf, 0.0])),
        ),
        ("left_foot", replace(readings, wrenches={"left_foot": np.full(6, np.nan)})),
        ("left_foot", replace(readings, wrenches={"left_foot": np.zeros(5)})),
    ]
    for name, bad in cases:
        with pytest.raises(InputError, match=name):
            BaseEstimator(icub).update(bad)
    huge = replace(readings, wrenches={"left_foot": np.full(6, 1e200)})
    assert abs(BaseEstimator(icub).update(huge).normal_forces["left_foot"]) > 1e199
    # A sensor the estimator does not know is ignored, whatever it reads.
    other = replace(readings, wrenches={**readings.wrenches, "unknown": np.full(6, np.nan)})
    BaseEstimator(icub).update(other)


def test_the_jacobian_blocks_the_velocities_take_as_known(icub):
    """At the base origin (the estimator's one kinematics pass) each sole's linear rows
    (LOCAL_WORLD_ALIGNED) have the identity as their base linear block and -[p]x (p the sole's
    position in the base) as their base angular block, exactly: the least squares' normal matrix
    is k I and the soles' velocities are v_O + (w_b + w) x p. The joints' parts (v_O, w) of one
    product (``_joint_velocities``) are those of Pinocchio's frame Jacobians, and the placements
    the update reads through views are those of the last pass (a second posture)."""
    estimator = BaseEstimator(icub)
    rng = np.random.default_rng(5)
    model, data = estimator.pin_model, estimator.data
    for _ in range(2):
        estimator._kinematics_in_base(
            icub.initial_configuration()[7:] + rng.normal(0, 0.3, icub.ndof)
        )
        dq = rng.normal(0, 1.0, icub.ndof)
        imu_motion, *sole_motions = estimator._joint_velocities(dq)
        imu = pin.getFrameJacobian(model, data, estimator.imu_frame_id, pin.LOCAL)
        rotation = data.oMf[estimator.imu_frame_id].rotation
        np.testing.assert_array_equal(estimator._imu_rotation_view, rotation)
        np.testing.assert_allclose(
            rotation @ (imu[3:6, 6:] @ dq), imu_motion[3:], rtol=0.0, atol=1e-12
        )
        for sole, motion in zip(estimator._soles, sole_motions, strict=True):
            frame_id = estimator.sole_frame_ids[sole]
            rows = pin.getFrameJacobian(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED)[:3]
            p = data.oMf[frame_id].translation
            np.testing.assert_array_equal(rows[:, :3], np.eye(3))
            np.testing.assert_array_equal(rows[:, 3:6], -pin.skew(p))
            velocity = np.array(motion[:3]) + np.cross(motion[3:], p)
            np.testing.assert_allclose(rows[:, 6:] @ dq, velocity, rtol=0.0, atol=1e-12)
        views = [*estimator._sole_translation_views, estimator._imu_translation_view]
        frames = [*estimator.sole_frame_ids.values(), estimator.imu_frame_id]
        for view, frame_id in zip(views, frames, strict=True):
            np.testing.assert_array_equal(view, data.oMf[frame_id].translation)
        for name, (rotation_view, translation_view) in estimator._sensor_views.items():
            placement = data.oMf[estimator.sensor_frame_ids[name]]
            np.testing.assert_array_equal(rotation_view, placement.rotation)
            np.testing.assert_array_equal(translation_view, placement.translation)


# ---------------------------------------------------------------- known flat ground

GROUND_STIFFNESS = 2.0e5  # [N/m]: a loaded sole sinks F / k below the ground plane
WEIGHT = 300.0  # [N]
TRANSFER = (50.0, 150.0, 250.0, WEIGHT)  # the new sole's load over a step's double support [N]


def sole_posed(model, q, frame, rotation, position, iterations=20):
    """q with one leg's joints moved to put a sole frame at a placement (base fixed).

    Newton iterations on the frame's LOCAL log6 error over the columns of the joints supporting
    the frame (its leg), from q; converged to 1e-12 (asserted).
    """
    target = pin.SE3(rotation, np.asarray(position, dtype=float))
    frame_id = model.frame_id(frame)
    joint = model.model.frames[frame_id].parentJoint
    columns = [
        i
        for j in model.model.supports[joint][2:]  # without the universe and the free-flyer
        for i in range(
            model.model.joints[j].idx_v, model.model.joints[j].idx_v + model.model.joints[j].nv
        )
    ]
    q = q.copy()
    for _ in range(iterations):
        error = pin.log6(model.frame_placement(q, frame).actInv(target)).vector
        if np.linalg.norm(error) < 1e-13:
            break
        J = model.frame_jacobian(q, frame, representation="body")[:, columns]
        dv = np.zeros(model.nv)
        dv[columns] = np.linalg.solve(J, error)
        q = pin.integrate(model.model, q, dv)
    assert np.linalg.norm(pin.log6(model.frame_placement(q, frame).actInv(target))) < 1e-12
    return q


def stepping_in_place_on_a_giving_ground(icub, flat_ground, steps):
    """Stepping in place on a ground that gives F / k under a sole's load F (module constants).

    The base stays put; each sole's leg puts it flat, at its start (x, y), F / k below the
    ground plane; the loads move from one sole to the other in the steps of TRANSFER, then the
    unloaded sole lifts 2 cm. Returns the estimate's height error (estimate - truth) [m] in
    each single support, after each full transfer (the first: standing on the left sole).
    """
    q0 = icub.initial_configuration()  # both soles nearly flat at z = 0, the left at the origin
    # (x, y) of the initial posture's soles, on the plane (the right one is 1.4e-6 m below it).
    start = {
        s: icub.frame_placement(q0, f).translation * [1.0, 1.0, 0.0]
        for s, f in (("left_foot", "l_sole"), ("right_foot", "r_sole"))
    }
    frames = {"left_foot": "l_sole", "right_foot": "r_sole"}
    estimator = BaseEstimator(icub, flat_ground=flat_ground)
    time = 0.0

    def sample(loads, lifted=()):
        nonlocal time
        q = q0
        for sole, frame in frames.items():
            height = 0.02 if sole in lifted else -loads[sole] / GROUND_STIFFNESS
            q = sole_posed(icub, q, frame, np.eye(3), start[sole] + [0.0, 0.0, height])
        wrenches = {s: np.array([0.0, 0.0, loads[s], 0.0, 0.0, 0.0]) for s in frames}
        estimate = estimator.update(
            readings_from_state(icub, q, np.zeros(icub.nv), wrenches, time=time)
        )
        time += 0.1
        return estimate.q[2] - q[2]

    sample({"left_foot": WEIGHT / 2, "right_foot": WEIGHT / 2})
    errors = []
    stance, swing = "left_foot", "right_foot"
    sample({stance: WEIGHT, swing: 0.0})
    errors.append(sample({stance: WEIGHT, swing: 0.0}, lifted=(swing,)))
    for _ in range(steps):
        for load in TRANSFER:
            sample({stance: WEIGHT - load, swing: load})
        stance, swing = swing, stance
        errors.append(sample({stance: WEIGHT, swing: 0.0}, lifted=(swing,)))
    return np.array(errors)


def test_a_known_flat_ground_stops_the_height_ratchet_of_a_giving_ground(icub):
    """Anchored where the estimate puts it, each step raises the estimate; on the plane, not.

    The reference, by hand: the new sole is anchored at its first load above 40 N (50 N here),
    F_new / k deep, while the old one, carrying 250 N, has risen to 250 N / k deep and is the
    base's only anchor; after the transfer the new sole sits WEIGHT / k deep. Each single
    support is then (250 - 50) N / k = 1.0 mm higher than the one before (the G1's ratchet,
    base_estimator's docstring), the first WEIGHT / k = 1.5 mm high (the left sole anchored on
    the plane at start). With ``flat_ground`` every anchor is on the plane: 1.5 mm high at every
    step. Kinematics exact (IK to 1e-12): tolerance 1e-9 m.
    """
    steps = 4
    off = stepping_in_place_on_a_giving_ground(icub, False, steps)
    on = stepping_in_place_on_a_giving_ground(icub, True, steps)
    depth = WEIGHT / GROUND_STIFFNESS
    ratchet = (TRANSFER[2] - TRANSFER[0]) / GROUND_STIFFNESS
    np.testing.assert_allclose(off, depth + ratchet * np.arange(steps + 1), rtol=0, atol=1e-9)
    np.testing.assert_allclose(on, np.full(steps + 1, depth), rtol=0, atol=1e-9)


@pytest.mark.parametrize("landing", ["rolled", "step"])
def test_flat_ground_puts_the_lowest_corner_on_the_plane_and_leaves_a_step(icub, landing):
    """A sole landing rolled 5 deg on its edge, 1 mm into the ground, while the estimate is 3 mm
    high (the stance sole sunk 3 mm, anchored on the plane at start): its anchor is its true
    origin raised by 1 mm (the true lowest corner, from the model's corner points, put on the
    plane), its horizontal position where the estimate puts it (exact here). A sole landing
    flat on a 5 cm step (beyond the 1 cm tolerance): where the estimate puts it, 3 mm above
    the truth. Tolerance 1e-9 m (exact kinematics, IK to 1e-12).
    """
    q0 = icub.initial_configuration()
    left, right = (
        icub.frame_placement(q0, f).translation * [1, 1, 0] for f in ("l_sole", "r_sole")
    )
    q = sole_posed(icub, q0, "l_sole", np.eye(3), left + [0.0, 0.0, -0.003])
    estimator = BaseEstimator(icub, flat_ground=True)
    stance = {"left_foot": 2 * STANCE_FORCE, "right_foot": np.zeros(6)}
    estimator.update(readings_from_state(icub, q, np.zeros(icub.nv), stance))
    sole = icub.config.sole("right_foot")
    if landing == "rolled":
        rotation = pin.rpy.rpyToMatrix(math.radians(5.0), 0.0, 0.0)
        lowest = min((rotation @ corner)[2] for corner in sole.corners())
        q = sole_posed(icub, q, "r_sole", rotation, right + [0.0, 0.0, -0.001 - lowest])
    else:
        q = sole_posed(icub, q, "r_sole", np.eye(3), right + [0.0, 0.0, 0.05])
    placement = icub.frame_placement(q, "r_sole")
    corners = [placement.act(corner)[2] for corner in sole.corners()]
    both = {"left_foot": STANCE_FORCE, "right_foot": STANCE_FORCE}
    estimator.update(readings_from_state(icub, q, np.zeros(icub.nv), both, time=0.1))
    anchor = estimator.anchors["right_foot"]
    if landing == "rolled":
        assert min(corners) == pytest.approx(-0.001, abs=1e-12)
        expected = placement.translation + [0.0, 0.0, -min(corners)]
    else:
        expected = placement.translation + [0.0, 0.0, 0.003]
    np.testing.assert_allclose(anchor, expected, rtol=0, atol=1e-9)


def swaying_state(model, joint_direction, t, *, amplitude=0.05, frequency=0.625):
    """q(t): joints q0 + amplitude sin(2 pi f t) * direction, the left sole fixed at the origin."""
    joints = model.initial_posture + amplitude * math.sin(2 * math.pi * frequency * t) * (
        joint_direction
    )
    return model.configuration(model.base_placement_for_reference_frame(joints, "l_sole"), joints)


def test_the_accelerometer_removes_the_velocity_filter_lag(icub):
    """Single support on a fixed sole, the body swaying at the G1's walking sway frequency.

    The truth is built by finite differences of the configurations (central, h = 0.1 ms): the
    velocity, and the IMU origin's acceleration for its accelerometer (proper acceleration in
    IMU axes), independent of the estimator's Jacobians and filter. A first-order 10 Hz low-pass
    lags by 1 / (2 pi 10 Hz) = 16 ms: at 0.625 Hz its error is about 2 pi 0.625 * 0.016 = 6 % of
    the velocity's amplitude. The complementary filter, the odometry exact here, follows the
    truth but for its one-step integration of the acceleration (its error ~ dt * a, a few
    0.1 mm/s): bounded at 1 % of the amplitude, and at most a fifth of the low-pass's error.
    Measured: amplitude 48.1 mm/s, low-pass error 3.00 mm/s (6.2 %), fused 0.021 mm/s (with
    the IMU taken as moving with the base only: 1.12 mm/s, this test failed).
    """
    rng = np.random.default_rng(7)
    direction = np.zeros(icub.ndof)
    # Legs, torso and neck: iCub's IMU is beyond joints from the base (the fused filter takes
    # their velocity into the IMU's; the base alone was not enough: iCub's walk then fell).
    moving = [
        i
        for i, name in enumerate(icub.joint_names)
        if any(part in name for part in ("hip", "ankle", "torso", "neck"))
    ]
    direction[moving] = rng.normal(0.0, 1.0, len(moving))
    direction /= np.linalg.norm(direction)
    imu_frame = icub.config.imu_frame
    gravity = np.array([0.0, 0.0, -9.81])
    h, dt = 1e-4, 2e-3
    estimators = {
        fused: BaseEstimator(icub, velocity_cutoff=10.0, accelerometer=fused)
        for fused in (False, True)
    }
    errors = {False: [], True: []}
    amplitude = 0.0
    for k in range(int(2.0 / dt)):
        t = k * dt
        before, now, after = (swaying_state(icub, direction, t + d) for d in (-h, 0.0, h))
        v = pin.difference(icub.model, before, after) / (2 * h)
        positions = [icub.frame_placement(q, imu_frame).translation for q in (before, now, after)]
        acceleration = (positions[0] - 2 * positions[1] + positions[2]) / h**2
        rotation = icub.frame_placement(now, imu_frame).rotation
        readings = readings_from_state(icub, now, v, {"left_foot": STANCE_FORCE * 2}, time=t)
        imu = replace(readings.imu, linear_acceleration=rotation.T @ (acceleration - gravity))
        readings = replace(readings, imu=imu)
        base_rotation = pin.Quaternion(now[3:7]).toRotationMatrix()
        truth = base_rotation @ v[:3]  # world axes
        for fused, estimator in estimators.items():
            estimate = estimator.update(readings)
            if t >= 1.0:  # past the filters' start
                errors[fused].append(np.linalg.norm(base_rotation @ estimate.v[:3] - truth))
        if t >= 1.0:
            amplitude = max(amplitude, float(np.linalg.norm(truth)))
    lagged, fused = max(errors[False]), max(errors[True])
    print(f"\n{amplitude * 1e3:.1f} mm/s: low-pass {lagged * 1e3:.2f}, fused {fused * 1e3:.3f}")
    assert 0.03 * amplitude <= lagged  # the low-pass's lag is there (6 % expected)
    assert fused <= 0.01 * amplitude
    assert fused <= 0.2 * lagged
