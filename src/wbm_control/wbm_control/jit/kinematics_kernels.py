r"""Compiled kernel of the step's frame kinematics (issue 11).

:func:`frame_kinematics` does, in one call, what :class:`~wbm_control.robot_kinematics.
RobotKinematics` did with 3 Pinocchio getters per frame and numpy copies after Pinocchio's pass
(``computeAllTerms`` then ``updateFramePlacements``): each queried frame's Jacobian, twist and
classical acceleration at zero joint acceleration (all LOCAL_WORLD_ALIGNED: at the frame
origin, world axes, linear part first), and the mass matrix with Pinocchio's upper triangle
mirrored into the lower one. It reads Pinocchio's arrays where they are (views, see
:mod:`wbm_control.pinocchio_views`) and writes the kinematics' own arrays.

Arithmetic: Pinocchio 4's formulas (``frames.hxx``), operation by operation:

- Jacobian: the columns of the joint Jacobians (world frame, at the world origin) of the
  joints supporting the frame's parent joint, the linear part shifted to the frame origin p:
  ``lin - p x ang``; the other columns are zero;
- twist: the parent joint's spatial velocity (v_lin, v_ang, joint frame) at the frame's origin
  in the joint frame (``v_lin + v_ang x t``, t the frame's translation in its joint), rotated
  to the world by the joint's rotation R: ``(R (v_lin + v_ang x t), R v_ang)``;
- classical acceleration: the same with the joint's spatial acceleration a (at a = 0: the
  drift), plus ``omega x v`` of the twist on its linear part.

Eigen may evaluate the 3 x 3 products in another order (and with FMA): the results agree with
Pinocchio's getters to rounding (1e-15 relative measured; the test allows 1e-12). The mass
matrix is copied value by value (bit-identical).

Layouts (float64, C order unless said):

- ``frame_ids`` int64 (n,): the frames, in the order of the outputs;
- ``parents`` int64 (nframes,): each frame's parent joint; ``local_translations``
  (nframes, 3): each frame's translation in its parent joint [m];
- ``supports`` uint8 (njoints, nv): 1 where the column moves the joint (its support);
- ``joint_placements`` (njoints, 12), ``frame_placements`` (nframes, 12): placements in the
  world, each row the rotation column-major (R[r, c] at r + 3 c) then the translation [m];
- ``joint_velocities``, ``joint_accelerations`` (njoints, 6): spatial velocities and
  accelerations in the joint frames, linear then angular [m/s, rad/s; m/s^2, rad/s^2];
- ``joint_jacobians`` (6, nv), any order: Pinocchio's ``data.J``; ``mass_upper`` (nv, nv), any
  order: ``data.M`` (upper triangle read);
- outputs: ``jacobians`` (n, 6, nv), ``velocities`` (n, 6), ``drifts`` (n, 6),
  ``mass_matrix`` (nv, nv).
"""

from __future__ import annotations

import numpy as np

from wbm_control.jit import kernel


@kernel
def frame_kinematics(
    frame_ids: np.ndarray,
    parents: np.ndarray,
    local_translations: np.ndarray,
    supports: np.ndarray,
    joint_placements: np.ndarray,
    frame_placements: np.ndarray,
    joint_velocities: np.ndarray,
    joint_accelerations: np.ndarray,
    joint_jacobians: np.ndarray,
    mass_upper: np.ndarray,
    jacobians: np.ndarray,
    velocities: np.ndarray,
    drifts: np.ndarray,
    mass_matrix: np.ndarray,
) -> None:
    """Frame Jacobians, twists, drifts (LOCAL_WORLD_ALIGNED) and M mirrored (module docstring)."""
    nv = joint_jacobians.shape[1]
    for k in range(frame_ids.shape[0]):
        fid = frame_ids[k]
        joint = parents[fid]
        px = frame_placements[fid, 9]
        py = frame_placements[fid, 10]
        pz = frame_placements[fid, 11]
        for c in range(nv):
            if supports[joint, c]:
                ax = joint_jacobians[3, c]
                ay = joint_jacobians[4, c]
                az = joint_jacobians[5, c]
                jacobians[k, 0, c] = joint_jacobians[0, c] - (py * az - pz * ay)
                jacobians[k, 1, c] = joint_jacobians[1, c] - (pz * ax - px * az)
                jacobians[k, 2, c] = joint_jacobians[2, c] - (px * ay - py * ax)
                jacobians[k, 3, c] = ax
                jacobians[k, 4, c] = ay
                jacobians[k, 5, c] = az
            else:
                for r in range(6):
                    jacobians[k, r, c] = 0.0
        tx = local_translations[fid, 0]
        ty = local_translations[fid, 1]
        tz = local_translations[fid, 2]
        _rotated_at_point(joint_placements, joint, joint_velocities, tx, ty, tz, velocities, k)
        _rotated_at_point(joint_placements, joint, joint_accelerations, tx, ty, tz, drifts, k)
        vx, vy, vz = velocities[k, 0], velocities[k, 1], velocities[k, 2]
        wx, wy, wz = velocities[k, 3], velocities[k, 4], velocities[k, 5]
        drifts[k, 0] += wy * vz - wz * vy
        drifts[k, 1] += wz * vx - wx * vz
        drifts[k, 2] += wx * vy - wy * vx
    for i in range(nv):
        for j in range(i, nv):
            value = mass_upper[i, j]
            mass_matrix[i, j] = value
            mass_matrix[j, i] = value


@kernel
def _rotated_at_point(
    joint_placements: np.ndarray,
    joint: int,
    motions: np.ndarray,
    tx: float,
    ty: float,
    tz: float,
    out: np.ndarray,
    k: int,
) -> None:
    """out[k] = (R (m_lin + m_ang x t), R m_ang): the joint's motion at t, world axes."""
    lx, ly, lz = motions[joint, 0], motions[joint, 1], motions[joint, 2]
    ax, ay, az = motions[joint, 3], motions[joint, 4], motions[joint, 5]
    lx += ay * tz - az * ty
    ly += az * tx - ax * tz
    lz += ax * ty - ay * tx
    r = joint_placements
    # R[row, col] at row + 3 col.
    out[k, 0] = r[joint, 0] * lx + r[joint, 3] * ly + r[joint, 6] * lz
    out[k, 1] = r[joint, 1] * lx + r[joint, 4] * ly + r[joint, 7] * lz
    out[k, 2] = r[joint, 2] * lx + r[joint, 5] * ly + r[joint, 8] * lz
    out[k, 3] = r[joint, 0] * ax + r[joint, 3] * ay + r[joint, 6] * az
    out[k, 4] = r[joint, 1] * ax + r[joint, 4] * ay + r[joint, 7] * az
    out[k, 5] = r[joint, 2] * ax + r[joint, 5] * ay + r[joint, 8] * az


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
        np.empty((1, 6, nv)),
        np.empty((1, 6)),
        np.empty((1, 6)),
        np.empty((nv, nv)),
    )
    _warmed_up = True
