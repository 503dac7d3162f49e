"""DCM/ZMP stabilizer: closed-form decay of the DCM error on the LIP."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from wbm_control.walking import DcmZmpStabilizer
from wbm_description.exceptions import InputError

OMEGA = math.sqrt(9.81 / 0.48)
BIG = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])  # never binding


def closed_loop(stabilizer, reference, state0, duration, polygon=None):
    """The LIP c'' = w^2 (c - z) with z from the stabilizer at every instant (RK45, 1e-11)."""

    def f(t, x):
        z_ref, xi_ref = reference(t)
        out = stabilizer.update(
            zmp_ref=z_ref, dcm_ref=xi_ref, com=x[:2], com_velocity=x[2:], support_polygon=polygon
        )
        return np.concatenate([x[2:], out.com_acceleration[:2]])

    return solve_ivp(f, (0.0, duration), state0, rtol=1e-11, atol=1e-12, dense_output=True)


@pytest.mark.parametrize("gain", [1.5, 3.0, 5.0])
def test_dcm_error_decays_as_exp_minus_k_minus_one_omega_t(gain):
    """Reference: the LIP standing still over z_ref (xi_ref = z_ref); unclamped ZMP."""
    stabilizer = DcmZmpStabilizer(gain=gain, omega=OMEGA)
    z_ref = np.array([0.02, -0.01])
    state0 = np.array([0.05, 0.01, 0.1, -0.05])
    solution = closed_loop(stabilizer, lambda t: (z_ref, z_ref), state0, 1.0, BIG)
    error0 = state0[:2] + state0[2:] / OMEGA - z_ref
    for t in (0.1, 0.3, 0.7, 1.0):
        x = solution.sol(t)
        error = x[:2] + x[2:] / OMEGA - z_ref
        expected = error0 * math.exp(-(gain - 1.0) * OMEGA * t)
        # The integrator's tolerance (rtol 1e-11) bounds the error; 1e-8 m is headroom.
        np.testing.assert_allclose(error, expected, atol=1e-8)


def test_dcm_error_decays_around_a_moving_reference():
    """Reference: a LIP under a constant ZMP p, its DCM diverging as p + (xi0 - p) e^{w t}."""
    gain = 3.0
    stabilizer = DcmZmpStabilizer(gain=gain, omega=OMEGA)
    p, xi0 = np.array([0.0, 0.0]), np.array([0.01, -0.005])

    def reference(t):
        return p, p + (xi0 - p) * math.exp(OMEGA * t)

    state0 = np.array([0.02, 0.0, 0.0, 0.0])  # DCM error (0.01, 0.005)
    solution = closed_loop(stabilizer, reference, state0, 0.5, BIG)
    x = solution.sol(0.5)
    error = x[:2] + x[2:] / OMEGA - reference(0.5)[1]
    expected = (state0[:2] - xi0) * math.exp(-(gain - 1.0) * OMEGA * 0.5)
    np.testing.assert_allclose(error, expected, atol=1e-8)


def test_clamped_zmp_stays_in_the_polygon_and_sets_the_acceleration():
    stabilizer = DcmZmpStabilizer(gain=3.0, omega=OMEGA, margin=0.01)
    sole = np.array([[-0.05, -0.035], [0.09, -0.035], [0.09, 0.035], [-0.05, 0.035]])
    out = stabilizer.update(
        zmp_ref=np.array([0.02, 0.0]),
        dcm_ref=np.array([0.02, 0.0]),
        com=np.array([0.1, 0.0]),
        com_velocity=np.array([0.3, 0.0]),
        support_polygon=sole,
    )
    assert out.clamped
    assert out.zmp[0] == pytest.approx(0.08, abs=1e-12)  # the front edge minus the margin
    np.testing.assert_allclose(
        out.com_acceleration[:2], OMEGA**2 * (np.array([0.1, 0.0]) - out.zmp[:2])
    )
    inside = stabilizer.update(
        zmp_ref=np.array([0.02, 0.0]),
        dcm_ref=np.array([0.02, 0.0]),
        com=np.array([0.025, 0.0]),
        com_velocity=np.zeros(2),
        support_polygon=sole,
    )
    assert not inside.clamped
    assert inside.zmp[0] == pytest.approx(0.02 + 3.0 * 0.005, abs=1e-15)


def test_bad_arguments():
    with pytest.raises(InputError):
        DcmZmpStabilizer(gain=1.0, omega=OMEGA)
    stabilizer = DcmZmpStabilizer(gain=2.0, omega=OMEGA)
    with pytest.raises(InputError):
        stabilizer.update(
            zmp_ref=np.zeros(2),
            dcm_ref=np.zeros(2),
            com=np.array([np.nan, 0]),
            com_velocity=np.zeros(2),
        )
