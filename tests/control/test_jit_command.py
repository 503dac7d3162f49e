"""The torque command's kernel gives what the numpy code it replaced gave, bit for bit.

:func:`~wbm_control.jit.command_kernels.torque_command` replaced five numpy operations of
:meth:`~wbm_control.torque_mode.TorqueMode.command` (kept here as :func:`reference`): the
same IEEE operations in the same order per element, so the results are compared exactly
(``np.array_equal``, with nan equal to nan and the sign of zeros checked), on random torques
beyond and within the limits, velocities with zeros (signed), and nan.
"""

from __future__ import annotations

import numpy as np
import pytest

from wbm_control.jit.command_kernels import torque_command


def reference(torques, dq, viscous, coulomb, limits, friction):
    """TorqueMode.command's torques before the kernel."""
    if friction:
        opposed = viscous * dq
        opposed += coulomb * np.sign(dq)
        torques = torques + opposed
    return np.minimum(np.maximum(torques, -limits), limits)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("friction", [False, True])
def test_kernel_is_the_numpy_command(rng, friction):
    n = 29
    for trial in range(200):
        torques = rng.normal(scale=40.0, size=n)
        dq = rng.normal(size=n)
        dq[rng.random(n) < 0.2] = 0.0
        dq[rng.random(n) < 0.1] = -0.0
        torques[rng.random(n) < 0.1] = 0.0
        if trial % 10 == 0:
            torques[rng.integers(n)] = np.nan
            dq[rng.integers(n)] = np.nan
        viscous, coulomb = rng.uniform(0, 2, n), rng.uniform(0, 1, n)
        limits = rng.uniform(5, 60, n)
        v = np.concatenate([np.zeros(6), dq])  # the step passes a slice of v
        out = np.empty(n)
        torque_command(torques, v[6:], viscous, coulomb, limits, friction, out)
        assert _same(out, reference(torques, dq, viscous, coulomb, limits, friction))


def test_clipped_to_the_limits():
    limits = np.array([1.0, 2.0, 3.0])
    out = np.empty(3)
    torque_command(np.array([5.0, -5.0, 0.5]), np.zeros(3), limits, limits, limits, True, out)
    assert np.array_equal(out, [1.0, -2.0, 0.5])
