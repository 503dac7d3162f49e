"""Compiled kernel of the IK mode's QP build (:class:`wbm_control.differential_ik.DifferentialIK`).

:func:`build_ik_qp` assembles pink's IK QP (1/2 dq^T H dq + c^T dq, G dq <= h) in one call from
one kinematics pass: for each frame task the error log6(T_frame^-1 T_target) and the weighted
Jacobian W Jlog6(T_target^-1 T_frame) J_local (J_local from the joint Jacobians in the world,
Pinocchio's ``data.J``, on the columns of the frame's support), the posture task, the CoM task and
the configuration and velocity limits' h. Pinocchio's ``log3``, ``log6`` and ``Jlog6``
(``spatial/log.hxx``, Pinocchio 3) are written out; their branches are taken as branches.

Frames and units: poses in the world as 4 x 4 homogeneous matrices [m]; dq in Pinocchio's
velocity layout [rad, m] (the free flyer's in the base frame); errors [m, rad]. The numpy
formulas it replaces are in ``tests/control/ik_reference.py``; ``tests/control/
test_jit_ik.py`` compares the two (and pink's ``build_ik``).
"""

from __future__ import annotations

import math

import numpy as np

from wbm_control.jit import kernel

#: Machine epsilon of float64 (Eigen's ``NumTraits<double>::epsilon()``).
_EPS = float(np.finfo(np.float64).eps)
#: Pinocchio's ``TaylorSeriesExpansion<double>::precision<2>()``: eps^(1/3).
_PRECISION2 = _EPS ** (1.0 / 3.0)
#: Pinocchio's ``TaylorSeriesExpansion<double>::precision<3>()``: eps^(1/4).
_PRECISION3 = _EPS ** (1.0 / 4.0)

#: Indices of :func:`build_ik_qp`'s ``params`` (floats).
DAMPING, DT, POSTURE_COST, POSTURE_GAIN, COM_GAIN, LIMIT_GAIN, HAS_COM, DIFFERENCES = range(8)
N_PARAMS = 8


@kernel
def _theta_axis(r: np.ndarray, i0: int, value: float, axis: np.ndarray) -> float:
    """Pinocchio's ``compute_theta_axis<i0>``: the angle, and the unit axis into ``axis``."""
    i1, i2 = (i0 + 1) % 3, (i0 + 2) % 3
    sign = 1.0 if r[i2, i1] >= r[i1, i2] else -1.0
    s = math.sqrt(value + _EPS + _EPS * _EPS) * sign
    axis[i0] = s / 2.0
    axis[i1] = 1.0 / (2.0 * s) * (r[i1, i0] + r[i0, i1])
    axis[i2] = 1.0 / (2.0 * s) * (r[i2, i0] + r[i0, i2])
    w = 1.0 / (2.0 * s) * (r[i2, i1] - r[i1, i2])
    axis_norm = math.sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2])
    axis[0] /= axis_norm
    axis[1] /= axis_norm
    axis[2] /= axis_norm
    return 2.0 * math.atan2(axis_norm, w)


@kernel
def _log3(m: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> float:
    """Pinocchio's ``log3(m, theta)``: the rotation vector into ``out`` (3,), theta returned.

    ``scratch`` (3, 4): the renormalized matrix (3 x 3) and an axis.
    """
    r = scratch[:, :3]
    # Renormalized: columns 0 and 1 normalized, column 2 = c0 x c1, column 0 = c1 x c2.
    n0 = math.sqrt(m[0, 0] * m[0, 0] + m[1, 0] * m[1, 0] + m[2, 0] * m[2, 0])
    x0, x1, x2 = m[0, 0] / n0, m[1, 0] / n0, m[2, 0] / n0
    n1 = math.sqrt(m[0, 1] * m[0, 1] + m[1, 1] * m[1, 1] + m[2, 1] * m[2, 1])
    r[0, 1], r[1, 1], r[2, 1] = m[0, 1] / n1, m[1, 1] / n1, m[2, 1] / n1
    r[0, 2] = x1 * r[2, 1] - x2 * r[1, 1]
    r[1, 2] = x2 * r[0, 1] - x0 * r[2, 1]
    r[2, 2] = x0 * r[1, 1] - x1 * r[0, 1]
    r[0, 0] = r[1, 1] * r[2, 2] - r[2, 1] * r[1, 2]
    r[1, 0] = r[2, 1] * r[0, 2] - r[0, 1] * r[2, 2]
    r[2, 0] = r[0, 1] * r[1, 2] - r[1, 1] * r[0, 2]
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    cos_value = (tr - 1.0) / 2.0
    if cos_value >= -1.0 + _PRECISION2:
        acos_expansion = math.sqrt(2.0 * (1.0 - cos_value) + _EPS * _EPS)
        if tr <= 3.0 - _PRECISION2:
            if tr >= -1.0 + _PRECISION2:
                theta = math.acos(cos_value)
            else:
                theta = math.pi - acos_expansion
        else:
            theta = acos_expansion
        w0 = 0.5 * (r[2, 1] - r[1, 2])
        w1 = 0.5 * (r[0, 2] - r[2, 0])
        w2 = 0.5 * (r[1, 0] - r[0, 1])
        if theta >= _PRECISION2:
            t = theta / math.sin(theta)
        else:
            squared = w0 * w0 + w1 * w1 + w2 * w2
            t = 1.0 + squared / 6.0 + squared * squared * 3.0 / 40.0
        out[0] = t * w0
        out[1] = t * w1
        out[2] = t * w2
        return theta
    # Within eps^(1/3) of pi: the axis from the largest of 2 r_kk - tr + 1.
    v0 = 2.0 * r[0, 0] - tr + 1.0
    v1 = 2.0 * r[1, 1] - tr + 1.0
    v2 = 2.0 * r[2, 2] - tr + 1.0
    axis = scratch[:, 3]
    if v0 >= v1:
        theta = _theta_axis(r, 0, v0, axis) if v0 >= v2 else _theta_axis(r, 2, v2, axis)
    elif v1 >= v2:
        theta = _theta_axis(r, 1, v1, axis)
    else:
        theta = _theta_axis(r, 2, v2, axis)
    out[0] = theta * axis[0]
    out[1] = theta * axis[1]
    out[2] = theta * axis[2]
    return theta


@kernel
def _log6(rotation: np.ndarray, p: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """Pinocchio's ``log6`` of (rotation, p) into ``out`` (6,): linear, then angular."""
    w = out[3:]
    theta = _log3(rotation, w, scratch)
    a0 = 0.5 * (rotation[2, 1] - rotation[1, 2])
    a1 = 0.5 * (rotation[0, 2] - rotation[2, 0])
    a2 = 0.5 * (rotation[1, 0] - rotation[0, 1])
    t2 = a0 * a0 + a1 * a1 + a2 * a2
    tr = rotation[0, 0] + rotation[1, 1] + rotation[2, 2]
    st, ct = math.sin(theta), math.cos(theta)
    if tr >= 3.0 - _PRECISION2:
        alpha = 1.0 - t2 / 12.0 - t2 * t2 / 720.0
        beta = 1.0 / 12.0 + t2 / 720.0
    else:
        alpha = theta * st / (2.0 * (1.0 - ct))
        beta = 1.0 / (theta * theta) - st / (2.0 * theta * (1.0 - ct))
    wp = beta * (w[0] * p[0] + w[1] * p[1] + w[2] * p[2])
    out[0] = alpha * p[0] - 0.5 * (w[1] * p[2] - w[2] * p[1]) + wp * w[0]
    out[1] = alpha * p[1] - 0.5 * (w[2] * p[0] - w[0] * p[2]) + wp * w[1]
    out[2] = alpha * p[2] - 0.5 * (w[0] * p[1] - w[1] * p[0]) + wp * w[2]


@kernel
def _jlog6(rotation: np.ndarray, p: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """Pinocchio's ``Jlog6`` of (rotation, p) into ``out`` (6, 6)."""
    w = np.empty(3)
    t = _log3(rotation, w, scratch)
    st, ct = math.sin(t), math.cos(t)
    t2 = t * t
    if t < _PRECISION3:  # Jlog3's alpha and diagonal, Jlog6's beta and beta' / theta
        alpha = 1.0 / 12.0 + t * t / 720.0
        diag = 0.5 * (2.0 - t * t / 6.0)
        beta = 1.0 / 12.0 + t2 / 720.0
        beta_dot_over_theta = 1.0 / 360.0
    else:
        st_1mct = st / (1.0 - ct)
        alpha = 1.0 / (t * t) - st_1mct / (2.0 * t)
        diag = 0.5 * (t * st_1mct)
        tinv = 1.0 / t
        t2inv = tinv * tinv
        inv_2_2ct = 1.0 / (2.0 * (1.0 - ct))
        beta = t2inv - st * tinv * inv_2_2ct
        beta_dot_over_theta = -2.0 * t2inv * t2inv + (1.0 + st * tinv) * t2inv * inv_2_2ct
    for i in range(3):  # A = D = Jlog3: alpha w w^T + diag I + [w / 2]x
        for j in range(3):
            value = alpha * w[i] * w[j]
            out[i, j] = value
    for i in range(3):
        out[i, i] += diag
    hw0, hw1, hw2 = 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]
    out[0, 1] -= hw2
    out[0, 2] += hw1
    out[1, 0] += hw2
    out[1, 2] -= hw0
    out[2, 0] -= hw1
    out[2, 1] += hw0
    for i in range(3):
        for j in range(3):
            out[3 + i, 3 + j] = out[i, j]
            out[3 + i, j] = 0.0
    wtp = w[0] * p[0] + w[1] * p[1] + w[2] * p[2]
    k1 = beta_dot_over_theta * wtp
    k2 = t2 * beta_dot_over_theta + 2.0 * beta
    c = np.empty((3, 3))
    for i in range(3):
        tmp = k1 * w[i] - k2 * p[i]
        for j in range(3):
            c[i, j] = tmp * w[j] + beta * w[i] * p[j]
        c[i, i] += wtp * beta
    hp0, hp1, hp2 = 0.5 * p[0], 0.5 * p[1], 0.5 * p[2]
    c[0, 1] -= hp2
    c[0, 2] += hp1
    c[1, 0] += hp2
    c[1, 2] -= hp0
    c[2, 0] -= hp1
    c[2, 1] += hp0
    for i in range(3):  # B = C A
        for j in range(3):
            out[i, 3 + j] = c[i, 0] * out[0, j] + c[i, 1] * out[1, j] + c[i, 2] * out[2, j]


@kernel
def _frame_term(
    joint_jacobians: np.ndarray,
    frame: np.ndarray,
    target: np.ndarray,
    feedforward: np.ndarray,
    support: np.ndarray,
    cost: np.ndarray,
    gain: float,
    dt: float,
    H: np.ndarray,
    c: np.ndarray,
    rows: np.ndarray,
) -> None:
    """Add one frame task's 1/2 ||W (Jlog6 J_local dq + (k dt) e)||^2 to (H, c).

    pink's Jacobian is -Jlog6 J_local and its error vector -e; the product (W(-J))^T W(-(k dt)
    e) is that of W J and W (k dt) e, which is computed here. ``rows`` (6, nv): scratch.
    """
    scratch = np.empty((3, 4))
    rf = frame[:3, :3]
    pf = frame[:3, 3]
    rt = target[:3, :3]
    pt = np.empty(3)
    step_gain = min(1.0, gain * dt)
    moving = feedforward[0] != 0.0 or feedforward[1] != 0.0 or feedforward[2] != 0.0
    scale = max(gain, 1e-9)
    for i in range(3):
        pt[i] = target[i, 3] + feedforward[i] / scale if moving else target[i, 3]
    # error = log6(frame^-1 target): (rf^T rt, rf^T (pt - pf)).
    m = np.empty((3, 3))
    mp = np.empty(3)
    d = np.empty(3)
    for i in range(3):
        d[i] = pt[i] - pf[i]
    for i in range(3):
        for j in range(3):
            m[i, j] = rf[0, i] * rt[0, j] + rf[1, i] * rt[1, j] + rf[2, i] * rt[2, j]
        mp[i] = rf[0, i] * d[0] + rf[1, i] * d[1] + rf[2, i] * d[2]
    error = np.empty(6)
    _log6(m, mp, error, scratch)
    # Jlog6(target^-1 frame): (rt^T rf, rt^T (pf - pt)) = (m^T, -m^T mp).
    mi = np.empty((3, 3))
    mip = np.empty(3)
    for i in range(3):
        for j in range(3):
            mi[i, j] = m[j, i]
        mip[i] = (
            rt[0, i] * (pf[0] - pt[0]) + rt[1, i] * (pf[1] - pt[1]) + rt[2, i] * (pf[2] - pt[2])
        )
    jlog = np.empty((6, 6))
    _jlog6(mi, mip, jlog, scratch)
    # W Jlog6 J_local on the support's columns (zero elsewhere); J_local = frame^-1 . J_world:
    # linear rf^T (v - pf x w), angular rf^T w.
    nv = joint_jacobians.shape[1]
    local = np.empty(6)
    for col in range(nv):
        if not support[col]:
            for i in range(6):
                rows[i, col] = 0.0
            continue
        v0 = joint_jacobians[0, col]
        v1 = joint_jacobians[1, col]
        v2 = joint_jacobians[2, col]
        w0 = joint_jacobians[3, col]
        w1 = joint_jacobians[4, col]
        w2 = joint_jacobians[5, col]
        l0 = v0 - (pf[1] * w2 - pf[2] * w1)
        l1 = v1 - (pf[2] * w0 - pf[0] * w2)
        l2 = v2 - (pf[0] * w1 - pf[1] * w0)
        for i in range(3):
            local[i] = rf[0, i] * l0 + rf[1, i] * l1 + rf[2, i] * l2
            local[3 + i] = rf[0, i] * w0 + rf[1, i] * w1 + rf[2, i] * w2
        for i in range(6):
            value = 0.0
            for k in range(6):
                value += jlog[i, k] * local[k]
            rows[i, col] = cost[i] * value
    weighted_error = np.empty(6)
    for i in range(6):
        weighted_error[i] = cost[i] * (-step_gain * error[i])
    _add_rows(rows, 6, weighted_error, support, H, c)


@kernel
def _add_rows(
    rows: np.ndarray,
    n: int,
    weighted_error: np.ndarray,
    support: np.ndarray,
    H: np.ndarray,
    c: np.ndarray,
) -> None:
    """H += X^T X, c += e^T X for X = rows[:n] (columns outside ``support`` are zero)."""
    nv = rows.shape[1]
    for a in range(nv):
        if not support[a]:
            continue
        value = 0.0
        for i in range(n):
            value += weighted_error[i] * rows[i, a]
        c[a] += value
        for b in range(a, nv):
            if not support[b]:
                continue
            value = 0.0
            for i in range(n):
                value += rows[i, a] * rows[i, b]
            H[a, b] += value
            if b != a:
                H[b, a] += value


@kernel
def build_ik_qp(
    joint_jacobians: np.ndarray,
    frames: np.ndarray,
    targets: np.ndarray,
    feedforward: np.ndarray,
    supports: np.ndarray,
    costs: np.ndarray,
    gains: np.ndarray,
    com: np.ndarray,
    com_jacobian: np.ndarray,
    q: np.ndarray,
    posture_target: np.ndarray,
    q_index: np.ndarray,
    limits: np.ndarray,
    limit_indices: np.ndarray,
    velocity_rows: np.ndarray,
    params: np.ndarray,
    differences: np.ndarray,
    H: np.ndarray,
    c: np.ndarray,
    h: np.ndarray,
    rows: np.ndarray,
) -> None:
    """The IK QP of pink (H, c, h) at q for a step of dt, written into ``H``, ``c``, ``h``.

    Args:
        joint_jacobians: (6, nv) Pinocchio's ``data.J`` at q (world frame, at its origin).
        frames: (nf, 4, 4) the frame tasks' placements at q (world).
        targets: (nf, 4, 4) their targets (world).
        feedforward: (nf, 3) their feed-forward velocities [m/s] (target p + v / max(k, 1e-9)
            when one is non-zero).
        supports: (nf + 1, nv) 1 on the columns of each frame's Jacobian (its parent joint's
            support); the last row all ones (the CoM's).
        costs: (nf + 1, 6) the tasks' costs; the last row's first three the CoM's.
        gains: (nf + 1,) the tasks' gains k [1/s] (pink's step gain is min(1, k dt)); the last
            the CoM's.
        com: (3, 3) rows: the CoM at q [m], its target [m] and the target's feed-forward
            velocity [m/s] (target + velocity / max(k, 1e-9)).
        com_jacobian: (3, nv) the CoM Jacobian at q.
        q: (nq,) configuration.
        posture_target: (nq,) the posture task's target.
        q_index: (nv,) the configuration index of each velocity (1-dof joints; -1: root).
        limits: (2, nq) upper and lower position limits.
        limit_indices: (k,) the velocity indices of the configuration limit's rows.
        velocity_rows: (m,) dt times the velocity limit of its rows.
        params: see the module's indices (:data:`DAMPING`, ...); HAS_COM 1.0: a CoM task;
            DIFFERENCES 1.0: ``differences`` (3, nv) hold q - q_posture, q_upper - q and
            q_lower - q (Pinocchio's ``difference``, given); 0.0: computed here from
            ``q_index`` (1-dof joints).
        differences: (3, nv) see ``params``.
        H: (nv, nv) out.
        c: (nv,) out.
        h: (2 k + 2 m,) out.
        rows: (6, nv) scratch.
    """
    nv = H.shape[0]
    damping, dt = params[DAMPING], params[DT]
    for i in range(nv):
        for j in range(nv):
            H[i, j] = 0.0
        H[i, i] = damping
        c[i] = 0.0
    n_frames = frames.shape[0]
    for k in range(n_frames):
        _frame_term(
            joint_jacobians, frames[k], targets[k], feedforward[k], supports[k], costs[k],
            gains[k], dt, H, c, rows,
        )  # fmt: skip
    if params[DIFFERENCES] == 0.0:
        for j in range(nv):
            index = q_index[j]
            if index >= 0:
                differences[0, j] = q[index] - posture_target[index]
                differences[1, j] = limits[0, index] - q[index]
                differences[2, j] = limits[1, index] - q[index]
    # Posture: e = q - q* on the joints (pink's), weight a scalar: diagonal terms only.
    cost = params[POSTURE_COST]
    posture_gain = min(1.0, params[POSTURE_GAIN] * dt)
    root = 0
    while root < nv and q_index[root] < 0:
        root += 1
    for j in range(root, nv):
        weighted = cost * (-posture_gain * differences[0, j])
        H[j, j] += cost * cost
        c[j] += -weighted * cost
    if params[HAS_COM] != 0.0:
        com_gain = params[COM_GAIN]
        step_gain = min(1.0, com_gain * dt)
        scale = max(com_gain, 1e-9)
        weighted_error = np.empty(3)
        com_cost = costs[n_frames]
        for i in range(3):
            target = com[1, i] + com[2, i] / scale
            weighted_error[i] = -(com_cost[i] * (-step_gain * (com[0, i] - target)))
            for j in range(nv):
                rows[i, j] = com_cost[i] * com_jacobian[i, j]
        _add_rows(rows, 3, weighted_error, supports[n_frames], H, c)
    limit_gain = params[LIMIT_GAIN]
    k = limit_indices.size
    for i in range(k):
        j = limit_indices[i]
        h[i] = limit_gain * differences[1, j]
        h[k + i] = -(limit_gain * differences[2, j])
    m = velocity_rows.size
    for i in range(m):
        h[2 * k + i] = velocity_rows[i]
        h[2 * k + m + i] = velocity_rows[i]


def warm_up() -> None:
    """Compile (or load from the cache) :func:`build_ik_qp` for the arrays the IK passes."""
    nv, nq, nf = 8, 9, 2
    jacobians = np.asfortranarray(np.ones((6, nv)))  # Pinocchio's data.J is column-major
    frames = np.tile(np.eye(4), (nf, 1, 1))
    targets = frames.copy()
    targets[:, 0, 3] = 0.1
    params = np.zeros(N_PARAMS)
    params[DT], params[HAS_COM], params[COM_GAIN] = 0.002, 1.0, 1.0
    q_index = np.full(nv, -1, dtype=np.int64)
    q_index[6:] = np.arange(7, nq)
    build_ik_qp(
        jacobians, frames, targets, np.zeros((nf, 3)), np.ones((nf + 1, nv), dtype=np.uint8),
        np.ones((nf + 1, 6)), np.ones(nf + 1), np.zeros((3, 3)), np.ones((3, nv)), np.zeros(nq),
        np.zeros(nq), q_index, np.zeros((2, nq)), np.arange(6, nv, dtype=np.int64),
        np.ones(nv - 6), params, np.zeros((3, nv)), np.empty((nv, nv)), np.empty(nv),
        np.empty(4 * (nv - 6)), np.empty((6, nv)),
    )  # fmt: skip
