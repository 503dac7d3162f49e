"""Compiled kernel of the torque mode's command (issue 11).

:func:`torque_command` does, in one call, what :meth:`wbm_control.torque_mode.TorqueMode.command`
did with five numpy operations: the QP's torques plus the model's friction opposed (minus its
``friction_torques`` -(k_v dq + k_c sign(dq)) [N m]) when asked, clipped to the torque limits.

Arithmetic: numpy's, element by element in the same order (IEEE, no fastmath): bit-identical,
NaN included (``np.sign(nan)`` is nan; ``np.maximum``/``np.minimum`` propagate nan, as the
comparisons here leave it). The numpy code is the reference in
tests/control/test_jit_command.py.
"""

from __future__ import annotations

import math

import numpy as np

from wbm_control.jit import kernel


@kernel
def torque_command(
    torques: np.ndarray,
    joint_velocities: np.ndarray,
    viscous: np.ndarray,
    coulomb: np.ndarray,
    limits: np.ndarray,
    friction: bool,
    out: np.ndarray,
) -> None:
    """The command torques: clip(torques [+ k_v dq + k_c sign(dq)], -limits, limits) [N m].

    All (ndof,); ``out`` is written.

    ``friction``: add the opposed friction (the settings' ``friction_compensation``).
    """
    for i in range(torques.shape[0]):
        value = torques[i]
        if friction:
            dq = joint_velocities[i]
            if dq > 0.0:
                sign = 1.0
            elif dq < 0.0:
                sign = -1.0
            elif dq == 0.0:
                sign = 0.0  # np.sign(-0.0) is +0.0
            else:
                sign = math.nan
            opposed = viscous[i] * dq
            opposed += coulomb[i] * sign
            value = value + opposed
        low = -limits[i]
        if value < low or low != low:  # np.maximum(value, -limit): a nan of either is nan
            value = low
        high = limits[i]
        if value > high or high != high:  # np.minimum(., limit)
            value = high
        out[i] = value


_warmed_up = False


def warm_up() -> None:
    """Compile (or load from the cache) the kernel for the step's argument types.

    Writable C float64 arrays (the QP's torques, a slice of the estimate's v, the model's
    arrays) and a bool. Once per process.
    """
    global _warmed_up
    if _warmed_up:
        return
    v = np.zeros(9)
    for friction in (False, True):
        zeros, limits = np.zeros(3), np.ones(3)
        torque_command(zeros, v[6:], zeros, zeros, limits, friction, np.empty(3))
    _warmed_up = True
