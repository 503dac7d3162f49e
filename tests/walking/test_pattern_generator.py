"""The linear MPC pattern generator against independent references.

Seed 002 describes pymanoid's LinearPredictiveControl and its horizontal-walking example (class
and parameter names, the Wieber 2006 formulation) but prints no numbers for it (no durations,
step lengths or resulting trajectories), so there is nothing numeric of the seed's to reproduce;
the references here are: a second QP solver (quadprog) on the same QP, RK4 integration of the LIP,
the support polygons recomputed from the config's corners, the commanded velocity, and Kajita's
preview control (2003) solved with scipy's DARE on the same ZMP reference.
"""

import math
import time

import numpy as np
import pytest
import qpsolvers
import scipy.linalg
from walking_helpers import forward_walk_schedule, run_pattern_generator

from wbm_control.walking import LinearMpcPatternGenerator
from wbm_description.support_geometry import polygon_margin

PERIOD = 0.01  # re-plan period of these tests [s]


@pytest.fixture(scope="module")
def walk(settings, feet):
    """12 steps at 0.3 m/s and a closing step, re-planned every 10 ms: (generator, schedule,
    plans)."""
    schedule, _ = forward_walk_schedule(settings, feet)
    generator = LinearMpcPatternGenerator(settings, feet)
    until = schedule.phases[-1].start + 2.0
    start = 0.5 * (
        feet.center(schedule.phases[0].support[0]) + feet.center(schedule.phases[0].support[1])
    )
    plans = run_pattern_generator(generator, schedule, until=until, period=PERIOD, com=start)
    return generator, schedule, plans


def samples(plans, step=0.001):
    """Each plan sampled over the re-plan period it was used for."""
    for plan in plans:
        t0 = plan.times[0]
        for t in t0 + np.arange(0.0, PERIOD, step):
            yield plan.sample(t)


def test_the_qp_solution_matches_quadprog(settings, feet):
    schedule, _ = forward_walk_schedule(settings, feet)
    generator = LinearMpcPatternGenerator(settings, feet)
    for t, com, velocity in [(0.0, [0.02, 0.0], [0, 0]), (1.73, [0.3, -0.02], [0.32, -0.1])]:
        plan = generator.replan(t, np.array(com), np.array(velocity), schedule)
        problem, _ = generator.build(t, np.array(com), np.array(velocity), schedule, plan.zmp[0])
        finite = problem.u < 1e19
        reference = qpsolvers.solve_qp(
            problem.H, problem.g, problem.C[finite], problem.u[finite], solver="quadprog"
        )
        n = generator.n_knots
        # proxsuite stops at eps_abs = 1e-9; the QP's Hessian has eigenvalues >= 2 w_z = 2, so
        # the primal error is at most ~1e-9 m: 1e-7 m is headroom.
        np.testing.assert_allclose(plan.zmp[1:, 0], reference[:n], atol=1e-7)
        np.testing.assert_allclose(plan.zmp[1:, 1], reference[n:], atol=1e-7)


def test_plan_states_follow_the_lip_integrated_numerically(walk):
    """RK4 at 0.1 ms of c'' = w^2 (c - z(t)) with the plan's piecewise-linear ZMP."""
    generator, _, plans = walk
    omega = generator.omega
    plan = plans[150]
    state = np.concatenate([plan.com[0], plan.com_velocity[0]])
    h = 1e-4

    def f(t, x):
        z = plan.sample(t).zmp[:2]
        return np.concatenate([x[2:], omega**2 * (x[:2] - z)])

    t = plan.times[0]
    for k in range(1, 6):
        while t < plan.times[k] - 1e-12:
            step = min(h, plan.times[k] - t)
            k1 = f(t, state)
            k2 = f(t + step / 2, state + step / 2 * k1)
            k3 = f(t + step / 2, state + step / 2 * k2)
            k4 = f(t + step, state + step * k3)
            state, t = state + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + step
        # RK4 local error ~ (w h)^5 / 120 ~ 1e-17 per step: 1e-10 m is rounding headroom.
        np.testing.assert_allclose(state[:2], plan.com[k], atol=1e-10)
        np.testing.assert_allclose(state[2:], plan.com_velocity[k], atol=1e-9)


def test_samples_obey_the_lip_and_dcm_definitions(walk):
    generator, _, plans = walk
    omega = generator.omega
    for sample in list(samples(plans[::37])):
        np.testing.assert_allclose(
            sample.com_acceleration[:2], omega**2 * (sample.com[:2] - sample.zmp[:2]), atol=1e-12
        )
        np.testing.assert_allclose(
            sample.dcm[:2], sample.com[:2] + sample.com_velocity[:2] / omega, atol=1e-12
        )


def test_zmp_stays_in_the_support_polygon_with_the_margin_at_every_millisecond(walk, settings):
    generator, _, plans = walk
    worst = math.inf
    for sample in samples(plans):
        # Independent polygon: the hull of the full sole rectangles of the phase at that time.
        hull = generator.feet.support_polygon(sample.phase.support)
        worst = min(worst, polygon_margin(sample.zmp, hull))
    print(f"smallest ZMP margin over the walk: {worst * 1000:.2f} mm")
    # Knots are constrained to the shrunk polygons and the ZMP is linear between knots of one
    # phase; 1e-6 m covers proxsuite's eps_abs (1e-9) and rounding.
    assert worst >= settings.zmp_margin - 1e-6


def test_com_tracks_the_commanded_velocity_in_steady_state(walk, settings):
    _, schedule, plans = walk
    stride = 2 * settings.step_duration
    start = schedule.phases[3].start  # the second step's lift-off: past the start transient
    t0, t1 = start, start + 3 * stride
    x0 = plans[round(t0 / PERIOD)].sample(t0).com[0]
    x1 = plans[round(t1 / PERIOD)].sample(t1).com[0]
    # Over whole strides the CoM advances exactly what the feet do (0.24 m a step).
    assert (x1 - x0) / (t1 - t0) == pytest.approx(0.3, abs=2e-3)


def test_com_comes_to_rest_between_the_feet_after_the_last_step(walk, feet):
    _, schedule, plans = walk
    final = plans[-1].sample(plans[-1].times[0])
    middle = 0.5 * (
        feet.center(schedule.phases[-1].support[0]) + feet.center(schedule.phases[-1].support[1])
    )
    # Two seconds into standing the LIP has settled: DCM error decays faster than e^{-w t}.
    np.testing.assert_allclose(final.com[:2], middle, atol=2e-3)
    assert np.linalg.norm(final.com_velocity) < 5e-3


def preview_control_com(settings, zmp_reference, dt):
    """Kajita et al. 2003 preview control of the cart-table, gains from scipy's DARE."""
    g, h = settings.gravity, settings.require_com_height()
    A = np.array([[1, dt, dt**2 / 2], [0, 1, dt], [0, 0, 1]])
    B = np.array([[dt**3 / 6], [dt**2 / 2], [dt]])
    C = np.array([[1, 0, -h / g]])
    Q, R = 1.0, 1e-6
    AA = np.block([[np.eye(1), C @ A], [np.zeros((3, 1)), A]])
    BB = np.vstack([C @ B, B])
    QQ = np.zeros((4, 4))
    QQ[0, 0] = Q
    P = scipy.linalg.solve_discrete_are(AA, BB, QQ, R)
    gain = np.linalg.solve(R + BB.T @ P @ BB, BB.T @ P @ AA)
    Gi, Gx = gain[0, 0], gain[0, 1:]
    closed = AA - BB @ gain
    previews = int(round(settings.mpc_horizon / dt))
    Gd = np.zeros(previews)
    X = -closed.T @ P @ np.array([[1.0], [0], [0], [0]])
    for i in range(1, previews):
        Gd[i] = np.linalg.solve(R + BB.T @ P @ BB, BB.T @ X)[0, 0]
        X = closed.T @ X
    com = np.zeros((len(zmp_reference) - previews, 2))
    for axis in range(2):
        x, error = np.array([zmp_reference[0, axis], 0.0, 0.0]), 0.0
        for k in range(len(com)):
            com[k, axis] = x[0]
            error += (C @ x)[0] - zmp_reference[k, axis]
            u = -Gi * error - Gx @ x - Gd[1:] @ zmp_reference[k + 1 : k + previews, axis]
            x = A @ x + B[:, 0] * u
    return com


def test_steady_walking_agrees_with_preview_control(walk, settings):
    """Two algorithms, one ZMP reference: preview control tracks it within millimetres; the
    MPC trades tracking for its terminal DCM condition. Once past the start transient both
    must give the same CoM within 5 mm."""
    _, schedule, plans = walk
    dt = 0.005
    times = np.arange(0.0, schedule.phases[-1].start + 2.0, dt)
    reference = np.array([schedule.phase_at(t).zmp_reference(t) for t in times])
    kajita = preview_control_com(settings, reference, dt)
    mpc = np.array([plans[int(t / PERIOD + 1e-9)].sample(t).com[:2] for t in times[: len(kajita)]])
    steady = (times[: len(kajita)] > 2.0) & (times[: len(kajita)] < schedule.phases[-3].start)
    difference = np.abs(kajita[steady] - mpc[steady]).max(axis=0)
    print(f"steady walking, |CoM MPC - CoM preview control| max: {difference * 1000} mm")
    assert np.all(difference < 5e-3)


def test_a_push_drives_the_zmp_onto_the_margin_and_not_past_it(settings, feet):
    """A -0.1 m/s lateral push in the middle of a right single support (towards the outer edge
    of the stance foot): the plan needs the ZMP at the edge, the constraint becomes active (the
    margin is reached, which nominal walking never does) and holds; the walk recovers."""
    schedule, _ = forward_walk_schedule(settings, feet)
    generator = LinearMpcPatternGenerator(settings, feet)
    plan = generator.replan(0.0, np.array([0.02, 0.0]), np.zeros(2), schedule)
    worst = math.inf
    for i in range(1, 1200):
        t = round(i * PERIOD, 6)
        sample = plan.sample(t)
        velocity = sample.com_velocity[:2] + (np.array([0.0, -0.1]) if t == 2.3 else 0.0)
        plan = generator.replan(t, sample.com, velocity, schedule)
        for tick in t + np.arange(0.0, PERIOD, 0.001):
            now = plan.sample(tick)
            worst = min(worst, polygon_margin(now.zmp, feet.support_polygon(now.phase.support)))
    assert worst >= settings.zmp_margin - 1e-6  # never past the margin (solver tolerance)
    assert worst <= settings.zmp_margin + 1e-4  # but on it: the constraint was active
    middle = 0.5 * (
        feet.center(schedule.phases[-1].support[0]) + feet.center(schedule.phases[-1].support[1])
    )
    np.testing.assert_allclose(plan.sample(t).com[:2], middle, atol=2e-3)


def test_replan_starts_at_the_measured_state_and_keeps_the_zmp(settings, feet):
    schedule, _ = forward_walk_schedule(settings, feet)
    generator = LinearMpcPatternGenerator(settings, feet)
    plans = run_pattern_generator(generator, schedule, until=2.0, com=[0.02, 0.0])
    t = 2.0
    before = plans[-1].sample(t)
    pushed = before.com_velocity[:2] + np.array([0.05, -0.04])  # a push: CoM velocity jump
    after = generator.replan(t, before.com, pushed, schedule).sample(t)
    np.testing.assert_allclose(after.com[:2], before.com[:2], atol=1e-12)
    np.testing.assert_allclose(after.com_velocity[:2], pushed, atol=1e-12)
    np.testing.assert_allclose(after.zmp, before.zmp, atol=1e-12)  # ZMP continuous


def test_report_replan_time(settings, feet):
    """Prints the median re-plan time; speed is never asserted (machines differ)."""
    schedule, _ = forward_walk_schedule(settings, feet)
    generator = LinearMpcPatternGenerator(settings, feet)
    plan = generator.replan(0.0, np.array([0.02, 0.0]), np.zeros(2), schedule)
    durations = []
    for t in np.arange(0.002, 4.0, 0.002):
        sample = plan.sample(t)
        start = time.perf_counter()
        plan = generator.replan(t, sample.com, sample.com_velocity, schedule)
        durations.append(time.perf_counter() - start)
    print(
        f"pattern generator re-plan ({generator.n_knots} knots, {2 * generator.n_knots} "
        f"variables): median {np.median(durations) * 1e3:.3f} ms over {len(durations)}"
    )
