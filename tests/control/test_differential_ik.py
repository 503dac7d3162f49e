"""The IK step against a hand-solved QP on a 2-link planar arm (lengths L1, L2, joints about z)."""

import numpy as np
import pinocchio as pin
import pytest

from wbm_control.differential_ik import DifferentialIK, IkFrameTaskSpec

L1, L2 = 1.0, 0.8


def planar_arm() -> pin.Model:
    model = pin.Model()
    j1 = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "joint1")
    model.appendBodyToJoint(j1, pin.Inertia.FromSphere(1.0, 0.05), pin.SE3.Identity())
    j2 = model.addJoint(j1, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([L1, 0, 0])), "joint2")
    model.appendBodyToJoint(j2, pin.Inertia.FromSphere(1.0, 0.05), pin.SE3.Identity())
    model.addFrame(
        pin.Frame("tip", j2, pin.SE3(np.eye(3), np.array([L2, 0.0, 0.0])), pin.FrameType.OP_FRAME)
    )
    model.lowerPositionLimit = np.full(2, -3.0)
    model.upperPositionLimit = np.full(2, 3.0)
    model.velocityLimit = np.full(2, 10.0)
    return model


def hand_solved_step(q, target_xy, q_posture, *, dt, k_tip, k_post, c_tip, c_post, damping):
    """The IK QP of one step written out by hand for the planar arm (no active limit).

    Tip pose T_b = (R(theta), p), theta = q1 + q2, p = (L1 c1 + L2 c12, L1 s1 + L2 s12).
    Target T_t = (R(theta), p*) (same orientation): the frame-task error is
    e = log6(T_b^-1 T_t) = (t, 0) with t = R^T (p* - p) (body axes). Its Jacobian, from
    log6(exp(-xi) T) with the body twist xi = (nu, omega) = J_b dq, is
    J_e = [-J_b,lin + 1/2 [t]x J_b,ang ; -J_b,ang]. Orientation cost 0 drops the angular rows.
    Posture: e_p = q - q*, J_p = I. The QP minimizes
    1/2 c_tip^2 |J_e dq + a_tip e|^2 + 1/2 c_post^2 |dq + a_post e_p|^2 + 1/2 damping |dq|^2
    with a = k dt (per-step gains from per-second ones), so
    (c_tip^2 J_e^T J_e + (c_post^2 + damping) I) dq
        = -(c_tip^2 a_tip J_e^T e + c_post^2 a_post e_p).
    """
    q1, q2 = q
    c1, s1, c12, s12 = np.cos(q1), np.sin(q1), np.cos(q1 + q2), np.sin(q1 + q2)
    p = np.array([L1 * c1 + L2 * c12, L1 * s1 + L2 * s12])
    J_world = np.array([[-L1 * s1 - L2 * s12, -L2 * s12], [L1 * c1 + L2 * c12, L2 * c12]])
    theta = q1 + q2
    R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    J_body_lin = R.T @ J_world
    J_body_ang = np.array([1.0, 1.0])
    t = R.T @ (np.asarray(target_xy) - p)
    # [t]x (0, 0, w) = (t_y w, -t_x w, 0): the xy rows of 1/2 [t]x J_b,ang.
    coupling = 0.5 * np.array([t[1] * J_body_ang, -t[0] * J_body_ang])
    J_e = -J_body_lin + coupling
    a_tip, a_post = k_tip * dt, k_post * dt
    e_post = np.asarray(q) - np.asarray(q_posture)
    H = c_tip**2 * J_e.T @ J_e + (c_post**2 + damping) * np.eye(2)
    g = c_tip**2 * a_tip * J_e.T @ t + c_post**2 * a_post * e_post
    return H, g, -np.linalg.solve(H, g)


def make_ik(model, *, k_tip=5.0, k_post=1.0, c_tip=1.0, c_post=0.1, damping=1e-6, v_max=10.0):
    ik = DifferentialIK(
        model,
        frame_tasks=[IkFrameTaskSpec("tip", "tip", c_tip, 0.0, k_tip)],
        posture_cost=c_post,
        posture_gain=k_post,
        velocity_limit=v_max,
        damping=damping,
        configuration_limit_gain=1.0,
        solver="proxqp",
        solver_options={"eps_abs": 1e-12, "eps_rel": 0.0},
    )
    return ik


def tip_pose(model, q):
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId("tip")].copy()


@pytest.mark.parametrize("dt", [1e-3, 2e-3, 1e-2])
def test_ik_step_matches_the_hand_solved_qp(dt):
    model = planar_arm()
    q = np.array([0.4, 0.9])
    q_posture = np.array([0.2, 0.5])
    pose = tip_pose(model, q)
    target = pose.copy()
    target.translation = pose.translation + np.array([0.05, -0.08, 0.0])
    ik = make_ik(model)
    ik.set_frame_target("tip", target)
    ik.set_posture_target(q_posture)
    v = ik.solve(q, dt)
    H, g, dq = hand_solved_step(
        q,
        target.translation[:2],
        q_posture,
        dt=dt,
        k_tip=5.0,
        k_post=1.0,
        c_tip=1.0,
        c_post=0.1,
        damping=1e-6,
    )
    # The QP pink builds is the hand-written one, to rounding (entries ~1, 1e-12).
    problem = ik.build(q, dt)
    np.testing.assert_allclose(problem.P, H, atol=1e-12)
    np.testing.assert_allclose(problem.q, g, atol=1e-12)
    # Its solution, with proxqp at eps_abs 1e-12 on a gradient of ~1e-4 dt / 1e-3: v to 1e-8.
    np.testing.assert_allclose(v, dq / dt, rtol=0, atol=1e-8)


def test_gains_are_per_second_the_velocity_does_not_depend_on_the_rate():
    model = planar_arm()
    q = np.array([0.4, 0.9])
    target = tip_pose(model, q)
    target.translation = target.translation + np.array([0.02, 0.03, 0.0])
    velocities = []
    for dt in (1e-3, 2e-3, 4e-3):
        ik = make_ik(model)
        ik.set_frame_target("tip", target)
        ik.set_posture_target(q)
        velocities.append(ik.solve(q, dt))
    # Every term of the QP gradient scales with dt and the Hessian does not: v = dq/dt is the
    # same to solver tolerance.
    np.testing.assert_allclose(velocities[1], velocities[0], atol=1e-8)
    np.testing.assert_allclose(velocities[2], velocities[0], atol=1e-8)


def test_velocity_limit_active_matches_the_hand_solved_kkt():
    model = planar_arm()
    q = np.array([0.4, 0.9])
    q_posture = q.copy()
    target = tip_pose(model, q)
    target.translation = target.translation + np.array([0.1, 0.0, 0.0])
    dt, v_max = 1e-2, 2.0
    ik = make_ik(model, k_tip=20.0, v_max=v_max)
    ik.set_frame_target("tip", target)
    ik.set_posture_target(q_posture)
    v = ik.solve(q, dt)
    H, g, dq_free = hand_solved_step(
        q,
        target.translation[:2],
        q_posture,
        dt=dt,
        k_tip=20.0,
        k_post=1.0,
        c_tip=1.0,
        c_post=0.1,
        damping=1e-6,
    )
    assert np.max(np.abs(dq_free)) > v_max * dt  # the unconstrained step breaks the limit
    # Hand-solved KKT with the bound of the most violating joint active: dq_i = +-v_max dt, the
    # other minimizes the quadratic: dq_j = -(g_j + H_ji dq_i) / H_jj; the multiplier
    # -(H dq + g)_i must push against the bound (same sign as dq_i).
    i = int(np.argmax(np.abs(dq_free)))
    j = 1 - i
    dq = np.zeros(2)
    dq[i] = np.sign(dq_free[i]) * v_max * dt
    dq[j] = -(g[j] + H[j, i] * dq[i]) / H[j, j]
    assert abs(dq[j]) <= v_max * dt
    multiplier = -(H @ dq + g)[i]
    assert multiplier * dq[i] > 0
    np.testing.assert_allclose(v, dq / dt, atol=1e-8)  # solver tolerance, see above


def test_repeated_steps_converge_monotonically_to_the_target():
    model = planar_arm()
    q = np.array([0.4, 0.9])
    target = tip_pose(model, q)
    target.translation = target.translation + np.array([-0.1, 0.15, 0.0])
    ik = make_ik(model, k_tip=10.0, c_post=1e-3)
    ik.set_frame_target("tip", target)
    ik.set_posture_target(q)
    errors = []
    for _ in range(300):
        q, _ = ik.step(q, 1e-2)
        errors.append(np.linalg.norm(tip_pose(model, q).translation - target.translation))
    assert all(b < a for a, b in zip(errors[:100], errors[1:101], strict=True))
    assert errors[-1] < 1e-4  # 3 s at 10/s: e^-30 of 0.18 m, limited by the posture cost


def test_direct_build_is_pinks_build_on_recorded_inputs(icub):
    """The QP :meth:`DifferentialIK.build` assembles is pink's ``build_ik`` QP, to rounding.

    Inputs: the IK configurations and targets of the controller regression sequence (iCub
    crouching and waving, frame, CoM and posture tasks, both limits). The direct build (one
    compiled kernel, :mod:`wbm_control.jit.ik_kernels`) adds the same terms with the same
    formulas but its own summation order (Pinocchio's log6 and Jlog6 written out, the products
    as loops instead of BLAS): the matrices agree to rounding relative to their largest entry,
    1e-12 x (1 + max |entry|) (H has contact weights 1000^2, ~3e4 on its diagonal: its entries
    differ by up to 2e-12 absolute, 2e-16 relative; c and h by less).
    """
    from controller_regression import make_controller, readings_at

    controller = make_controller(icub, "ik")
    for step in range(12):
        controller.step(readings_at(icub, step))
        ik, q = controller.mode.ik, controller.mode.q
        direct, reference = ik.build(q, 0.002), ik.build_with_pink(q, 0.002)
        for name in ("P", "q", "G", "h"):
            expected = getattr(reference, name)
            np.testing.assert_allclose(
                getattr(direct, name),
                expected,
                rtol=0,
                atol=1e-12 * (1.0 + float(np.max(np.abs(expected)))),
                err_msg=name,
            )
