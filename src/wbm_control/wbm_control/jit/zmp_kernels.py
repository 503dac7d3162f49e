r"""Compiled kernels of the ZMP estimate's sample (issue 11).

:func:`zmp_with_base_velocity` does, in one call, the arithmetic of
:meth:`wbm_control.zmp_estimation.ZmpEstimator.update` when the controller passes its step's
kinematics and the base estimator's still base velocity (every torque and IK step): the momentum
about the world origin (h_G plus m R (v_still - v_base), then L_O = k_G + c x p), its filtered
finite difference, the total contact wrench and the ZMP. :func:`zmp_from_momentum` is the same
from a momentum the caller computed (the estimator's other paths).

Arithmetic: the Python float code it replaces (kept in tests/control/test_jit_estimator_zmp.py),
operation by operation in the same order (IEEE, no fastmath): bit-identical.

Cost: the controller step's ZMP estimation part 0.023-0.041 -> 0.008-0.013 ms (iCub, torque,
``wbm_benchmark_controller``, 6 alternations). Compiled cold in ~1.8 s.

``state`` (14,): [has_momentum, time of the momentum [s], momentum (p [kg m/s], L_O
[kg m^2/s]) 6, filtered rate 6 [N, N m]], world axes. Outputs are the caller's arrays (an
array returned by a kernel costs ~1 us to box).
"""

from __future__ import annotations

import numpy as np

from wbm_control.jit import kernel

STATE_SIZE = 14


@kernel
def zmp_from_momentum(
    momentum: np.ndarray,
    com: np.ndarray,
    weight: np.ndarray,
    state: np.ndarray,
    time: float,
    cutoff: float,
    ground_height: float,
    min_normal_force: float,
    wrench: np.ndarray,
    zmp: np.ndarray,
) -> bool:
    """One sample: the momentum rate, the contact wrench and the ZMP.

    Args:
        momentum: (p [kg m/s], L_O [kg m^2/s]) (6,), world axes, about the world origin.
        com: The centre of mass (3,) [m].
        weight: m g (3,) [N], world axes.
        state: The filter's state (module docstring), updated.
        time: The sample's time [s]; the rate changes only when it is after the last one.
        cutoff: The rate's low-pass cut-off [Hz]; 0.0: unfiltered.
        ground_height: The ground plane's height [m].
        min_normal_force: Below this total normal force [N] the ZMP is undefined.
        wrench: (6,): the total contact wrench (force [N], torque about the world origin
            [N m]), written.
        zmp: (3,): the ZMP (x, y, ground_height) [m], written when defined.

    Returns:
        Whether the ZMP is defined (``zmp`` written).
    """
    if state[0] != 0.0 and time > state[1]:
        dt = time - state[1]
        if cutoff > 0.0:
            alpha = dt / (dt + 1.0 / (2.0 * np.pi * cutoff))
            for i in range(6):
                x = (momentum[i] - state[2 + i]) / dt
                r = state[8 + i]
                state[8 + i] = r + alpha * (x - r)
        else:
            for i in range(6):
                state[8 + i] = (momentum[i] - state[2 + i]) / dt
    state[0], state[1] = 1.0, time
    for i in range(6):
        state[2 + i] = momentum[i]
    w0, w1, w2 = weight[0], weight[1], weight[2]
    c0, c1, c2 = com[0], com[1], com[2]
    f0 = state[8] - w0
    f1 = state[9] - w1
    f2 = state[10] - w2
    t0 = state[11] - (c1 * w2 - c2 * w1)
    t1 = state[12] - (c2 * w0 - c0 * w2)
    wrench[0], wrench[1], wrench[2], wrench[3], wrench[4] = f0, f1, f2, t0, t1
    wrench[5] = state[13] - (c0 * w1 - c1 * w0)
    if f2 < min_normal_force:
        return False
    h = ground_height
    zmp[0], zmp[1], zmp[2] = (-t1 + h * f0) / f2, (t0 + h * f1) / f2, h
    return True


@kernel
def zmp_with_base_velocity(
    centroidal_momentum: np.ndarray,
    base_rotation: np.ndarray,
    still_base_velocity: np.ndarray,
    v: np.ndarray,
    com: np.ndarray,
    mass: float,
    weight: np.ndarray,
    state: np.ndarray,
    time: float,
    cutoff: float,
    ground_height: float,
    min_normal_force: float,
    wrench: np.ndarray,
    zmp: np.ndarray,
) -> bool:
    """:func:`zmp_from_momentum` with the momentum from the step's kinematics.

    p = h_G,lin + m R (v_still - v_base), L_O = k_G + c x p: the momentum with the base linear
    velocity replaced by the one holding the still frames still.

    Args:
        centroidal_momentum: h_G (6,): linear [kg m/s], angular about the CoM [kg m^2/s],
            world axes.
        base_rotation: R (3 x 3), the base's rotation in the world.
        still_base_velocity: v_still (3,) [m/s], base axes.
        v: The estimate's velocity (nv,); its first 3 entries are v_base [m/s], base axes.
        com: The centre of mass c (3,) [m].
        mass: m [kg].
        weight: m g (3,) [N].
        state: See :func:`zmp_from_momentum`.
        time: See :func:`zmp_from_momentum`.
        cutoff: See :func:`zmp_from_momentum`.
        ground_height: See :func:`zmp_from_momentum`.
        min_normal_force: See :func:`zmp_from_momentum`.
        wrench: See :func:`zmp_from_momentum`.
        zmp: See :func:`zmp_from_momentum`.

    Returns:
        Whether the ZMP is defined (``zmp`` written).
    """
    d0 = still_base_velocity[0] - v[0]
    d1 = still_base_velocity[1] - v[1]
    d2 = still_base_velocity[2] - v[2]
    R = base_rotation
    p0 = centroidal_momentum[0] + mass * (R[0, 0] * d0 + R[0, 1] * d1 + R[0, 2] * d2)
    p1 = centroidal_momentum[1] + mass * (R[1, 0] * d0 + R[1, 1] * d1 + R[1, 2] * d2)
    p2 = centroidal_momentum[2] + mass * (R[2, 0] * d0 + R[2, 1] * d1 + R[2, 2] * d2)
    c0, c1, c2 = com[0], com[1], com[2]
    momentum = np.empty(6)
    momentum[0], momentum[1], momentum[2] = p0, p1, p2
    momentum[3] = centroidal_momentum[3] + (c1 * p2 - c2 * p1)
    momentum[4] = centroidal_momentum[4] + (c2 * p0 - c0 * p2)
    momentum[5] = centroidal_momentum[5] + (c0 * p1 - c1 * p0)
    return zmp_from_momentum(
        momentum, com, weight, state, time, cutoff, ground_height, min_normal_force, wrench, zmp
    )


_warmed_up = False


def warm_up() -> None:
    """Compile (or load from the cache) the kernels for the estimator's argument types.

    The types are those :meth:`~wbm_control.zmp_estimation.ZmpEstimator.update` passes in a
    controller step: writable C float64 arrays (the step's
    :class:`~wbm_control.robot_kinematics.RobotKinematics` copies Pinocchio's values into C
    arrays; the estimate's v and still base velocity are new arrays) and floats. Another
    layout or a read-only array compiles another specialization on its first call. Once per
    process.
    """
    global _warmed_up
    if _warmed_up:
        return
    weight, state = np.array([0.0, 0.0, -300.0]), np.zeros(STATE_SIZE)
    wrench, zmp, com = np.empty(6), np.empty(3), np.array([0.0, 0.0, 0.5])
    for time in (0.0, 0.002):
        zmp_with_base_velocity(
            np.zeros(6), np.eye(3), np.zeros(3), np.zeros(7), com, 30.0, weight, state,
            time, 10.0, 0.0, 5.0, wrench, zmp,
        )  # fmt: skip
        zmp_from_momentum(np.zeros(6), com, weight, state, time, 10.0, 0.0, 5.0, wrench, zmp)
    _warmed_up = True
