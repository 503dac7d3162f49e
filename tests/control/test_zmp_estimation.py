"""The ZMP from the whole-body dynamics (wbm_control.zmp_estimation).

References: the static closed form (standing still the ZMP is the CoM's ground projection and the
contact force is m g), the cart-table closed form for a rigidly translating robot (a constant
horizontal acceleration a: ZMP = c - (c_z - h) a / g, exact since the centroidal angular momentum
stays zero), and, in closed loop on iCub, the ZMP from its foot F/T sensors and the simulator's
true centre of pressure.
"""

from __future__ import annotations

import numpy as np
import pytest
from closed_loop_scenarios import make_rig

from wbm_control.exceptions import InputError
from wbm_control.zmp_estimation import ZmpEstimator
from wbm_description import WholeBodyModel
from wbm_description.registry import load_robot

GRAVITY = 9.81


@pytest.fixture(scope="module")
def g1() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("g1"))


@pytest.mark.parametrize("robot", ["icub", "g1"])
def test_standing_still_the_zmp_is_the_com_projection(robot, icub, g1):
    model = {"icub": icub, "g1": g1}[robot]
    estimator = ZmpEstimator(model)
    q = model.initial_configuration()
    for t in (0.0, 0.002, 0.004):
        estimate = estimator.update(q, np.zeros(model.nv), t)
    com = model.com_position(q)
    # The same CoM and mass on both sides: round-off only (1e-12 m, 1e-9 N).
    np.testing.assert_allclose(estimate.zmp, [com[0], com[1], 0.0], atol=1e-12)
    np.testing.assert_allclose(
        estimate.contact_wrench[:3], [0.0, 0.0, model.total_mass * GRAVITY], atol=1e-9
    )


def test_a_translating_robot_has_the_cart_table_zmp(g1):
    """Rigid translation with constant acceleration (2, -1) m/s^2 from rest, base upright."""
    acceleration = np.array([2.0, -1.0, 0.0])
    q0 = g1.initial_configuration()
    com0 = g1.com_position(q0)
    dt = 0.002
    exact = ZmpEstimator(g1, cutoff=None)
    filtered = ZmpEstimator(g1, cutoff=10.0)
    for k in range(501):
        t = k * dt
        q = q0.copy()
        q[:3] += 0.5 * acceleration * t**2
        v = np.zeros(g1.nv)
        v[:3] = acceleration * t  # base axes = world axes (the base is upright)
        estimate = exact.update(q, v, t)
        smooth = filtered.update(q, v, t)
    com = com0 + 0.5 * acceleration * t**2
    expected = com[:2] - com0[2] * acceleration[:2] / GRAVITY  # ground at z = 0
    # Momentum linear in t: the finite difference is exact (1e-9 m of round-off).
    np.testing.assert_allclose(estimate.zmp[:2], expected, atol=1e-9)
    # The filter's step response after 1 s at 10 Hz: exp(-2 pi 10) of the step, nil.
    np.testing.assert_allclose(smooth.zmp[:2], expected, atol=1e-6)
    force = g1.total_mass * (acceleration + [0.0, 0.0, GRAVITY])
    np.testing.assert_allclose(estimate.contact_wrench[:3], force, rtol=1e-9)


def test_bad_cutoff_is_named(g1):
    with pytest.raises(InputError, match="cutoff"):
        ZmpEstimator(g1, cutoff=0.0)


def test_zmp_estimate_follows_the_ft_zmp_on_icub(icub):
    """iCub shifts its CoM 3 cm sideways in 0.5 s (accelerations up to 0.7 m/s^2) and back.

    The controller's dynamic estimate (from its estimated state, the soles it anchors held still)
    must follow the F/T sensors' ZMP within 8 mm RMS, and explain most of the dynamic part the
    static estimate (the CoM's ground projection, 27 mm RMS off) misses: under 0.3 of that.
    Measured: 6.0 mm RMS (single-sample spikes up to 34 mm: the compliant ground's vibration in
    the joint velocities); the same estimator on the true state is 0.17 mm RMS from the true
    centre of pressure (the method is exact; the rest is the state estimate) and the F/T ZMP 2 mm
    (the feet's inertia below the sensors).
    """
    rig = make_rig(icub, "torque", "compliant")
    rig.run(0.3)
    center = rig.controller.com_reference()
    rows = []

    def record(_t):
        status = rig.controller.status
        truth, _ = rig.true_cop_and_margin()
        if status.zmp_measured is not None and status.zmp_estimated is not None:
            estimated, measured = status.zmp_estimated[:2], status.zmp_measured[:2]
            rows.append([*estimated, *measured, *truth, *rig.com()[:2]])

    shifted = center + np.array([0.0, 0.03, 0.0])
    rig.run(
        1.4,
        record=record,
        events={
            0.3: lambda: rig.controller.set_com_target(shifted, duration=0.5),
            1.0: lambda: rig.controller.set_com_target(center, duration=0.5),
        },
    )
    rows = np.array(rows)
    estimated, measured, true, com = rows[:, 0:2], rows[:, 2:4], rows[:, 4:6], rows[:, 6:8]

    def rms(a, b):
        return float(np.sqrt(np.mean(np.sum((a - b) ** 2, axis=1))))

    worst = float(np.max(np.linalg.norm(estimated - measured, axis=1)))
    print(
        f"estimated vs F/T: RMS {rms(estimated, measured) * 1e3:.2f} mm, max {worst * 1e3:.2f} mm;"
        f" vs true CoP: estimated {rms(estimated, true) * 1e3:.2f} mm, F/T"
        f" {rms(measured, true) * 1e3:.2f} mm; CoM projection vs F/T"
        f" {rms(com, measured) * 1e3:.2f} mm"
    )
    assert rms(estimated, measured) < 8e-3
    assert rms(estimated, measured) < 0.3 * rms(com, measured)


def test_on_the_true_state_the_estimate_is_the_true_centre_of_pressure(icub):
    """The same scenario's first 0.7 s, the estimator (unfiltered) fed the simulator's true
    state: the momentum-rate ZMP is the centre of pressure of the true contact forces within 1 mm
    RMS (measured 0.17 mm over the whole scenario: the finite difference over 2 ms)."""
    rig = make_rig(icub, "torque", "compliant")
    rig.run(0.3)
    center = rig.controller.com_reference()
    estimator = ZmpEstimator(icub, cutoff=None)
    errors = []

    def record(t):
        truth = rig.sim.ground_truth()
        zmp = estimator.update(truth.q, truth.v, t).zmp
        cop, _ = rig.true_cop_and_margin()
        if len(errors) or t > 0.32:
            errors.append(np.linalg.norm(zmp[:2] - cop))

    shifted = center + np.array([0.0, 0.03, 0.0])
    rig.run(
        0.7,
        record=record,
        events={0.3: lambda: rig.controller.set_com_target(shifted, duration=0.5)},
    )
    rms = float(np.sqrt(np.mean(np.square(errors))))
    print(f"on the true state: RMS {rms * 1e3:.3f} mm from the true CoP")
    assert rms < 1e-3
