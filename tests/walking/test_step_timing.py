"""Capture stepping with step timing against closed forms, the LIP, a QP solver and the limits."""

import math

import numpy as np
import proxsuite
import pytest
from walking_helpers import assert_step_within_limits

from wbm_control.walking import Footstep
from wbm_control.walking.step_limits import StepLimits
from wbm_control.walking.step_timing import StepTiming, box_qp
from wbm_description.exceptions import InputError

STANCE = Footstep("left", 0.0, 0.068, 0.0)  # a right swing from a left stance
NOMINAL = Footstep("right", 0.14, -0.068, 0.0)


@pytest.fixture()
def timing(settings, feet):
    return StepTiming(StepLimits.from_settings(settings), feet, settings.omega)


def integrate_lip(dcm, zmp, omega, duration, dt=1e-5):
    """xi' = omega (xi - z) with the ZMP held, by explicit Euler (independent reference)."""
    xi = np.array(dcm, float)
    for _ in range(round(duration / dt)):
        xi = xi + dt * omega * (xi - zmp)
    return xi


def solve(timing, dcm, dcm_ref, remaining=0.3, bounds=(0.1, 0.45), stance=STANCE, **kw):
    z = timing.feet.center(stance)[:2]
    b_nom = timing.nominal_offset(NOMINAL, z, dcm_ref, remaining)
    return (
        timing.solve(
            nominal=NOMINAL,
            stance=stance,
            dcm=dcm,
            zmp=z,
            nominal_offset=b_nom,
            nominal_remaining=remaining,
            min_remaining=bounds[0],
            max_remaining=bounds[1],
            **kw,
        ),
        z,
        b_nom,
    )


def test_on_the_plan_the_nominal_step_and_time_are_the_solution(timing):
    dcm_ref = np.array([0.03, 0.06])
    solution, _, b_nom = solve(timing, dcm_ref, dcm_ref)
    # Exact up to the linear solves' rounding (1e-9 m, 1e-9 s).
    assert abs(solution.step.x - NOMINAL.x) < 1e-9 and abs(solution.step.y - NOMINAL.y) < 1e-9
    assert abs(solution.remaining - 0.3) < 1e-9
    np.testing.assert_allclose(solution.dcm_offset, b_nom, atol=1e-9)


def test_the_lip_puts_the_dcm_at_the_stated_offset_of_the_step_at_the_stated_time(timing):
    omega = timing.omega
    dcm_ref = np.array([0.03, 0.06])
    dcm = dcm_ref + np.array([0.004, -0.003])  # a small push: the step moves, within limits
    solution, z, b_nom = solve(timing, dcm, dcm_ref)
    xi_touchdown = integrate_lip(dcm, z, omega, solution.remaining)
    centre = timing.feet.center(solution.step)[:2]
    # The DCM the LIP reaches at the solution's touch-down, relative to the step's centre, is
    # the solution's offset b (1e-4 m: Euler at 10 us over <= 0.45 s, the DCM ~0.3 m from z).
    np.testing.assert_allclose(xi_touchdown - centre, solution.dcm_offset, atol=1e-4)
    # Closed form with tau free: stationarity of the QP (no bound active). With tau fixed
    # the step is (w_u u_nom + w_b (z + (xi - z) tau - k - b_nom)) / (w_u + w_b).
    tau = solution.tau
    k = centre - np.array([solution.step.x, solution.step.y])
    w_u, w_b = timing.step_weight, timing.offset_weight
    expected = w_u * np.array([NOMINAL.x, NOMINAL.y]) + w_b * (z + (dcm - z) * tau - k - b_nom)
    np.testing.assert_allclose(
        [solution.step.x, solution.step.y], expected / (w_u + w_b), atol=1e-9
    )


def test_with_the_time_held_the_step_is_the_grown_dcm_error(settings, feet):
    """tau held, w_b >> w_u: u = u_nom + (xi - xi_ref) exp(omega T) (closed form)."""
    timing = StepTiming(
        StepLimits.from_settings(settings), feet, settings.omega, offset_weight=1e9
    )
    dcm_ref = np.array([0.03, 0.06])
    error = np.array([0.003, -0.004])
    solution, _, _ = solve(timing, dcm_ref + error, dcm_ref, bounds=(0.3, 0.3))
    grown = error * math.exp(settings.omega * 0.3)
    # 1e-8 m: w_u / w_b = 1e-9 of the shift left uncaptured.
    np.testing.assert_allclose(
        [solution.step.x - NOMINAL.x, solution.step.y - NOMINAL.y], grown, atol=1e-8
    )
    assert solution.remaining == pytest.approx(0.3, abs=1e-12)


def test_a_dcm_pushed_out_over_the_stance_foot_shortens_the_swing_within_its_bounds(
    timing, settings
):
    dcm_ref = np.array([0.03, 0.06])
    pushed = dcm_ref + np.array([0.0, 0.03])  # leftward, over the left stance sole's edge
    solution, _, _ = solve(timing, pushed, dcm_ref)
    assert_step_within_limits(solution.step, STANCE, settings, tolerance=1e-9)
    # The right foot goes as far left as allowed (no crossing) and the swing is shortened
    # (the DCM has less time to diverge), not below its bound.
    assert solution.step.y - STANCE.y == pytest.approx(-settings.min_foot_spacing, abs=1e-9)
    assert 0.1 - 1e-12 <= solution.remaining < 0.25
    # A timing that costs nothing: the earliest touch-down (the bound is active).
    cheap = StepTiming(timing.limits, timing.feet, timing.omega, timing_weight=1e-9)
    fastest, _, _ = solve(cheap, pushed, dcm_ref)
    assert fastest.remaining == pytest.approx(0.1, abs=1e-9)
    # Slower than planned but still ahead of the stance ZMP (0.02 m): the swing is
    # lengthened (the DCM gets further before the touch-down), bounded by T_max.
    back, _, _ = solve(timing, np.array([0.035, 0.06]), np.array([0.05, 0.06]))
    assert 0.3 < back.remaining <= 0.45 + 1e-12
    assert_step_within_limits(back.step, STANCE, settings, tolerance=1e-9)


def test_large_errors_every_way_stay_within_the_step_limits_and_the_timing_bounds(
    timing, settings
):
    dcm_ref = np.array([0.03, 0.06])
    rng = np.random.default_rng(3)
    for error in rng.uniform(-0.2, 0.2, size=(40, 2)):
        stance = Footstep("left", *rng.uniform(-0.5, 0.5, 2), rng.uniform(-0.3, 0.3))
        solution, _, _ = solve(timing, dcm_ref + error, dcm_ref, stance=stance)
        assert_step_within_limits(solution.step, stance, settings, tolerance=1e-9)
        assert 0.1 - 1e-12 <= solution.remaining <= 0.45 + 1e-12


def test_the_box_qp_is_the_minimum_proxsuite_finds(timing):
    """The face enumeration against proxsuite's dense QP on random strictly convex problems."""
    rng = np.random.default_rng(7)
    for _ in range(30):
        a = rng.normal(size=(3, 3))
        hessian = a @ a.T + 0.1 * np.eye(3)
        target = rng.normal(size=3)
        lower = rng.uniform(-1.0, 0.0, 3)
        upper = lower + rng.uniform(0.0, 1.5, 3)
        x = box_qp(hessian, target, lower, upper)
        qp = proxsuite.proxqp.dense.QP(3, 0, 3)
        qp.settings.eps_abs = 1e-12
        qp.init(2.0 * hessian, -2.0 * target, None, None, np.eye(3), lower, upper)
        qp.solve()
        # 1e-7: proxsuite's tolerance 1e-12 on a conditioned-by-0.1 problem.
        np.testing.assert_allclose(x, qp.results.x, atol=1e-7)


def test_bad_input_is_refused(timing, settings, feet):
    with pytest.raises(InputError, match="min_remaining"):
        solve(timing, [0.0, 0.0], [0.0, 0.0], bounds=(0.0, 0.3))
    with pytest.raises(InputError, match="min_remaining"):
        solve(timing, [0.0, 0.0], [0.0, 0.0], bounds=(0.3, 0.2))
    with pytest.raises(InputError, match="dcm"):
        solve(timing, [math.nan, 0.0], [0.0, 0.0])
    with pytest.raises(InputError, match="timing_weight"):
        StepTiming(StepLimits.from_settings(settings), feet, settings.omega, timing_weight=0.0)


def test_the_schedule_dcm_solves_the_lip_along_the_zmp_references(settings, feet):
    """xi' = omega (xi - z(t)) checked by central differences along a walking schedule, and
    the DCM at rest over the ZMP in the final standing phase."""
    from walking_helpers import forward_walk_schedule

    from wbm_control.walking.step_timing import schedule_dcm

    omega = settings.omega
    schedule, _ = forward_walk_schedule(settings, feet, velocity=0.2, steps=4)
    end = schedule.phases[-1].start
    e = 1e-6
    for t in np.linspace(schedule.phases[0].start + 0.01, end - 0.01, 37):
        phase = schedule.phase_at(t)
        if min(abs(t - phase.start), abs(t - phase.end)) < 2 * e:
            continue
        derivative = schedule_dcm(schedule, t + e, omega) - schedule_dcm(schedule, t - e, omega)
        derivative /= 2 * e
        expected = omega * (schedule_dcm(schedule, t, omega) - phase.zmp_reference(t))
        # Central differences: O(e^2) times the third derivative (omega^3 |xi - z| < 50 m/s^3),
        # plus rounding 1e-16 / 1e-6: 1e-8 m/s.
        np.testing.assert_allclose(derivative, expected, atol=1e-7)
    np.testing.assert_allclose(
        schedule_dcm(schedule, end + 1.0, omega), schedule.phases[-1].zmp_end, atol=1e-12
    )
    # Continuous across the phase switches (1e-9 m: the two one-sided evaluations 1e-12 s apart).
    for phase in schedule.phases[:-1]:
        before = schedule_dcm(schedule, phase.end - 1e-12, omega)
        after = schedule_dcm(schedule, phase.end + 1e-12, omega)
        np.testing.assert_allclose(before, after, atol=1e-9)
