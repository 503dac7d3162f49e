"""The exact LIP segment against textbook closed forms and a numerical integration."""

import math

import numpy as np
import pytest

from wbm_control.walking.lip import dcm_coefficients, sample_segment

OMEGA = math.sqrt(9.81 / 0.48)


def test_constant_zmp_matches_the_textbook_solution():
    """x(t) = p + (x0 - p) cosh(w t) + (v0 / w) sinh(w t) for a constant ZMP p."""
    x0, v0, p = 0.03, -0.2, 0.01
    for t in (0.0, 0.1, 0.37, 1.2):
        x, v, a, z = sample_segment(OMEGA, x0, v0, p, p, 1.0, t)
        expected = p + (x0 - p) * math.cosh(OMEGA * t) + v0 / OMEGA * math.sinh(OMEGA * t)
        assert x == pytest.approx(expected, abs=1e-14)
        assert v == pytest.approx(
            (x0 - p) * OMEGA * math.sinh(OMEGA * t) + v0 * math.cosh(OMEGA * t), abs=1e-13
        )
        assert a == pytest.approx(OMEGA**2 * (x - p), abs=1e-12)
        assert z == p


def test_dcm_diverges_from_a_constant_zmp_as_an_exponential():
    """xi(t) = p + (xi0 - p) e^{w t} with xi = c + c' / w."""
    x0, v0, p = 0.05, 0.3, 0.02
    xi0 = x0 + v0 / OMEGA
    for t in (0.1, 0.5, 1.0):
        x, v, _, _ = sample_segment(OMEGA, x0, v0, p, p, 1.0, t)
        assert x + v / OMEGA == pytest.approx(p + (xi0 - p) * math.exp(OMEGA * t), rel=1e-13)


def test_linear_zmp_matches_rk4_integration():
    """c'' = w^2 (c - z(t)) with z linear, integrated with RK4 at 10 us (error ~1e-15)."""
    x0, v0, za, zb, tau = 0.0, 0.25, -0.02, 0.06, 0.4
    n = 40000
    h = tau / n

    def f(t, state):
        return np.array([state[1], OMEGA**2 * (state[0] - (za + (zb - za) * t / tau))])

    state, t = np.array([x0, v0]), 0.0
    for _ in range(n):
        k1 = f(t, state)
        k2 = f(t + h / 2, state + h / 2 * k1)
        k3 = f(t + h / 2, state + h / 2 * k2)
        k4 = f(t + h, state + h * k3)
        state, t = state + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + h
    x, v, _, _ = sample_segment(OMEGA, x0, v0, za, zb, tau, tau)
    np.testing.assert_allclose([x, v], state, atol=1e-11)


@pytest.mark.parametrize("tau", [1e-6, 1e-3, 0.1, 0.6, 1.6])
def test_dcm_coefficients_reproduce_the_segment_end(tau):
    x0, v0, za, zb = 0.03, 0.2, -0.01, 0.05
    grow, a, b, decay, a2, b2 = (c[0] for c in dcm_coefficients(OMEGA, np.array([tau])))
    xi = grow * (x0 + v0 / OMEGA) + a * za + b * zb
    zeta = decay * (x0 - v0 / OMEGA) + a2 * za + b2 * zb
    x, v, _, _ = sample_segment(OMEGA, x0, v0, za, zb, tau, tau)
    assert 0.5 * (xi + zeta) == pytest.approx(x, abs=1e-13)
    # The velocity is omega (xi - zeta) / 2: rounding of xi is amplified by e^{w tau} ~ 1e3.
    assert 0.5 * OMEGA * (xi - zeta) == pytest.approx(v, abs=1e-11)
