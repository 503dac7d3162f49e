r"""Compiled kernel of the step's frame kinematics (issue 11).

:func:`frame_kinematics` does, in one call, what :class:`~wbm_control.robot_kinematics.
RobotKinematics` did with 3 Pinocchio getters per frame and a dozen numpy copies after
Pinocchio's pass (``computeAllTerms``, ``centerOfMass``, ``updateFramePlacements``): each queried
frame's Jacobian, twist and classical acceleration at zero joint acceleration (all
LOCAL_WORLD_ALIGNED: at the frame origin, world axes, linear part first), the mass matrix with
Pinocchio's upper triangle mirrored into the lower one, and copies of the CoM Jacobian, the bias
forces, the CoM, its velocity and drift, the centroidal momentum and the base rotation. It
reads Pinocchio's arrays where they are (views, see :mod:`wbm_control.pinocchio_views`) and
writes one array, the kinematics' own (its attributes are views of it).

Arithmetic: Pinocchio 4's formulas (``frames.hxx``), operation by operation:

- Jacobian: the columns of the joint Jacobians (world frame, at the world origin) of the
  joints supporting the frame's parent joint, the linear part shifted to the frame origin p:
  ``lin - p x ang``; the other columns are zero;
- twist: the parent joint's spatial velocity (v_lin, v_ang, joint frame) at the frame's origin
  in the joint frame (``v_lin + v_ang x t``, t the frame's translation in its joint), rotated
  to the world by the joint's rotation R: ``(R (v_lin + v_ang x t), R v_ang)``;
- classical acceleration: the same with the joint's spatial acceleration a (at a = 0: the
  drift), plus ``omega x v`` of the twist on its linear part.

Eigen may evaluate the 3 x 3 products in another order (and with FMA): the twists and drifts
agree with Pinocchio's getters to rounding (1e-15 relative measured on iCub and the G1; the
test allows 1e-12); the Jacobians measured bit-identical. The rest is copied value by value
(bit-identical).

Layouts (float64, C order unless said):

- ``frame_ids`` int64 (n,): the frames, in the order of the outputs;
- ``parent_joints`` int64 (nframes,): each frame's parent joint; ``local_translations``
  (nframes, 3): each frame's translation in its parent joint [m];
- ``supports`` uint8 (njoints, nv): 1 where the column moves the joint (its support);
- ``joint_placements`` (njoints, 12), ``frame_placements`` (nframes, 12): placements in the
  world, each row the rotation column-major (R[r, c] at r + 3 c) then the translation [m];
- ``joint_velocities``, ``joint_accelerations`` (njoints, 6): spatial velocities and
  accelerations in the joint frames, linear then angular [m/s, rad/s; m/s^2, rad/s^2];
- ``joint_jacobians`` (6, nv): Pinocchio's ``data.J``; ``mass_upper`` (nv, nv): ``data.M``
  (upper triangle read); ``com_jacobian`` (3, nv): ``data.Jcom`` (these three in Fortran
  order, Eigen's); ``bias_forces`` (nv,), ``com``, ``com_velocity``, ``com_acceleration``
  (3,), ``momentum`` (6,): ``data.nle``, ``data.com[0]``, ``vcom[0]``, ``acom[0]``,
  ``data.hg.vector``;
- ``out`` (:func:`output_size`): see :func:`frame_kinematics`.
"""

from __future__ import annotations

import numpy as np

from wbm_control.jit import kernel


def output_size(n: int, nv: int) -> int:
    """Size of :func:`frame_kinematics`'s ``out`` for n frames and nv velocities."""
    return n * (6 * nv + 12) + nv * nv + 4 * nv + 24


@kernel
def frame_kinematics(
    frame_ids: np.ndarray,
    parent_joints: np.ndarray,
    local_translations: np.ndarray,
    supports: np.ndarray,
    joint_placements: np.ndarray,
    frame_placements: np.ndarray,
    joint_velocities: np.ndarray,
    joint_accelerations: np.ndarray,
    joint_jacobians: np.ndarray,
    mass_upper: np.ndarray,
    com_jacobian: np.ndarray,
    bias_forces: np.ndarray,
    com: np.ndarray,
    com_velocity: np.ndarray,
    com_acceleration: np.ndarray,
    momentum: np.ndarray,
    out: np.ndarray,
    poses: np.ndarray,
) -> None:
    """The step's kinematics from Pinocchio's pass into ``out`` and ``poses`` (module docstring).

    ``out`` (:func:`output_size`), C order each: the frames' Jacobians (n, 6, nv), twists
    (n, 6), drifts (n, 6), M mirrored (nv, nv), J_com (3, nv), h (nv,), the CoM, its velocity
    and drift (3 each), h_G (6), the base rotation (3, 3; joint 1's). ``poses`` (n, 12): the
    frames' rows of ``frame_placements``, copied (in the frames' order).
    """
    n = frame_ids.shape[0]
    nv = joint_jacobians.shape[1]
    velocities = n * 6 * nv
    drifts = velocities + 6 * n
    mass = drifts + 6 * n
    jcom = mass + nv * nv
    bias = jcom + 3 * nv
    rest = bias + nv
    for k in range(n):
        fid = frame_ids[k]
        joint = parent_joints[fid]
        px = frame_placements[fid, 9]
        py = frame_placements[fid, 10]
        pz = frame_placements[fid, 11]
        for c in range(12):
            poses[k, c] = frame_placements[fid, c]
        row = k * 6 * nv
        for c in range(nv):
            if supports[joint, c]:
                ax = joint_jacobians[3, c]
                ay = joint_jacobians[4, c]
                az = joint_jacobians[5, c]
                out[row + c] = joint_jacobians[0, c] - (py * az - pz * ay)
                out[row + nv + c] = joint_jacobians[1, c] - (pz * ax - px * az)
                out[row + 2 * nv + c] = joint_jacobians[2, c] - (px * ay - py * ax)
                out[row + 3 * nv + c] = ax
                out[row + 4 * nv + c] = ay
                out[row + 5 * nv + c] = az
            else:
                for r in range(6):
                    out[row + r * nv + c] = 0.0
        tx = local_translations[fid, 0]
        ty = local_translations[fid, 1]
        tz = local_translations[fid, 2]
        v = velocities + 6 * k
        d = drifts + 6 * k
        _rotated_at_point(joint_placements, joint, joint_velocities, tx, ty, tz, out, v)
        _rotated_at_point(joint_placements, joint, joint_accelerations, tx, ty, tz, out, d)
        vx, vy, vz = out[v], out[v + 1], out[v + 2]
        wx, wy, wz = out[v + 3], out[v + 4], out[v + 5]
        out[d] += wy * vz - wz * vy
        out[d + 1] += wz * vx - wx * vz
        out[d + 2] += wx * vy - wy * vx
    for i in range(nv):
        for j in range(i, nv):
            value = mass_upper[i, j]
            out[mass + i * nv + j] = value
            out[mass + j * nv + i] = value
    for r in range(3):
        for c in range(nv):
            out[jcom + r * nv + c] = com_jacobian[r, c]
    for c in range(nv):
        out[bias + c] = bias_forces[c]
    for r in range(3):
        out[rest + r] = com[r]
        out[rest + 3 + r] = com_velocity[r]
        out[rest + 6 + r] = com_acceleration[r]
    for r in range(6):
        out[rest + 9 + r] = momentum[r]
    for r in range(3):
        for c in range(3):  # row-major from column-major
            out[rest + 15 + 3 * r + c] = joint_placements[1, r + 3 * c]


@kernel
def _rotated_at_point(
    joint_placements: np.ndarray,
    joint: int,
    motions: np.ndarray,
    tx: float,
    ty: float,
    tz: float,
    out: np.ndarray,
    at: int,
) -> None:
    """out[at:at + 6] = (R (m_lin + m_ang x t), R m_ang): the joint's motion at t, world axes."""
    lx, ly, lz = motions[joint, 0], motions[joint, 1], motions[joint, 2]
    ax, ay, az = motions[joint, 3], motions[joint, 4], motions[joint, 5]
    lx += ay * tz - az * ty
    ly += az * tx - ax * tz
    lz += ax * ty - ay * tx
    r = joint_placements
    # R[row, col] at row + 3 col.
    out[at] = r[joint, 0] * lx + r[joint, 3] * ly + r[joint, 6] * lz
    out[at + 1] = r[joint, 1] * lx + r[joint, 4] * ly + r[joint, 7] * lz
    out[at + 2] = r[joint, 2] * lx + r[joint, 5] * ly + r[joint, 8] * lz
    out[at + 3] = r[joint, 0] * ax + r[joint, 3] * ay + r[joint, 6] * az
    out[at + 4] = r[joint, 1] * ax + r[joint, 4] * ay + r[joint, 7] * az
    out[at + 5] = r[joint, 2] * ax + r[joint, 5] * ay + r[joint, 8] * az


_warmed_up = False


def warm_up() -> None:
    """Compile (or load from the cache) the kernel for the step's argument types.

    The types :class:`~wbm_control.robot_kinematics.RobotKinematics` passes: C arrays, except
    Pinocchio's ``data.J`` and ``data.M`` (Fortran order, Eigen's); the copying fallback of
    :mod:`wbm_control.pinocchio_views` gives the same types. Once per process.
    """
    global _warmed_up
    if _warmed_up:
        return
    nv, njoints, nframes = 8, 3, 2
    placements = np.zeros((njoints, 12))
    placements[:, [0, 4, 8]] = 1.0
    frame_placements = np.zeros((nframes, 12))
    frame_placements[:, [0, 4, 8]] = 1.0
    frame_kinematics(
        np.array([1], dtype=np.int64),
        np.array([0, 2], dtype=np.int64),
        np.zeros((nframes, 3)),
        np.ones((njoints, nv), dtype=np.uint8),
        placements,
        frame_placements,
        np.zeros((njoints, 6)),
        np.zeros((njoints, 6)),
        np.asfortranarray(np.zeros((6, nv))),
        np.asfortranarray(np.eye(nv)),
        np.asfortranarray(np.zeros((3, nv))),
        np.zeros(nv),
        np.zeros(3),
        np.zeros(3),
        np.zeros(3),
        np.zeros(6),
        np.empty(output_size(1, nv)),
        np.empty((1, 12)),
    )
    _warmed_up = True
