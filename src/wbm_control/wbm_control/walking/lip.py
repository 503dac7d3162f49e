"""Exact motion of the linear inverted pendulum (LIP) under a ZMP that is linear in time.

Along one horizontal axis the LIP of natural frequency omega = sqrt(g / h) is

    c'' = omega^2 (c - z)

with c the CoM and z the ZMP. For z(s) = z_a + m s on a segment of duration tau
(m = (z_b - z_a) / tau) the solution is

    c(s)  = z(s) + (c_0 - z_a) cosh(omega s) + (c'_0 - m) sinh(omega s) / omega
    c'(s) = m + omega (c_0 - z_a) sinh(omega s) + (c'_0 - m) cosh(omega s)

so the state at the end of the segment is linear in the initial state and (z_a, z_b)
(:func:`dcm_coefficients` gives the map in DCM coordinates). A piecewise-linear ZMP therefore
gives an exact, discretisation-free prediction (seed 002, section 6.3: "the benefit of using
ZMP controls rather than COM accelerations lies in the exact integration scheme").
"""

from __future__ import annotations

import numpy as np


def dcm_coefficients(omega: float, durations: np.ndarray) -> tuple[np.ndarray, ...]:
    """Segment maps of the divergent and convergent components under a linear ZMP.

    With xi = c + c' / omega (the DCM, xi' = omega (xi - z)) and zeta = c - c' / omega
    (zeta' = -omega (zeta - z)), a segment of duration tau with the ZMP going linearly from z_a to
    z_b maps

        xi_1   = exp(omega tau) xi_0    + a z_a + b z_b
        zeta_1 = exp(-omega tau) zeta_0 + a' z_a + b' z_b

    and c = (xi + zeta) / 2, c' = omega (xi - zeta) / 2.

    Args:
        omega: Natural frequency [1/s].
        durations: (n,) segment durations tau > 0 [s].

    Returns:
        (exp(omega tau), a, b, exp(-omega tau), a', b'), each of shape (n,) [-].
    """
    x = omega * np.asarray(durations, dtype=float)
    grow, decay = np.exp(x), np.exp(-x)
    ramp_up = (np.expm1(x) - x) / x  # (e^x - 1 - x) / x
    ramp_down = (x + np.expm1(-x)) / x  # (x - 1 + e^-x) / x
    return (
        grow,
        -np.expm1(x) + ramp_up,
        -ramp_up,
        decay,
        -np.expm1(-x) - ramp_down,
        ramp_down,
    )


def sample_segment(
    omega: float,
    com: np.ndarray,
    com_velocity: np.ndarray,
    zmp_start: np.ndarray,
    zmp_end: np.ndarray,
    duration: float,
    elapsed: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The LIP state inside a segment of linear ZMP (any number of axes).

    Args:
        omega: Natural frequency [1/s].
        com: CoM at the segment start [m].
        com_velocity: CoM velocity at the segment start [m/s].
        zmp_start: ZMP at the segment start [m].
        zmp_end: ZMP at the segment end [m].
        duration: Segment duration [s] (> 0).
        elapsed: Time since the segment start [s]; beyond the end the ZMP keeps its slope.

    Returns:
        (CoM [m], velocity [m/s], acceleration [m/s^2], ZMP [m]) at that time.
    """
    slope = (np.asarray(zmp_end) - np.asarray(zmp_start)) / duration
    zmp = zmp_start + slope * elapsed
    ch, sh = np.cosh(omega * elapsed), np.sinh(omega * elapsed)
    offset = np.asarray(com) - zmp_start
    rate = np.asarray(com_velocity) - slope
    position = zmp + offset * ch + rate * sh / omega
    velocity = slope + omega * offset * sh + rate * ch
    return position, velocity, omega**2 * (position - zmp), zmp
