"""Mode "ik"'s faster paths compute what their previous formulas computed (issue 11), to 1e-9.

On the controller regression sequence's inputs (``controller_regression.py``: iCub crouching
and waving its arms, the right sole released, lifted and held again, its load dropping and
coming back) in mode "ik" with the shipped settings (motion feed-forward, quadprog), every step
runs each changed path beside its previous formula, kept below as it was at commit e3a2373:

- the IK step: quadprog called directly with qpsolvers' arrays (P, -c, -G^T, -h) against
  ``qpsolvers.solve_problem`` on :meth:`DifferentialIK.build`'s problem;
- the planned acceleration: the normal equations solved by LAPACK's ``dgesv`` (the diagonal
  written through a strided view, the free flyer's rows given) against ``np.linalg.solve``;
- the planned acceleration and the motion feed-forward read the frames', the soles' and the
  CoM's Jacobians at q from the step's kinematics (the same q) instead of a pass of their own:
  the acceleration against the formula before on data of its own (above), the torques against
  rnea minus the soles' J^T f with Jacobians of a pass of their own, for the same wrenches;
- the motion feed-forward's net wrench: ``cross3`` against ``np.cross``, from ``pin.rnea`` on
  data of its own.

Tolerance 1e-9 (rad/s, rad/s^2, m/s^2, N, N m), the issue's rule; measured 0.0 on all four
(the same arrays passed to the same LAPACK, quadprog and arithmetic: the same numbers).

The smaller helpers of the later speed-up are compared exactly with the numpy formulas they
replace: the CoM integral on floats, the lifted soles in one pass, the finiteness test by a dot
product, the IK's h buffer (build hands out copies) and the planned acceleration from the
reference accelerations ``set_targets`` sampled.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import qpsolvers
from control_helpers import CONTROLLER_YAML
from controller_regression import contact_events, make_controller, readings_at
from ik_reference import exact_qp_solution

from wbm_control import ik_mode, motion_feedforward, wrench_distribution
from wbm_control.base_estimator import BaseEstimate
from wbm_control.contacts import ContactSet
from wbm_control.controller_settings import ControllerSettings
from wbm_control.differential_ik import DifferentialIK
from wbm_control.exceptions import InputError
from wbm_control.jit.feedforward_kernels import friction_compensated_effort
from wbm_control.planned_acceleration import AccelerationTarget
from wbm_control.wrench_distribution import all_finite

TOLERANCE = 1e-9  # see the module docstring
STEPS = 70  # release at 25, lift at 26, load drop 45-64, hold again at 60
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def planned_acceleration_before(
    model, data, q, v, frames, *, com_acceleration=None, com_cost=0.0, joint_cost=0.0,
    damping=1e-9, root_rows=None, jacobians=None, com_jacobian=None,
):  # fmt: skip
    """planned_acceleration as it was at e3a2373 (the new arguments ignored: its own pass)."""
    if not damping > 0.0:
        raise InputError("damping", "a damping > 0", damping)
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    nv = model.nv
    rows = 6 * len(frames) + (3 if com_acceleration is not None else 0)
    A = np.empty((rows, nv))
    b = np.empty(rows)
    pin.forwardKinematics(model, data, q, v, np.zeros(nv))
    pin.computeJointJacobians(model, data, q)
    row = 0
    if com_acceleration is not None:
        pin.centerOfMass(model, data, pin.KinematicLevel.ACCELERATION, True)
        cost = np.broadcast_to(np.asarray(com_cost, dtype=float), (3,))
        A[:3] = pin.jacobianCenterOfMass(model, data, False)
        A[:3] *= cost[:, None]
        b[:3] = cost * (np.asarray(com_acceleration, dtype=float) - data.acom[0])
        row = 3
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    if frames:
        pin.updateFramePlacements(model, data)
        for target in frames:
            block = slice(row, row + 6)
            cost = np.asarray(target.cost, dtype=float)
            A[block] = pin.getFrameJacobian(model, data, target.frame_id, lwa)
            A[block] *= cost[:, None]
            drift = pin.getFrameClassicalAcceleration(model, data, target.frame_id, lwa).vector
            b[block] = cost * (np.asarray(target.acceleration, dtype=float) - drift)
            row += 6
    H = A.T @ A
    g = A.T @ b
    diagonal = np.einsum("ii->i", H)
    diagonal += damping
    root = 6 if model.njoints > 1 and model.joints[1].nq == 7 else 0
    diagonal[root:] += joint_cost * joint_cost
    return np.linalg.solve(H, g)


def net_wrench_before(model: pin.Model, q, v, a):
    """The motion's net contact wrench about the CoM as motion_torques computed it (np.cross)."""
    data = model.createData()
    tau = pin.rnea(model, data, q, v, a).copy()
    base = model.jointPlacements[1] * pin.XYZQUATToSE3(q[:7])
    com = pin.centerOfMass(model, data, pin.KinematicLevel.POSITION, False)
    force = base.rotation @ tau[:3]
    moment = base.rotation @ tau[3:6] + np.cross(base.translation - com, force)
    return np.concatenate([force, moment]), com.copy()


def test_the_faster_ik_paths_compute_what_the_formulas_before_computed(icub, monkeypatch):
    controller = make_controller(icub, "ik")
    # The shipped IK: motion feed-forward and quadprog (make_controller keeps the recorded ones).
    shipped = ControllerSettings.from_yaml(CONTROLLER_YAML)
    controller.settings = shipped.replace(control_rate=controller.settings.control_rate, mode="ik")
    ik = controller.mode.ik
    ik.solver, ik.solver_options = "quadprog", {}
    compared = {
        "ik": 0, "acceleration": 0, "wrench": 0, "torques": 0, "closed form": 0, "largest": 0.0
    }  # fmt: skip

    def close(new, old, what):
        np.testing.assert_allclose(new, old, rtol=0.0, atol=TOLERANCE, err_msg=what)
        compared["largest"] = max(compared["largest"], float(np.max(np.abs(new - old))))

    solve_quadprog = DifferentialIK._solve_quadprog

    def compared_solve(self, q, dt):
        new = solve_quadprog(self, q, dt)
        old = qpsolvers.solve_problem(self.build(q, dt), solver="quadprog").x
        close(new, old, "IK step")
        compared["ik"] += 1
        return new

    monkeypatch.setattr(DifferentialIK, "_solve_quadprog", compared_solve)
    planned = ik_mode.solve_planned_acceleration

    def compared_planned(model, data, q, v, frame_ids, workspace, **kwargs):
        # The numpy formula before (its own kinematics pass) on the targets and costs the
        # mode wrote into the workspace.
        frames = [
            AccelerationTarget(
                frame_id, workspace.frame_targets[k].copy(), workspace.frame_costs[k].copy()
            )
            for k, frame_id in enumerate(frame_ids)
        ]
        com_cost = workspace.costs[:3].copy()
        new = planned(model, data, q, v, frame_ids, workspace, **kwargs).copy()
        kwargs.pop("jacobians"), kwargs.pop("com_jacobian")
        old = planned_acceleration_before(
            model, model.createData(), q, v, frames, com_cost=com_cost, **kwargs
        )
        close(new, old, "planned acceleration")
        compared["acceleration"] += 1
        return new

    monkeypatch.setattr(ik_mode, "solve_planned_acceleration", compared_planned)
    distribute = motion_feedforward.distribute_net_wrench
    motion = motion_feedforward.motion_torques
    state = {}

    def recorded_motion(model, data, q, v, a, contacts, **kwargs):
        state["qva"] = (q, v, a)
        joints, wrenches = motion(model, data, q, v, a, contacts, **kwargs)
        own = model.model.createData()
        expected = pin.rnea(model.model, own, q, v, a)[6:].copy()
        pin.computeJointJacobians(model.model, own, q)
        pin.updateFramePlacements(model.model, own)
        for contact in contacts:
            if contact.sole.name not in kwargs.get("lifted", ()):
                frame = model.frame_id(contact.sole.frame)
                jacobian = pin.getFrameJacobian(model.model, own, frame, LWA)
                expected -= jacobian[:, 6:].T @ wrenches[contact.sole.name]
        close(joints, expected, "motion torques")
        compared["torques"] += 1
        return joints, wrenches

    def compared_distribution(contacts, com, wrench, **kwargs):
        old_wrench, old_com = net_wrench_before(icub.model, *state["qva"])
        close(wrench, old_wrench, "net contact wrench")
        close(com, old_com, "CoM")
        compared["wrench"] += 1
        new = distribute(contacts, com, wrench, **kwargs)
        # The sole wrenches: the closed form (no cone active) against the QP's exact minimizer
        # (quadprog) to 1e-9 relative to the largest wrench, and against proxsuite's solution
        # (solve_wrench_distribution, the path before) to its tolerance (1e-7 absolute on a
        # problem scaled by ~1e3: 1e-6 relative); a proxsuite answer is proxsuite's own.
        x = np.concatenate([new[contact.sole.name] for contact in contacts])
        problem = wrench_distribution.build_wrench_distribution(
            contacts, com, wrench, mu=kwargs["mu"]
        )
        exact = exact_qp_solution(problem)
        scale = 1.0 + float(np.max(np.abs(exact)))
        closed = wrench_distribution.equality_minimizer_in_cones(
            contacts, com, wrench, mu=kwargs["mu"]
        )
        old = wrench_distribution.solve_wrench_distribution(contacts, com, wrench, mu=kwargs["mu"])
        old = np.concatenate([old[contact.sole.name] for contact in contacts])
        if closed is not None:
            np.testing.assert_array_equal(x, closed)
            np.testing.assert_allclose(x, exact, rtol=0.0, atol=1e-9 * scale, err_msg="wrenches")
            compared["closed form"] += 1
        np.testing.assert_allclose(x, old, rtol=0.0, atol=1e-6 * scale, err_msg="proxsuite")
        return new

    monkeypatch.setattr(ik_mode, "motion_torques", recorded_motion)
    monkeypatch.setattr(motion_feedforward, "distribute_net_wrench", compared_distribution)
    for step in range(STEPS):
        controller.step(readings_at(icub, step))
        contact_events(controller, step)
    print(compared)
    counts = ("ik", "acceleration", "wrench", "torques")
    assert all(compared[name] == STEPS for name in counts), compared
    assert compared["closed form"] > STEPS // 2, compared  # most steps: no cone active


def com_target_before(integral, com, com_reference, gain, dt):
    """IkMode.com_target as it was (numpy): (new integral, target)."""
    target = com_reference.copy()
    integral = integral + gain * dt * (com_reference[:2] - com[:2])
    limit = ik_mode.COM_INTEGRAL_LIMIT
    integral = np.minimum(np.maximum(integral, -limit), limit)
    target[:2] += integral
    return integral, target


def test_the_com_integral_on_floats_is_numpys(icub):
    controller = make_controller(icub, "ik")
    mode = controller.mode
    rng = np.random.default_rng(3)
    integral = np.zeros(2)
    clipped = 0
    for _ in range(400):
        com = rng.normal(0.0, 0.05, 3)
        reference = com + rng.normal(0.0, 0.1, 3)
        gain, dt = float(rng.uniform(0.0, 100.0)), 0.002
        integral, expected = com_target_before(integral, com, reference, gain, dt)
        target = mode.com_target(com, reference, gain, dt)
        assert np.array_equal(target, expected) and np.array_equal(mode._com_integral, integral)
        clipped += bool(np.any(np.abs(integral) == ik_mode.COM_INTEGRAL_LIMIT))
    assert clipped > 0  # the limits were reached


def test_the_lifted_soles_are_those_the_bearing_contacts_leave_out(icub):
    contacts = ContactSet(icub.config.soles)
    q = icub.initial_configuration()
    for sole in icub.config.soles:
        contacts.activate(sole.name, icub.frame_placement(q, sole.frame))
    names = [sole.name for sole in icub.config.soles]
    for loaded in ((), (names[0],), (names[1],), tuple(names)):
        estimate = BaseEstimate(q, np.zeros(icub.nv), loaded, {}, {})
        bearing = ik_mode.bearing_contacts(contacts, estimate)
        active = contacts.active()
        expected = [c.sole.name for c in active if c not in bearing]
        assert ik_mode.lifted_soles(active, estimate) == expected


def test_the_finiteness_test_is_numpys():
    rng = np.random.default_rng(4)
    cases = [rng.normal(size=6), np.full(6, 1.7e308), np.zeros(0)]
    for bad in (np.nan, np.inf, -np.inf):
        for k in (0, 3, 5):
            vector = rng.normal(size=6)
            vector[k] = bad
            cases.append(vector)
    for vector in cases:
        assert all_finite(vector) == bool(np.isfinite(vector).all()), vector


def test_the_ik_build_hands_out_its_own_arrays(icub):
    controller = make_controller(icub, "ik")
    controller.step(readings_at(icub, 0))
    ik, q = controller.mode.ik, controller.mode.q
    first = ik.build(q, 0.002)
    h = first.h.copy()
    moved = q.copy()
    moved[7:] += 0.05
    second = ik.build(moved, 0.002)
    assert np.array_equal(first.h, h) and not np.array_equal(second.h, h)
    assert np.array_equal(ik.build(q, 0.002).h, h)


@pytest.mark.parametrize("in_place", [True, False])
def test_the_ik_build_reads_the_frame_placements_pinocchio_computes(icub, in_place):
    # The IK's task frames read from data.oMf in place after one updateFramePlacements, against
    # one updateFramePlacement per frame on data of its own (the build before): the same
    # product oMi[parent] * placement, so equal to the bit; and without the in-place view (the
    # fallback: one updateFramePlacement per frame) the same.
    controller = make_controller(icub, "ik")
    controller.step(readings_at(icub, 0))
    ik, q = controller.mode.ik, controller.mode.q
    if not in_place:
        ik._frame_placements = None
    own = ik.model.createData()
    rng = np.random.default_rng(5)
    for _ in range(20):
        moved = q.copy()
        moved[7:] += rng.uniform(-0.3, 0.3, moved.size - 7)
        moved[:3] += rng.uniform(-0.1, 0.1, 3)
        ik.build(moved, 0.002)
        pin.forwardKinematics(ik.model, own, moved)
        for k, frame_id in enumerate(ik._frame_id_list):
            expected = pin.updateFramePlacement(ik.model, own, frame_id).homogeneous
            np.testing.assert_array_equal(ik._frame_poses[k], expected)


def test_the_planned_acceleration_from_set_targets_samples_is_the_sampled_one(icub):
    controller = make_controller(icub, "ik")
    shipped = ControllerSettings.from_yaml(CONTROLLER_YAML)
    controller.settings = shipped.replace(control_rate=controller.settings.control_rate, mode="ik")
    mode, compared = controller.mode, 0
    for step in range(40):
        readings = readings_at(icub, step)
        controller.step(readings)
        contact_events(controller, step)
        if not mode._reference_accelerations:
            continue
        t, estimate = controller.time, controller.status.estimate
        kinematics = mode.kinematics(estimate, controller.tasks)
        mode.set_targets(kinematics, controller.tasks, controller.contacts, t, controller.status)
        args = (controller.tasks, controller.contacts, np.array([0.1, -0.2, 0.3]), t)
        v = np.linspace(-0.1, 0.1, icub.nv)
        given = mode.planned_acceleration(
            *args, estimate.q, v, kinematics, mode._reference_accelerations
        ).copy()
        sampled = mode.planned_acceleration(*args, estimate.q, v, kinematics).copy()
        assert np.array_equal(given, sampled)
        compared += 1
    assert compared > 0


def test_the_command_effort_kernel_is_the_numpy_formula(icub):
    # IkMode.step's effort: effort - model.friction_torques(dq), clipped by np.minimum and
    # np.maximum to the torque limits, as it was; the kernel's is the same operations: equal to
    # the bit (zero and NaN velocities, efforts beyond the limits and NaN included).
    rng = np.random.default_rng(7)
    limits = icub.torque_limits
    out = np.empty(icub.ndof)
    for trial in range(50):
        effort = rng.uniform(-2.0, 2.0, icub.ndof) * limits
        dq = rng.uniform(-3.0, 3.0, icub.ndof)
        dq[rng.integers(0, icub.ndof, 3)] = 0.0
        if trial == 0:
            effort[1] = np.nan
        # The model's coefficients (iCub: no Coulomb term) and random ones with it, in the
        # model's formula -(k_v dq + k_c sign(dq)).
        viscous, coulomb = rng.uniform(0.0, 0.1, icub.ndof), rng.uniform(0.0, 0.5, icub.ndof)
        for compensate in (True, False):
            expected = effort - icub.friction_torques(dq) if compensate else effort
            expected = np.minimum(np.maximum(expected, -limits), limits)
            friction_compensated_effort(
                effort, dq, icub.viscous_friction, icub.coulomb_friction, limits, compensate, out
            )
            np.testing.assert_array_equal(out, expected)
            friction = -(viscous * dq + coulomb * np.sign(dq))
            expected = effort - friction if compensate else effort
            expected = np.minimum(np.maximum(expected, -limits), limits)
            friction_compensated_effort(effort, dq, viscous, coulomb, limits, compensate, out)
            np.testing.assert_array_equal(out, expected)


def test_the_rotation_target_is_the_se3_target(icub):
    # set_frame_rotation_target (the base orientation's, set_targets) against set_frame_target
    # of base_orientation.ik_target() (the SE3 before): the same target matrix and feed-forward,
    # to the bit, over a target that had a translation and a velocity before.
    controller = make_controller(icub, "ik")
    controller.step(readings_at(icub, 0))
    ik, base = controller.mode.ik, controller.tasks.base_orientation
    index = ik._task_index[base.name]
    rng = np.random.default_rng(11)
    for _ in range(5):
        rotation = pin.exp3(rng.normal(size=3))
        ik.set_frame_target(base.name, pin.SE3(rotation, rng.normal(size=3)), rng.normal(size=3))
        ik.set_frame_rotation_target(base.name, rotation)
        new = ik._target_poses[index].copy(), ik._target_velocities[index].copy()
        ik.set_frame_target(base.name, pin.SE3(rotation, np.zeros(3)))
        np.testing.assert_array_equal(new[0], ik._target_poses[index])
        np.testing.assert_array_equal(new[1], ik._target_velocities[index])
    ik.set_frame_rotation_target(base.name, base.rotation_reference)
    np.testing.assert_array_equal(ik._target_poses[index], base.ik_target().homogeneous)
