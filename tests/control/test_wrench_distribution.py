import numpy as np
import pinocchio as pin
import pytest
from ik_reference import exact_qp_solution

from wbm_control.contacts import ContactSet
from wbm_control.exceptions import NoSolutionFound
from wbm_control.wrench_distribution import (
    build_wrench_distribution,
    distribute_net_wrench,
    equality_minimizer_in_cones,
    solve_wrench_distribution,
    static_net_wrench,
)

MU = 0.5


@pytest.fixture()
def stance(icub):
    q = icub.initial_configuration()
    contacts = ContactSet(icub.config.soles)
    for sole in icub.config.soles:
        contacts.activate(sole.name, icub.frame_placement(q, sole.frame))
    return contacts


@pytest.mark.parametrize("fraction", [0.5, 0.3, 0.8, 0.05])
def test_static_double_support_splits_weight_by_the_lever_rule(icub, stance, fraction):
    left, right = stance.active()
    c_left, c_right = left.center_in_world(), right.center_in_world()
    com = c_right + fraction * (c_left - c_right)
    com[2] = 0.48
    m, g = icub.total_mass, 9.81
    wrenches = solve_wrench_distribution(
        stance.active(), com, static_net_wrench(m, icub.config.gravity), mu=MU
    )
    # Closed form: with the CoM on the segment between the sole centres, zero ankle torques and
    # zero tangential forces balance it with the lever rule f_left = m g * fraction. The cost
    # w_n (f_l^2 + f_r^2) + w_t |tau|^2 (w_n = 1e-6, w_t = 1) trades a shift delta of normal force
    # against ankle roll torques delta d / 2 on each foot (d = distance of the sole centres):
    # minimizing w_n ((f_l + delta)^2 + (f_r - delta)^2) + 2 (delta d / 2)^2 gives
    # delta = w_n (f_r - f_l) / (2 w_n + d^2 / 2). Tolerance 1e-4 N: the solver's 1e-7 absolute
    # tolerance on a problem scaled by ~1e3.
    d = np.linalg.norm(c_left[:2] - c_right[:2])
    f_l, f_r = m * g * fraction, m * g * (1 - fraction)
    w_n = 1e-6
    delta = w_n * (f_r - f_l) / (2 * w_n + d**2 / 2)
    np.testing.assert_allclose(wrenches["left_foot"][2], f_l + delta, atol=1e-4)
    np.testing.assert_allclose(wrenches["right_foot"][2], f_r - delta, atol=1e-4)
    # The equality holds to the solver's tolerance (1e-7 absolute): total = m g.
    total = wrenches["left_foot"][:3] + wrenches["right_foot"][:3]
    np.testing.assert_allclose(total, [0, 0, m * g], atol=1e-5)


def test_net_cop_is_below_the_com_and_each_wrench_is_in_its_cone(icub, stance):
    com = np.array([0.05, -0.04, 0.5])  # forward of the sole centres, towards the left foot
    m = icub.total_mass
    wrenches = solve_wrench_distribution(
        stance.active(), com, static_net_wrench(m, icub.config.gravity), mu=MU
    )
    total = np.zeros(6)
    for contact in stance.active():
        w = wrenches[contact.sole.name]
        assert np.all(contact.cone(MU) @ w <= 1e-6)  # solver tolerance 1e-7, scaled by |F|
        total += pin.SE3(np.eye(3), contact.placement.translation).act(pin.Force(w)).vector
    # CoP of the total = CoM ground projection (static equilibrium), to solver tolerance.
    cop = np.array([-total[4], total[3]]) / total[2]
    np.testing.assert_allclose(cop, com[:2], atol=1e-6)


def test_com_outside_the_support_polygon_has_no_static_solution(icub, stance):
    com = np.array([0.25, -0.068, 0.48])  # 16 cm in front of the toes
    with pytest.raises(NoSolutionFound):
        solve_wrench_distribution(
            stance.active(), com, static_net_wrench(icub.total_mass, icub.config.gravity), mu=MU
        )


def _stacked(wrenches, contacts):
    return np.concatenate([wrenches[contact.sole.name] for contact in contacts])


@pytest.mark.parametrize("soles", [2, 1])
def test_the_closed_form_is_the_exact_minimizer_where_no_cone_is_active(icub, stance, soles):
    # CoMs above the support, nets with horizontal forces and moments (a moving body): where
    # the equality's minimizer lies in the cones it is the QP's minimizer, compared with
    # quadprog's exact solution of the same QP to 1e-9 relative to the largest wrench (the
    # same minimizer by two exact methods: rounding, measured ~1e-13), and with proxsuite's
    # (solve_wrench_distribution, the path before) to its tolerance (1e-7 absolute, scaled).
    rng = np.random.default_rng(3)
    contacts = stance.active()[:soles]
    centre = np.mean([c.center_in_world() for c in contacts], axis=0)
    m = icub.total_mass
    closed_forms = 0
    for _ in range(40):
        com = centre + np.array([*rng.uniform(-0.01, 0.01, 2), 0.48])
        net = static_net_wrench(m, icub.config.gravity)
        net[:2] += rng.uniform(-10.0, 10.0, 2)
        net[3:] += rng.uniform(-2.0, 2.0, 3)
        x = equality_minimizer_in_cones(contacts, com, net, mu=MU)
        problem = build_wrench_distribution(contacts, com, net, mu=MU)
        exact = exact_qp_solution(problem)
        scale = 1.0 + float(np.max(np.abs(exact)))
        if x is None:  # a cone active at the QP's minimizer (proxsuite's case, below)
            continue
        closed_forms += 1
        np.testing.assert_allclose(x, exact, rtol=0.0, atol=1e-9 * scale)
        assert np.all(problem.C @ x <= 0.0)
        new = _stacked(distribute_net_wrench(contacts, com, net, mu=MU), contacts)
        np.testing.assert_array_equal(new, x)
        old = _stacked(solve_wrench_distribution(contacts, com, net, mu=MU), contacts)
        np.testing.assert_allclose(new, old, rtol=0.0, atol=1e-6 * scale)
    assert closed_forms >= 30, closed_forms


def test_with_a_cone_active_proxsuite_solves_it(icub, stance):
    # The CoM above the left sole's centre: the equality's minimizer (torques cost most) asks
    # the right sole to pull (f_z < 0), out of its cone; the QP is solved by proxsuite (the
    # same wrenches as solve_wrench_distribution's).
    contacts = stance.active()
    left = next(c for c in contacts if c.sole.name == "left_foot")
    com = left.center_in_world() + np.array([0.0, 0.0, 0.48])
    net = static_net_wrench(icub.total_mass, icub.config.gravity)
    assert equality_minimizer_in_cones(contacts, com, net, mu=MU) is None
    new = _stacked(distribute_net_wrench(contacts, com, net, mu=MU), contacts)
    old = _stacked(solve_wrench_distribution(contacts, com, net, mu=MU), contacts)
    # The same solve of the same QP; not bit-equal: proxsuite's Eigen kernels take SIMD paths
    # by the arrays' memory alignment (in one suite run 10 of 12 entries differed, by 2e-14
    # relative), so to 1e-12 of the largest entry.
    np.testing.assert_allclose(new, old, rtol=0.0, atol=1e-12 * np.max(np.abs(old)))
    exact = exact_qp_solution(build_wrench_distribution(contacts, com, net, mu=MU))
    np.testing.assert_allclose(new, exact, rtol=0.0, atol=1e-6 * (1.0 + np.max(np.abs(exact))))


def test_the_closed_form_path_raises_where_the_qp_has_no_solution(icub, stance):
    com = np.array([0.25, -0.068, 0.48])  # 16 cm in front of the toes
    net = static_net_wrench(icub.total_mass, icub.config.gravity)
    assert equality_minimizer_in_cones(stance.active(), com, net, mu=MU) is None
    with pytest.raises(NoSolutionFound):
        distribute_net_wrench(stance.active(), com, net, mu=MU)
