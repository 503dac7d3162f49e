"""The faster controller step computes what the step before it computed (issue 11), to 1e-9.

Every numeric path the step's speed-up changed runs beside its previous formula, kept below as
it was at commit f926f8a, on the inputs of the controller regression sequence
(``controller_regression.py``: iCub crouching and waving its arms, the right sole released,
lifted and held again, its F/T load dropping below the unload threshold and coming back), in
one run per mode:

- the base estimator (the fixed soles' normal equations from the Jacobians at the base origin,
  stacked, without R^T R = I; the weighted anchor mean written out; the last rotation kept; the
  IMU quaternion's rotation on floats): q, v, the loaded soles, the F/T wrenches and loads;
- the frame tasks' reference trajectories (constants computed once; a held pose sampled
  exactly): pose, velocity, acceleration;
- mode "torque": the whole-body QP's assembly (the tasks stacked by one concatenate, the cone
  rows kept while the same soles are held; since the fused build, wbm_control.torque_qp, the
  rows read from the kinematics' array: the step's QP is compared with the formula before on
  the task and contact objects rebuilt beside it, torque_qp_helpers.py): H, g, A, b, C, l, u
  and the torque map;
- mode "ik": the wrench distribution QP of the feed-forward (its blocks that depend on the held
  soles only kept while they are held): H, g, A, b, C, l, u; the IK's frame targets (a target
  without feed-forward velocity taken as it is, not rebuilt as p + 0);
- the DCM feedback's ZMP and CoM acceleration on floats, and small_linalg's ``norm`` and
  quaternion rotation (random inputs, to the bit).

Tolerance 1e-9 (m, rad, m/s, rad/s, N, N m, and the QPs' entries, up to ~1e4), the regression
test's: the new formulas are the old ones with sums reordered and an identity R^T R dropped,
i.e. equal up to rounding (measured over both runs: the estimate's velocity 1.1e-16 m/s apart,
a held pose's reference 8e-16 (pose), 1.7e-16 (velocity) and 2.1e-15 (acceleration) apart: the
old sample's log3(R^T R) of about 1e-16 rad times the time scaling; the estimate's q, loads and
wrenches and both QPs bit-identical); a changed formula would differ by far more (a wrong
weight or sign is 1e-3 and up).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pinocchio as pin
import pytest
from controller_regression import contact_events, make_controller, readings_at
from ik_reference import build_arrays_before, exact_qp_solution
from torque_qp_helpers import patch_fused_build

from wbm_control import motion_feedforward, small_linalg, wrench_distribution
from wbm_control.balance import ft_wrenches_in_world
from wbm_control.base_estimator import BaseEstimate, BaseEstimator
from wbm_control.differential_ik import DifferentialIK
from wbm_control.exceptions import InputError
from wbm_control.qp import INFINITY, DenseQP
from wbm_control.small_linalg import solve_3x3
from wbm_control.trajectories import QuinticPoseTrajectory, quintic_time_scaling
from wbm_control.whole_body_qp import WholeBodyQP
from wbm_control.wrench_distribution import wrench_to_point_matrix
from wbm_description.conventions import rotation_from_quaternion_xyzw
from wbm_description.robot_io import RobotReadings
from wbm_description.rotation_quaternion import quaternion_of_rotation

TOLERANCE = 1e-9  # see the module docstring
STEPS = 70  # the regression sequence's steps 0-69: release at 25, lift at 26, hold again at 60
_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
_LOCAL = pin.ReferenceFrame.LOCAL


# ---------------------------------------------------------------- the formulas before (f926f8a)


class EstimatorBefore(BaseEstimator):
    """The base estimator's update as it was before the speed-up."""

    def reset(self, anchors: Mapping[str, np.ndarray] | None = None) -> None:
        """The state as sets and a dict, as this update keeps it (the class keeps arrays)."""
        super().reset(anchors)
        self._anchors: dict[str, tuple[float, ...]] = {
            k: tuple(np.asarray(p, dtype=float).tolist()) for k, p in (anchors or {}).items()
        }
        self._loaded: set[str] = set(self._anchors)
        self._armed: set[str] = set(self._anchors)
        self._last: BaseEstimate | None = None
        self._last_time: float | None = None

    def _orientation(self, readings: RobotReadings) -> pin.Quaternion:
        rotation_imu_in_base = self.data.oMf[self.imu_frame_id].rotation
        rotation_imu_in_world = rotation_from_quaternion_xyzw(readings.imu.orientation_xyzw)
        quaternion = pin.Quaternion(rotation_imu_in_world @ rotation_imu_in_base.T)
        quaternion.normalize()
        return quaternion

    def update(
        self, readings: RobotReadings, sole_loads: Mapping[str, float] | None = None
    ) -> BaseEstimate:
        if readings.imu is None:
            raise InputError("readings.imu", "an IMU reading (the estimator needs it)")
        q_j = np.asarray(readings.joint_positions, dtype=float)
        dq_j = np.asarray(readings.joint_velocities, dtype=float)
        ndof = self.pin_model.nv - 6
        for name, value in (("joint_positions", q_j), ("joint_velocities", dq_j)):
            if value.shape != (ndof,) or not np.isfinite(value).all():
                raise InputError(f"readings.{name}", f"{ndof} finite values", value.shape)
        gyro = np.asarray(readings.imu.angular_velocity, dtype=float)
        if gyro.shape != (3,) or not np.isfinite(gyro).all():
            raise InputError("readings.imu.angular_velocity", "3 finite values", gyro)

        self._kinematics_in_base(q_j)
        quaternion = self._orientation(readings)
        q = np.zeros(self.pin_model.nq)
        q[3:7] = quaternion.coeffs()
        q[7:] = q_j
        # The base's rotation as the free-flyer joint has it (from the quaternion).
        rotation = base_rotation = quaternion.toRotationMatrix()
        base = pin.SE3(base_rotation, np.zeros(3))
        oMf = self.data.oMf
        # Sole positions relative to the base origin, in world axes (base at the origin).
        sole_offsets = {
            s: base_rotation @ oMf[f].translation for s, f in self.sole_frame_ids.items()
        }
        sensor_placements = {s: base * oMf[f] for s, f in self.sensor_frame_ids.items()}
        # Normal forces (translation does not change the world-axes force).
        wrenches_at_origin_base = ft_wrenches_in_world(sensor_placements, readings.wrenches)
        normal_forces = {
            sole: float(wrenches_at_origin_base[sensor][2])
            for sole, sensor in self.sensor_of_sole.items()
            if sensor in wrenches_at_origin_base
        }
        for sole, load in (sole_loads or {}).items():
            if sole not in self.sensor_of_sole:
                normal_forces[sole] = float(load)

        # Release the soles whose load dropped (they may be moving already), then place the base
        # on the soles still anchored, then anchor the newly loaded soles where they are now.
        for sole in list(self._loaded):
            force = normal_forces.get(sole)
            if force is not None and force > self.load_threshold:
                self._armed.add(sole)
            if force is not None and force < self.unload_threshold and sole in self._armed:
                self._loaded.discard(sole)
                self._armed.discard(sole)
                self._anchors.pop(sole, None)
        if not self._anchors and self._last is None:
            origin = self.initial_sole_position - sole_offsets[self.initial_sole]
            for sole in dict.fromkeys((self.initial_sole, *self.initial_soles)):
                self._anchors[sole] = origin + sole_offsets[sole]
                self._loaded.add(sole)
        # In the config's sole order, not the set's (string hashes vary between processes).
        anchored = [s for s in self.sole_frame_ids if s in self._loaded and s in self._anchors]
        if anchored:
            weights = np.array([max(normal_forces.get(s, 1.0), 1.0) for s in anchored])
            positions = np.array([self._anchors[s] - sole_offsets[s] for s in anchored])
            q[:3] = weights @ positions / weights.sum()
        elif self._last is not None:
            dt = max(readings.time - (self._last_time or readings.time), 0.0)
            rotation_last = pin.Quaternion(self._last.q[3:7]).toRotationMatrix()
            q[:3] = self._last.q[:3] + dt * rotation_last @ self._last.v[:3]
        for sole in self.sole_frame_ids:
            force = normal_forces.get(sole)
            if force is None or force <= self.load_threshold:
                continue
            self._armed.add(sole)
            if sole not in self._loaded:
                self._loaded.add(sole)
                self._anchors[sole] = q[:3] + sole_offsets[sole]

        # Velocities: gyro for the base angular velocity, fixed soles for the linear one.
        v = np.zeros(self.pin_model.nv)
        v[6:] = dq_j
        # The IMU's LOCAL Jacobian does not depend on the base placement.
        J_imu = pin.getFrameJacobian(self.pin_model, self.data, self.imu_frame_id, _LOCAL)
        # Its base angular block is the rotation from the base to the IMU axes: its inverse is
        # its transpose.
        v[3:6] = J_imu[3:6, 3:6].T @ (gyro - J_imu[3:6, 6:] @ dq_j)
        fixed = [s for s in self.sole_frame_ids if s in self._loaded and s in self._anchors]
        if fixed:
            # Least squares over the fixed soles, B_i v_b = r_i, by its normal equations (each
            # B_i is R times the base block at identity, a rotation for a free-flyer: full rank).
            normal_matrix, normal_rhs = np.zeros((3, 3)), np.zeros(3)
            for sole in fixed:
                # Linear rows of the LOCAL_WORLD_ALIGNED Jacobian with the base rotated: R J.
                J = pin.getFrameJacobian(
                    self.pin_model, self.data, self.sole_frame_ids[sole], _LWA
                )[0:3]
                rows_base = base_rotation @ J[:, 0:3]
                normal_matrix += rows_base.T @ rows_base
                normal_rhs -= rows_base.T @ (base_rotation @ (J[:, 3:] @ v[3:]))
            v[0:3] = solve_3x3(normal_matrix, normal_rhs)
        elif self._last is not None:
            rotation_last = pin.Quaternion(self._last.q[3:7]).toRotationMatrix()
            v[0:3] = rotation.T @ (rotation_last @ self._last.v[:3])

        if self.velocity_cutoff is not None and self._last is not None:
            dt = max(readings.time - (self._last_time or readings.time), 0.0)
            alpha = dt / (dt + 1.0 / (2.0 * np.pi * self.velocity_cutoff))
            rotation_last = pin.Quaternion(self._last.q[3:7]).toRotationMatrix()
            previous_world = rotation_last @ self._last.v[:3]
            filtered_world = previous_world + alpha * (rotation @ v[0:3] - previous_world)
            v[0:3] = rotation.T @ filtered_world

        foot_wrenches = {
            name: _shift_before(w, q[:3]) for name, w in wrenches_at_origin_base.items()
        }
        estimate = BaseEstimate(q, v, tuple(sorted(fixed)), foot_wrenches, normal_forces)
        self._last, self._last_time = estimate, readings.time
        return estimate


def _shift_before(w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """base_estimator._shift_to_world_origin as it was before the speed-up."""
    return np.array(
        [
            w[0],
            w[1],
            w[2],
            w[3] + (p[1] * w[2] - p[2] * w[1]),
            w[4] + (p[2] * w[0] - p[0] * w[2]),
            w[5] + (p[0] * w[1] - p[1] * w[0]),
        ]
    )


def build_whole_body_qp_before(
    mass_matrix,
    bias_forces,
    contacts,
    tasks,
    torque_limits,
    *,
    base_dofs: int = 6,
    wrench_weight: float = 1e-5,
    acceleration_regularization: float = 1e-6,
    min_normal_force: float = 0.0,
) -> WholeBodyQP:
    """The whole-body QP's assembly as it was before the speed-up."""
    M = np.asarray(mass_matrix, dtype=float)
    h = np.asarray(bias_forces, dtype=float)
    nv = M.shape[0]
    if M.shape != (nv, nv) or h.shape != (nv,):
        raise InputError(
            "mass_matrix/bias_forces", f"({nv}, {nv}) and ({nv},)", (M.shape, h.shape)
        )
    ndof = nv - base_dofs
    limits = np.asarray(torque_limits, dtype=float)
    if limits.shape != (ndof,):
        raise InputError("torque_limits", f"{ndof} values", limits.shape)
    k = len(contacts)
    n = nv + 6 * k
    # Cost: the tasks stacked into one weighted least-squares term (one product, no loop).
    H = np.zeros((n, n))
    g = np.zeros(n)
    if tasks:
        rows = sum(len(task.desired) for task in tasks)
        J = np.empty((rows, nv))
        w = np.empty(rows)
        residual = np.empty(rows)
        row = 0
        for task in tasks:
            m = len(task.desired)
            J[row : row + m] = task.jacobian
            w[row : row + m] = task.weight
            residual[row : row + m] = task.desired
            residual[row : row + m] -= task.drift
            row += m
        WJ = w[:, None] * J
        H[:nv, :nv] = J.T @ WJ
        g[:nv] = -(WJ.T @ residual)
    diagonal = np.einsum("ii->i", H)
    diagonal += acceleration_regularization
    diagonal[nv:] += wrench_weight

    # Equalities: floating-base rows of the equations of motion, then the contacts.
    Jc = np.vstack([c.jacobian for c in contacts]) if k else np.zeros((0, nv))
    A = np.zeros((base_dofs + 6 * k, n))
    b = np.empty(base_dofs + 6 * k)
    A[:base_dofs, :nv] = M[:base_dofs]
    A[:base_dofs, nv:] = -Jc[:, :base_dofs].T
    A[base_dofs:, :nv] = Jc
    b[:base_dofs] = -h[:base_dofs]
    if k:
        b[base_dofs:] = np.concatenate([c.desired for c in contacts]) - np.concatenate(
            [c.drift for c in contacts]
        )

    # Inequalities: the cones (block diagonal), the normal forces, the torque limits.
    cone_sizes = [c.cone.shape[0] for c in contacts]
    n_cone = sum(cone_sizes)
    C = np.zeros((n_cone + k + ndof, n))
    row = 0
    for i, contact in enumerate(contacts):
        C[row : row + cone_sizes[i], nv + 6 * i : nv + 6 * i + 6] = contact.cone
        C[n_cone + i, nv + 6 * i + 2] = 1.0
        row += cone_sizes[i]
    torque_matrix = C[n_cone + k :]
    torque_matrix[:, :nv] = M[base_dofs:]
    torque_matrix[:, nv:] = -Jc[:, base_dofs:].T
    torque_matrix = torque_matrix.copy()
    torque_offset = h[base_dofs:].copy()
    lower = np.empty(n_cone + k + ndof)
    upper = np.empty(n_cone + k + ndof)
    lower[:n_cone] = -INFINITY
    upper[:n_cone] = 0.0
    lower[n_cone : n_cone + k] = min_normal_force
    upper[n_cone : n_cone + k] = INFINITY
    lower[n_cone + k :] = -limits - torque_offset
    upper[n_cone + k :] = limits - torque_offset
    problem = DenseQP(H=H, g=g, A=A, b=b, C=C, l=lower, u=upper)
    return WholeBodyQP(problem, nv, tuple(c.name for c in contacts), torque_matrix, torque_offset)


def build_wrench_distribution_before(
    contacts,
    com,
    net_wrench_at_com,
    *,
    mu: float,
    tangential_weight: float = 1e-3,
    normal_weight: float = 1e-6,
    torque_weight: float = 1.0,
) -> DenseQP:
    """The wrench distribution QP as it was before the speed-up (after its input checks)."""
    target = np.asarray(net_wrench_at_com, dtype=float)
    n = 6 * len(contacts)
    H = np.zeros((n, n))
    A = np.zeros((6, n))
    C = np.zeros((16 * len(contacts), n))
    weights = np.diag([tangential_weight, tangential_weight, normal_weight] + [torque_weight] * 3)
    for k, contact in enumerate(contacts):
        block = slice(6 * k, 6 * k + 6)
        origin = contact.placement.translation
        A[:, block] = wrench_to_point_matrix(origin, com)
        # Torque about the sole centre, world axes: tau_origin + (origin - centre) x f.
        to_center = wrench_to_point_matrix(origin, contact.center_in_world())
        H[block, block] = to_center.T @ weights @ to_center
        C[16 * k : 16 * k + 16, block] = contact.cone(mu)
    lower = np.full(C.shape[0], -INFINITY)
    return DenseQP(H=H, g=np.zeros(n), A=A, b=target, C=C, l=lower, u=np.zeros(C.shape[0]))


def pose_sample_before(trajectory: QuinticPoseTrajectory, t: float):
    """QuinticPoseTrajectory.sample as it was before the speed-up."""
    self = trajectory
    s, ds, dds = quintic_time_scaling(t - self.start_time, self.duration)
    delta_p = self.goal.translation - self.start.translation
    axis_angle_in_start = pin.log3(self.start.rotation.T @ self.goal.rotation)
    rotation = self.start.rotation @ pin.exp3(s * axis_angle_in_start)
    axis_angle_in_world = self.start.rotation @ axis_angle_in_start
    pose = pin.SE3(rotation, self.start.translation + s * delta_p)
    velocity = np.concatenate([ds * delta_p, ds * axis_angle_in_world])
    acceleration = np.concatenate([dds * delta_p, dds * axis_angle_in_world])
    return pose, velocity, acceleration


# ---------------------------------------------------------------- the comparisons


def _close(new, old, what: str) -> None:
    np.testing.assert_allclose(new, old, rtol=0.0, atol=TOLERANCE, err_msg=what)


def _same_problem(new: DenseQP, old: DenseQP, what: str) -> None:
    for name in ("H", "g", "A", "b", "C", "l", "u"):
        a, b = getattr(new, name), getattr(old, name)
        assert a.shape == b.shape, (what, name)
        _close(a, b, f"{what}: {name}")


@pytest.mark.parametrize("mode", ["torque", "ik"])
def test_the_faster_step_computes_what_the_step_before_computed(icub, mode, monkeypatch):
    controller = make_controller(icub, mode)
    settings = controller.settings.estimator
    before = EstimatorBefore(
        icub,
        load_threshold=settings.load_threshold,
        unload_threshold=settings.unload_threshold,
        initial_soles=tuple(controller.settings.initial_contacts),
        velocity_cutoff=settings.velocity_cutoff or None,
    )
    compared = {"trajectory": 0, "qp": 0, "distribution": 0, "targets": 0, "moving targets": 0}
    contact_counts: set[int] = set()

    sample = QuinticPoseTrajectory.sample

    def compared_sample(trajectory, t):
        new, old = sample(trajectory, t), pose_sample_before(trajectory, t)
        _close(new[0].homogeneous, old[0].homogeneous, "trajectory pose")
        _close(new[1], old[1], "trajectory velocity")
        _close(new[2], old[2], "trajectory acceleration")
        compared["trajectory"] += 1
        return new

    monkeypatch.setattr(QuinticPoseTrajectory, "sample", compared_sample)
    if mode == "torque":

        def compared_build(new, args, kwargs, task_errors, status):
            # The step's fused build (in the mode's workspace) against the formula before, on
            # the task and contact objects the step built then (torque_qp_helpers.py).
            old = build_whole_body_qp_before(*args, **kwargs)
            _same_problem(new.problem, old.problem, "whole-body QP")
            _close(new.torque_matrix, old.torque_matrix, "torque matrix")
            _close(new.torque_offset, old.torque_offset, "torque offset")
            assert new.contact_names == old.contact_names
            compared["qp"] += 1
            contact_counts.add(len(new.contact_names))

        patch_fused_build(monkeypatch, compared_build)
    else:
        build_arrays = DifferentialIK._build_arrays

        def compared_targets(ik, q, dt):
            # The IK's QP built by its kernel (targets with their feed-forward folded in) and
            # by the numpy build before it (ik_reference), to rounding relative to the
            # matrices' scale (H ~3e4: see test_differential_ik's direct build test).
            new = [array.copy() for array in build_arrays(ik, q, dt)]
            for name, array, old in zip("Hch", new, build_arrays_before(ik, q, dt), strict=True):
                scale = 1.0 + float(np.max(np.abs(old)))
                np.testing.assert_allclose(array, old, rtol=0.0, atol=1e-12 * scale, err_msg=name)
            compared["moving targets"] += int(np.count_nonzero(ik._target_velocities.any(1)))
            compared["targets"] += 1
            return build_arrays(ik, q, dt)

        monkeypatch.setattr(DifferentialIK, "_build_arrays", compared_targets)
        distribution = wrench_distribution.build_wrench_distribution
        distribute = motion_feedforward.distribute_net_wrench

        def compared_distribution(contacts, com, net, **kwargs):
            # The QP proxsuite solves (the quasi-static feed-forward's; the motion
            # feed-forward's when a cone is active).
            new = distribution(contacts, com, net, **kwargs)
            _same_problem(
                new, build_wrench_distribution_before(contacts, com, net, **kwargs), "wrenches"
            )
            compared["distribution"] += 1
            contact_counts.add(len(contacts))
            return new

        def compared_wrenches(contacts, com, net, **kwargs):
            # The wrenches (closed form with no cone active, else proxsuite) against the exact
            # minimizer of the QP built as before (quadprog): 1e-9 relative to the largest
            # wrench, as proxsuite's 1e-7 tolerance is not exact (measured 3e-13 on the closed
            # form; a proxsuite answer is held to its own tolerance, 1e-6 relative).
            new = distribute(contacts, com, net, **kwargs)
            weights = {k: v for k, v in kwargs.items() if k != "solver"}
            problem = build_wrench_distribution_before(contacts, com, net, **weights)
            exact = exact_qp_solution(problem)
            x = np.concatenate([new[contact.sole.name] for contact in contacts])
            scale = 1.0 + float(np.max(np.abs(exact)))
            closed = wrench_distribution.equality_minimizer_in_cones(contacts, com, net, **weights)
            tolerance = 1e-9 if closed else 1e-6
            np.testing.assert_allclose(x, exact, rtol=0.0, atol=tolerance * scale)
            if closed:  # (else counted by compared_distribution)
                compared["distribution"] += 1
                contact_counts.add(len(contacts))
            return new

        monkeypatch.setattr(
            wrench_distribution, "build_wrench_distribution", compared_distribution
        )
        monkeypatch.setattr(motion_feedforward, "distribute_net_wrench", compared_wrenches)

    loaded_sets = set()
    for step in range(STEPS):
        readings = readings_at(icub, step)
        controller.step(readings)
        estimate, reference = controller.status.estimate, before.update(readings)
        _close(estimate.q, reference.q, f"step {step}: q")
        _close(estimate.v, reference.v, f"step {step}: v")
        assert estimate.loaded_soles == reference.loaded_soles, step
        assert estimate.normal_forces.keys() == reference.normal_forces.keys()
        for name, force in reference.normal_forces.items():
            _close(estimate.normal_forces[name], force, f"step {step}: load of {name}")
        for name, wrench in reference.foot_wrenches_world.items():
            _close(estimate.foot_wrenches_world[name], wrench, f"step {step}: wrench {name}")
        loaded_sets.add(estimate.loaded_soles)
        contact_events(controller, step)
    # What was compared: one and two soles loaded and held, moving and held references.
    assert len(loaded_sets) >= 2 and contact_counts == {1, 2}, (loaded_sets, contact_counts)
    assert compared["trajectory"] >= STEPS
    for what in ("qp",) if mode == "torque" else ("distribution", "targets"):
        assert compared[what] == STEPS, compared
    if mode == "ik":  # targets with a feed-forward velocity (the lifted foot's) and without
        assert 0 < compared["moving targets"] < 5 * STEPS, compared


def test_small_linalg_helpers_are_the_functions_they_replace():
    """``norm`` and ``rotation_from_quaternion_xyzw`` of small_linalg do the arithmetic of
    ``np.linalg.norm`` and of wbm_description.conventions' function on floats: bit-identical
    (tolerance 0) on random vectors and unnormalized quaternions."""
    rng = np.random.default_rng(21)
    for _ in range(50):
        vector = rng.normal(size=int(rng.integers(1, 8)))
        assert small_linalg.norm(vector) == float(np.linalg.norm(vector))
        quaternion = rng.normal(size=4)
        np.testing.assert_array_equal(
            small_linalg.rotation_from_quaternion_xyzw(quaternion),
            rotation_from_quaternion_xyzw(quaternion),
        )


def test_quaternion_helpers_on_floats_are_pinocchios_conversions():
    """small_linalg's ``unit_quaternion_of_rotation`` and ``rotation_of_unit_quaternion`` are
    ``pin.Quaternion(R)`` + ``normalize()`` and ``toRotationMatrix()`` (Eigen's arithmetic written
    out): to 1e-15 on rotations of every branch (positive trace, each largest diagonal entry),
    matrices slightly off orthonormal, and an IMU-like product (bit-identical with the x86-64
    wheel measured; the tolerance leaves another build its last bits)."""
    rng = np.random.default_rng(22)
    branches = set()
    for i in range(3000):
        axis_angle = rng.normal(size=3) * (3.0 if i % 2 else 0.3)
        rotation = pin.exp3(axis_angle)
        if i % 3 == 0:
            rotation = rotation + rng.normal(scale=1e-9, size=(3, 3))
        reference = quaternion_of_rotation(rotation)
        reference.normalize()
        quaternion = small_linalg.unit_quaternion_of_rotation(rotation.tolist())
        np.testing.assert_allclose(quaternion, reference.coeffs(), rtol=0.0, atol=1e-15)
        np.testing.assert_allclose(
            small_linalg.rotation_of_unit_quaternion(*quaternion),
            reference.toRotationMatrix(),
            rtol=0.0,
            atol=1e-15,
        )
        trace = float(np.trace(rotation))
        branches.add("trace" if trace > 0.0 else int(np.argmax(np.diag(rotation))))
    assert branches == {"trace", 0, 1, 2}, branches


def test_dcm_feedback_on_floats_is_the_array_formula():
    """DcmStabilizer.com_acceleration computes zmp_command's formula on floats: the array
    formula before it (kept here) gives the same numbers to the bit (tolerance 0), inside and
    outside a support polygon (projected), on random states, gains and heights."""
    from wbm_control.balance import DcmStabilizer, divergent_component_of_motion
    from wbm_description.support_geometry import convex_hull_2d

    def before(stabilizer, com, velocity, reference, rate, acceleration, omega, polygon):
        xi = divergent_component_of_motion(com, velocity, omega)
        xi_ref = divergent_component_of_motion(reference, rate, omega)
        xi_ref_rate = np.asarray(rate) + np.asarray(acceleration) / omega
        zmp = stabilizer.zmp_command(xi, xi_ref, xi_ref_rate, omega, polygon)
        return omega**2 * (np.asarray(com, dtype=float)[:2] - zmp), zmp

    rng = np.random.default_rng(11)
    polygon = convex_hull_2d(rng.uniform(-0.1, 0.1, (8, 2)))
    for k in range(200):
        stabilizer = DcmStabilizer(gain=rng.uniform(0.0, 5.0), zmp_margin=0.005)
        state = [rng.normal(0.0, 0.05, 3) for _ in range(5)]
        omega = float(np.sqrt(9.81 / rng.uniform(0.3, 0.8)))
        hull = polygon if k % 2 else None
        new = stabilizer.com_acceleration(*state, omega, hull)
        old = before(stabilizer, *state, omega, hull)
        np.testing.assert_array_equal(new[0], old[0])
        np.testing.assert_array_equal(new[1], old[1])
