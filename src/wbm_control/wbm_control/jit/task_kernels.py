"""Compiled kernels of the torque step's tasks: pose errors and desired accelerations.

One kernel per task kind does what the task's numpy code did in a dozen small operations: the
pose error (p* - p, log3(R* R^T)) with Pinocchio's ``log3`` written out, the desired
acceleration of the task's rows and the error norm the status reports. Frames and units are
the tasks' (:mod:`wbm_control.tasks`): poses in the world; errors, velocities and accelerations
(linear, angular) in world axes at the frame origin [m, rad, m/s, rad/s, m/s^2, rad/s^2].

Rotations come as Pinocchio gives them (3 x 3, column-major); every output is written into an
array the caller passes (a kernel's returned tuple of arrays costs more than its arithmetic),
scratch arrays are the kernel's own (a task may be stepped from more than one thread).
The numpy formulas they replace are in ``tests/control/test_jit_tasks.py``, which checks the
two against each other (to 1e-12 relative). :func:`warm_up` compiles (or loads from the cache)
every kernel for the array layouts the controller passes.
"""

from __future__ import annotations

import math

import numpy as np

from wbm_control.jit import kernel

#: Machine epsilon of float64 (Eigen's ``NumTraits<double>::epsilon()``).
_EPS = float(np.finfo(np.float64).eps)
#: Pinocchio's ``TaylorSeriesExpansion<double>::precision<2>()``: eps^(1/3).
_PRECISION = _EPS ** (1.0 / 3.0)
_PI = math.pi


@kernel
def _theta_axis_singular(r: np.ndarray, i0: int, value: float, out: np.ndarray, offset: int):
    """log3 near pi (Pinocchio's ``compute_theta_axis<i0>`` times its angle) into out.

    ``r`` is the renormalized rotation (3 x 3), ``value`` = 2 r_i0i0 - tr + 1.
    """
    i1, i2 = (i0 + 1) % 3, (i0 + 2) % 3
    sign = 1.0 if r[i2, i1] >= r[i1, i2] else -1.0
    s = math.sqrt(value + _EPS + _EPS * _EPS) * sign
    a0 = s / 2.0
    a1 = 1.0 / (2.0 * s) * (r[i1, i0] + r[i0, i1])
    a2 = 1.0 / (2.0 * s) * (r[i2, i0] + r[i0, i2])
    w = 1.0 / (2.0 * s) * (r[i2, i1] - r[i1, i2])
    axis_norm = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    angle = 2.0 * math.atan2(axis_norm, w)
    out[offset + i0] = angle * (a0 / axis_norm)
    out[offset + i1] = angle * (a1 / axis_norm)
    out[offset + i2] = angle * (a2 / axis_norm)


@kernel
def _log3_of_product(a: np.ndarray, b: np.ndarray, out: np.ndarray, offset: int) -> None:
    """log3(a b^T) (3,) [rad] into ``out[offset:offset + 3]``: ``pin.log3(a.dot(b.T))``.

    Pinocchio 3-4's formula (``spatial/log.hxx``): the product renormalized (columns 0 and 1
    normalized, 2 = 0 x 1, 0 = 1 x 2), theta from its trace (acos, or its expansion within
    eps^(1/3) of 0 and pi), the axis from the antisymmetric part; within eps^(1/3) of pi the
    axis from the largest diagonal entry. The branches Pinocchio evaluates as selections are
    taken here as branches (the same values).
    """
    # Columns 0 and 1 of m = a b^T (the renormalization reads no other).
    m00 = a[0, 0] * b[0, 0] + a[0, 1] * b[0, 1] + a[0, 2] * b[0, 2]
    m01 = a[0, 0] * b[1, 0] + a[0, 1] * b[1, 1] + a[0, 2] * b[1, 2]
    m10 = a[1, 0] * b[0, 0] + a[1, 1] * b[0, 1] + a[1, 2] * b[0, 2]
    m11 = a[1, 0] * b[1, 0] + a[1, 1] * b[1, 1] + a[1, 2] * b[1, 2]
    m20 = a[2, 0] * b[0, 0] + a[2, 1] * b[0, 1] + a[2, 2] * b[0, 2]
    m21 = a[2, 0] * b[1, 0] + a[2, 1] * b[1, 1] + a[2, 2] * b[1, 2]
    # Renormalized: column 0 and 1 normalized, column 2 = c0 x c1, column 0 = c1 x c2.
    n0 = math.sqrt(m00 * m00 + m10 * m10 + m20 * m20)
    x00, x10, x20 = m00 / n0, m10 / n0, m20 / n0
    n1 = math.sqrt(m01 * m01 + m11 * m11 + m21 * m21)
    r01, r11, r21 = m01 / n1, m11 / n1, m21 / n1
    r02 = x10 * r21 - x20 * r11
    r12 = x20 * r01 - x00 * r21
    r22 = x00 * r11 - x10 * r01
    r00 = r11 * r22 - r21 * r12
    r10 = r21 * r02 - r01 * r22
    r20 = r01 * r12 - r11 * r02

    tr = r00 + r11 + r22
    cos_value = (tr - 1.0) / 2.0
    if cos_value >= -1.0 + _PRECISION:
        acos_expansion = math.sqrt(2.0 * (1.0 - cos_value) + _EPS * _EPS)
        if tr <= 3.0 - _PRECISION:
            if tr >= -1.0 + _PRECISION:
                theta = math.acos(cos_value)
            else:
                theta = _PI - acos_expansion
        else:
            theta = acos_expansion
        w0 = 0.5 * (r21 - r12)
        w1 = 0.5 * (r02 - r20)
        w2 = 0.5 * (r10 - r01)
        if theta >= _PRECISION:
            t = theta / math.sin(theta)
        else:
            squared = w0 * w0 + w1 * w1 + w2 * w2
            t = 1.0 + squared / 6.0 + squared * squared * 3.0 / 40.0
        out[offset] = t * w0
        out[offset + 1] = t * w1
        out[offset + 2] = t * w2
        return
    # Within eps^(1/3) of pi: the axis from the largest of 2 r_kk - tr + 1.
    r = np.empty((3, 3))
    r[0, 0], r[0, 1], r[0, 2] = r00, r01, r02
    r[1, 0], r[1, 1], r[1, 2] = r10, r11, r12
    r[2, 0], r[2, 1], r[2, 2] = r20, r21, r22
    v0 = 2.0 * r00 - tr + 1.0
    v1 = 2.0 * r11 - tr + 1.0
    v2 = 2.0 * r22 - tr + 1.0
    if v0 >= v1:
        if v0 >= v2:
            _theta_axis_singular(r, 0, v0, out, offset)
        else:
            _theta_axis_singular(r, 2, v2, out, offset)
    elif v1 >= v2:
        _theta_axis_singular(r, 1, v1, out, offset)
    else:
        _theta_axis_singular(r, 2, v2, out, offset)


@kernel
def log3_of_product(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``pin.log3(a.dot(b.T))`` (3,) [rad] into ``out`` (3,), for rotations a, b (3 x 3)."""
    _log3_of_product(a, b, out, 0)


@kernel
def pose_error(
    target_rotation: np.ndarray,
    target_translation: np.ndarray,
    rotation: np.ndarray,
    translation: np.ndarray,
    error: np.ndarray,
) -> None:
    """The pose error (p* - p, log3(R* R^T)) (6,) [m, rad], world axes, into ``error`` (6,).

    Args:
        target_rotation: R* (3 x 3) of the target pose.
        target_translation: p* (3,) [m] of the target pose.
        rotation: R (3 x 3) of the frame, in the world.
        translation: p (3,) [m] of the frame, in the world.
        error: Output (6,).
    """
    for i in range(3):
        error[i] = target_translation[i] - translation[i]
    _log3_of_product(target_rotation, rotation, error, 3)


@kernel
def frame_acceleration_task(
    target_rotation: np.ndarray,
    target_translation: np.ndarray,
    rotation: np.ndarray,
    translation: np.ndarray,
    velocity_reference: np.ndarray,
    acceleration_reference: np.ndarray,
    velocity: np.ndarray,
    kp: float,
    kd: float,
    desired: np.ndarray,
) -> float:
    """A frame task's desired acceleration a_ref + kp e + kd (v_ref - v), e its pose error.

    Args:
        target_rotation: R* (3 x 3) of the reference pose.
        target_translation: p* (3,) [m] of the reference pose.
        rotation: R (3 x 3) of the frame in the world.
        translation: p (3,) [m] of the frame in the world.
        velocity_reference: Reference twist (6,) [m/s, rad/s].
        acceleration_reference: Reference acceleration (6,) [m/s^2, rad/s^2].
        velocity: The frame's twist (6,) [m/s, rad/s], world axes at its origin.
        kp: Stiffness [1/s^2].
        kd: Damping [1/s].
        desired: Output (6,) [m/s^2, rad/s^2].

    Returns:
        The norm of the position error [m] (of e = :func:`pose_error`, [m, rad]).
    """
    error = np.empty(6)
    pose_error(target_rotation, target_translation, rotation, translation, error)
    for i in range(6):
        desired[i] = (
            acceleration_reference[i] + kp * error[i] + kd * (velocity_reference[i] - velocity[i])
        )
    return math.sqrt(error[0] * error[0] + error[1] * error[1] + error[2] * error[2])


@kernel
def orientation_acceleration_task(
    rotation_reference: np.ndarray,
    rotation: np.ndarray,
    velocity: np.ndarray,
    kp: float,
    kd: float,
    desired: np.ndarray,
) -> float:
    """An orientation task's desired acceleration kp e - kd omega, e = log3(R* R^T) [rad].

    Args:
        rotation_reference: R* (3 x 3), the orientation to hold in the world.
        rotation: R (3 x 3), the frame's orientation in the world.
        velocity: The frame's twist (6,) [m/s, rad/s]; omega is its angular part.
        kp: Stiffness [1/s^2].
        kd: Damping [1/s].
        desired: Output (3,) [rad/s^2].

    Returns:
        The norm of the error [rad].
    """
    error = np.empty(3)
    _log3_of_product(rotation_reference, rotation, error, 0)
    for i in range(3):
        desired[i] = kp * error[i] - kd * velocity[3 + i]
    return math.sqrt(error[0] * error[0] + error[1] * error[1] + error[2] * error[2])


@kernel
def posture_acceleration_task(
    reference: np.ndarray, q: np.ndarray, v: np.ndarray, kp: float, kd: float, desired: np.ndarray
) -> None:
    """Joint accelerations kp (q* - q_j) - kd dq_j (ndof,) [rad/s^2] into ``desired``.

    Args:
        reference: q* (ndof,) [rad].
        q: Configuration (7 + ndof,): free-flyer base first.
        v: Velocity (6 + ndof,) [rad/s for the joints].
        kp: Stiffness [1/s^2].
        kd: Damping [1/s].
        desired: Output (ndof,).
    """
    for i in range(reference.shape[0]):
        desired[i] = kp * (reference[i] - q[7 + i]) - kd * v[6 + i]


@kernel
def contact_acceleration(
    anchor_rotation: np.ndarray,
    anchor_translation: np.ndarray,
    rotation: np.ndarray,
    translation: np.ndarray,
    jacobian: np.ndarray,
    v: np.ndarray,
    kp: float,
    kd: float,
    desired: np.ndarray,
) -> None:
    """A held sole's drift correction kp e - kd J v (6,) [m/s^2, rad/s^2] into ``desired``.

    Args:
        anchor_rotation: Rotation (3 x 3) where the sole is held, in the world.
        anchor_translation: Position (3,) [m] where the sole is held.
        rotation: R (3 x 3) of the sole frame in the world.
        translation: p (3,) [m] of the sole frame in the world.
        jacobian: Its LOCAL_WORLD_ALIGNED Jacobian J (6 x nv).
        v: The robot's velocity (nv,).
        kp: Stiffness [1/s^2].
        kd: Damping [1/s].
        desired: Output (6,); e is :func:`pose_error` of the sole to its anchor [m, rad].
    """
    error = np.empty(6)
    pose_error(anchor_rotation, anchor_translation, rotation, translation, error)
    for i in range(6):
        velocity = 0.0
        for j in range(v.shape[0]):
            velocity += jacobian[i, j] * v[j]
        desired[i] = kp * error[i] - kd * velocity


@kernel
def frame_task_rows(
    target_rotation: np.ndarray,
    target_translation: np.ndarray,
    poses: np.ndarray,
    row: int,
    source: np.ndarray,
    velocity_at: int,
    velocity_reference: np.ndarray,
    acceleration_reference: np.ndarray,
    kp: float,
    kd: float,
    desired: np.ndarray,
) -> float:
    """:func:`frame_acceleration_task` with the frame's pose and twist read by offset.

    The torque step's (:mod:`wbm_control.torque_qp`): no array views made per frame.

    Args:
        target_rotation: R* (3 x 3) of the reference pose.
        target_translation: p* (3,) [m] of the reference pose.
        poses: The kinematics' frame placements (n x 12): per row the rotation column-major,
            then the translation [m] (:attr:`~wbm_control.robot_kinematics.RobotKinematics.
            poses`).
        row: The frame's row in ``poses``.
        source: The kinematics' array (:attr:`~wbm_control.robot_kinematics.RobotKinematics.
            buffer`).
        velocity_at: Offset of the frame's twist (6,) [m/s, rad/s] in ``source``.
        velocity_reference: Reference twist (6,) [m/s, rad/s].
        acceleration_reference: Reference acceleration (6,) [m/s^2, rad/s^2].
        kp: Stiffness [1/s^2].
        kd: Damping [1/s].
        desired: Output (6,) [m/s^2, rad/s^2].

    Returns:
        The norm of the position error [m].
    """
    rotation = poses[row, :9].reshape((3, 3)).T  # column-major storage: the transpose
    return frame_acceleration_task(
        target_rotation,
        target_translation,
        rotation,
        poses[row, 9:12],
        velocity_reference,
        acceleration_reference,
        source[velocity_at : velocity_at + 6],
        kp,
        kd,
        desired,
    )


@kernel
def orientation_task_rows(
    rotation_reference: np.ndarray,
    poses: np.ndarray,
    row: int,
    source: np.ndarray,
    velocity_at: int,
    kp: float,
    kd: float,
    desired: np.ndarray,
) -> float:
    """:func:`orientation_acceleration_task` with the frame's rotation and twist by offset.

    Args:
        rotation_reference: R* (3 x 3), the orientation to hold in the world.
        poses: The kinematics' frame placements (n x 12) (:func:`frame_task_rows`).
        row: The frame's row in ``poses``.
        source: The kinematics' array.
        velocity_at: Offset of the frame's twist (6,) [m/s, rad/s] in ``source``.
        kp: Stiffness [1/s^2].
        kd: Damping [1/s].
        desired: Output (3,) [rad/s^2].

    Returns:
        The norm of the error [rad].
    """
    rotation = poses[row, :9].reshape((3, 3)).T
    return orientation_acceleration_task(
        rotation_reference, rotation, source[velocity_at : velocity_at + 6], kp, kd, desired
    )


@kernel
def contact_task_rows(
    anchor_rotation: np.ndarray,
    anchor_translation: np.ndarray,
    poses: np.ndarray,
    row: int,
    source: np.ndarray,
    jacobian_at: int,
    v: np.ndarray,
    kp: float,
    kd: float,
    desired: np.ndarray,
) -> None:
    """:func:`contact_acceleration` with the sole's pose and Jacobian read by offset.

    Args:
        anchor_rotation: Rotation (3 x 3) where the sole is held, in the world.
        anchor_translation: Position (3,) [m] where the sole is held.
        poses: The kinematics' frame placements (n x 12) (:func:`frame_task_rows`).
        row: The sole frame's row in ``poses``.
        source: The kinematics' array.
        jacobian_at: Offset of its LOCAL_WORLD_ALIGNED Jacobian (6 x nv, C order) in
            ``source``.
        v: The robot's velocity (nv,).
        kp: Stiffness [1/s^2].
        kd: Damping [1/s].
        desired: Output (6,) [m/s^2, rad/s^2].
    """
    nv = v.shape[0]
    rotation = poses[row, :9].reshape((3, 3)).T
    jacobian = source[jacobian_at : jacobian_at + 6 * nv].reshape((6, nv))
    contact_acceleration(
        anchor_rotation,
        anchor_translation,
        rotation,
        poses[row, 9:12],
        jacobian,
        v,
        kp,
        kd,
        desired,
    )


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


#: Whether :func:`warm_up` ran in this process.
_warm = False


def warm_up() -> None:
    """Compile (or load from the cache) every kernel here for the controller's array types.

    Rotations column-major (Pinocchio's), the other arrays C-contiguous float64, gains Python
    floats; the reference velocity and acceleration of a frame task also read-only (a
    trajectory's end sample, :meth:`~wbm_control.tasks.FrameTask.reference`: numba compiles
    read-only arrays apart). To be called when the tasks are built, not in a control cycle;
    once per process (later calls return at once).
    """
    global _warm
    if _warm:
        return
    rotation = np.asfortranarray(np.eye(3))
    vector3, vector6 = np.zeros(3), np.zeros(6)
    error, desired = np.empty(6), np.empty(6)
    log3_of_product(rotation, rotation, np.empty(3))
    pose_error(rotation, vector3, rotation, vector3, error)
    for reference in (vector6, _read_only(np.zeros(6))):
        frame_acceleration_task(
            rotation,
            vector3,
            rotation,
            vector3,
            reference,
            reference,
            vector6,
            1.0,
            1.0,
            desired,
        )
    orientation_acceleration_task(np.eye(3), rotation, vector6, 1.0, 1.0, desired)
    posture_acceleration_task(np.zeros(1), np.zeros(8), np.zeros(7), 1.0, 1.0, np.empty(1))
    contact_acceleration(
        rotation,
        vector3,
        rotation,
        vector3,
        np.zeros((6, 7)),
        np.zeros(7),
        1.0,
        1.0,
        desired,
    )
    # The torque step's, reading the kinematics' arrays by offset.
    poses, source = np.zeros((2, 12)), np.zeros(64)
    poses[:, [0, 4, 8]] = 1.0
    for reference in (vector6, _read_only(np.zeros(6))):
        frame_task_rows(
            rotation, vector3, poses, 1, source, 6, reference, reference, 1.0, 1.0, desired
        )
    orientation_task_rows(np.eye(3), poses, 0, source, 0, 1.0, 1.0, np.empty(3))
    contact_task_rows(rotation, vector3, poses, 1, source, 0, np.zeros(7), 1.0, 1.0, desired)
    _warm = True
