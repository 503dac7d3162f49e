"""The one set of conventions wbm uses inside, and the converters to the others.

Internal conventions (documented in docs/conventions.md, tested by round trips):

- World frame: z up, ground plane at z = 0, gravity (0, 0, -9.81) m/s^2 unless a robot config
  sets another value.
- Units: SI (m, rad, s, kg, N, N m).
- Quaternions: (x, y, z, w), scalar last, as in Pinocchio's free-flyer configuration and ROS
  messages. The WBM-Library state vector (seed 000) is scalar first: converted at its edge.
- Spatial vectors (twists, accelerations, wrenches): linear part first, then angular, as in
  Pinocchio and ROS. spatial_v2 is angular first: converted at its edge.
- Configuration q and generalized velocity v: Pinocchio's layout. For a floating base
  q = (p_base_in_world, quat_base_to_world_xyzw, q_joints) and v = (v_base_in_base,
  omega_base_in_base, dq_joints), the base twist expressed in the base frame ("body").
- The WBM-Library's "mixed" representation is available everywhere a velocity matters
  (``Representation.MIXED``): base linear velocity = time derivative of the base origin in world
  axes, base angular velocity in world axes; a frame's mixed velocity is the velocity of its
  origin and its angular velocity, both in world axes (Pinocchio's LOCAL_WORLD_ALIGNED).
- Contact and external wrenches: the wrench the environment applies to the robot, at the frame
  origin, in world-aligned axes (mixed). The WBM-Library's contact forces f_c of eq. (2.5)-(2.8)
  are the opposite sign (it writes M ddq = tau - C - J^T f_c).
"""

from __future__ import annotations

import enum

import numpy as np

GRAVITY = np.array([0.0, 0.0, -9.81])
"""Default gravity in the world frame [m/s^2]."""


class Representation(enum.StrEnum):
    """Velocity representation of frame velocities, Jacobians and the generalized velocity.

    Attributes:
        BODY: Pinocchio's native one. Generalized velocity v has the base twist in the base frame;
            a frame velocity is its twist in its own frame (Pinocchio LOCAL).
        MIXED: The WBM-Library's. Generalized velocity nu has the base origin's velocity and the
            base angular velocity in world axes; a frame velocity is its origin's velocity and
            angular velocity in world axes (Pinocchio LOCAL_WORLD_ALIGNED).
    """

    BODY = "body"
    MIXED = "mixed"


def quaternion_xyzw_to_wxyz(quaternion_xyzw: np.ndarray) -> np.ndarray:
    """Reorder a quaternion from scalar-last (x, y, z, w) to scalar-first (w, x, y, z)."""
    x, y, z, w = np.asarray(quaternion_xyzw, dtype=float)
    return np.array([w, x, y, z])


def quaternion_wxyz_to_xyzw(quaternion_wxyz: np.ndarray) -> np.ndarray:
    """Reorder a quaternion from scalar-first (w, x, y, z) to scalar-last (x, y, z, w)."""
    w, x, y, z = np.asarray(quaternion_wxyz, dtype=float)
    return np.array([x, y, z, w])


def rotation_from_quaternion_xyzw(quaternion_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w), normalized first."""
    x, y, z, w = np.asarray(quaternion_xyzw, dtype=float) / np.linalg.norm(quaternion_xyzw)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quaternion_xyzw_from_rotation(rotation: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) with w >= 0 of a rotation matrix (Shepperd's method)."""
    R = np.asarray(rotation, dtype=float)
    trace = np.trace(R)
    if trace > 0.0:
        s = 2.0 * np.sqrt(1.0 + trace)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [s / 4, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, s / 4, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, s / 4, (R[1, 0] - R[0, 1]) / s]
    quaternion = np.array(q)
    quaternion /= np.linalg.norm(quaternion)
    return quaternion if quaternion[3] >= 0.0 else -quaternion


def spatial_linear_first_to_angular_first(vector: np.ndarray) -> np.ndarray:
    """Reorder a 6D spatial vector (or the rows of a 6 x n matrix) from (lin, ang) to (ang, lin).

    Pinocchio and ROS are linear first; spatial_v2 (seed 001) is angular first.
    """
    array = np.asarray(vector, dtype=float)
    return np.concatenate([array[3:6], array[0:3]], axis=0)


def spatial_angular_first_to_linear_first(vector: np.ndarray) -> np.ndarray:
    """Reorder a 6D spatial vector (or rows of a 6 x n matrix) from (ang, lin) to (lin, ang)."""
    array = np.asarray(vector, dtype=float)
    return np.concatenate([array[3:6], array[0:3]], axis=0)


def base_velocity_body_to_mixed(
    rotation_base_to_world: np.ndarray, twist_base_in_base: np.ndarray
) -> np.ndarray:
    """Convert a base twist from body (base axes) to mixed (world axes) representation.

    Args:
        rotation_base_to_world: 3 x 3 orientation of the base in the world.
        twist_base_in_base: (v, omega) of the base origin in base axes [m/s, rad/s].

    Returns:
        (d/dt p_base, omega) in world axes [m/s, rad/s].
    """
    R = np.asarray(rotation_base_to_world, dtype=float)
    twist = np.asarray(twist_base_in_base, dtype=float)
    return np.concatenate([R @ twist[:3], R @ twist[3:6]])


def base_velocity_mixed_to_body(
    rotation_base_to_world: np.ndarray, twist_base_mixed: np.ndarray
) -> np.ndarray:
    """Inverse of :func:`base_velocity_body_to_mixed`."""
    R = np.asarray(rotation_base_to_world, dtype=float)
    twist = np.asarray(twist_base_mixed, dtype=float)
    return np.concatenate([R.T @ twist[:3], R.T @ twist[3:6]])


def mixed_to_body_velocity_matrix(rotation_base_to_world: np.ndarray, ndof: int) -> np.ndarray:
    """Matrix T with v_body = T nu_mixed for a floating-base robot with ndof joints.

    T = blockdiag(R^T, R^T, I_ndof). Its inverse is blockdiag(R, R, I_ndof) = T^T on the base
    block, so Jacobians convert as J_mixed_input = J_body_input @ T.
    """
    R = np.asarray(rotation_base_to_world, dtype=float)
    T = np.eye(6 + ndof)
    T[0:3, 0:3] = R.T
    T[3:6, 3:6] = R.T
    return T
