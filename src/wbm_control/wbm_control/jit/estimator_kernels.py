r"""Compiled kernel of the base estimator's sample (issue 11).

:func:`estimate_base` does, in one call, the per-sample arithmetic and the sole bookkeeping of
:meth:`wbm_control.base_estimator.BaseEstimator.update` (the module docstring there gives the
method): the IMU orientation to the base quaternion and rotation, the soles' offsets, the F/T
wrenches about the base origin and the soles' normal forces, the loaded/armed/anchored soles
(hysteresis, the initial anchors), the base position, the joints' part of the IMU's and the
soles' velocities, the gyro to the base angular velocity, the least squares over the fixed
soles, the low-pass or complementary filter, and the estimate's q, v and world-origin wrenches.
Pinocchio's pass (``computeJointJacobians``, ``updateFramePlacements``) runs before it; the
flat-ground anchor height (numpy's products, at the rare anchoring events) after it.

Arithmetic: the Python float code it replaces (kept in tests/control/test_jit_estimator.py),
operation by operation in the same order (IEEE, no fastmath): bit-identical, except possibly
the joints' part of the velocities, which numpy computed as one matrix product (its sums in the
BLAS library's order) and this kernel as sums over the supporting joints in index order (a
fixed order: the result does not depend on memory alignment); measured bit-identical too, on
iCub and the G1 (random sequences and the regression sequence, the test's).

Cost (iCub, double support, the 2-core machine): ``BaseEstimator.update`` 62 -> 17 us in a
tight loop (the kernel's call 3.8 us, of which ~2.5 us is numba's dispatch of its arguments;
Pinocchio's pass 4 us; the buffer's concatenate 2 us); the controller step's estimator part
0.077-0.126 -> 0.031-0.046 ms (``wbm_benchmark_controller``, 6 alternations). Compiled cold in
~7 s, loaded from the cache in ~0.02 s (after numba's own start).

Layouts (all float64 unless said, C order unless said):

- ``placements`` (n, 12): frame placements in the base frame (the base at the origin), each
  row the rotation in column-major order (Eigen's storage: R[r, c] at r + 3 c) then the
  translation [m]: a view of Pinocchio's ``data.oMf`` (one SE3 is 12 doubles);
- ``frame_rows`` int64 (1 + n_soles + n_sensors,): the rows of the IMU, the soles (the
  config's order), the F/T sensors (the estimator's order) in ``placements``;
- ``inputs``: [base pose 7 (ignored) | q_j ndof | dq_j ndof | gyro 3 | IMU quaternion (x, y,
  z, w) 4 | accelerometer 3 | the sample's F/T wrenches 6 each (sensor axes, force then torque
  [N, N m]) in the readings' order]; its first nq entries are the configuration of Pinocchio's
  pass;
- ``state`` (21,): [has_last, last_time [s], last base rotation 9 (rows), last base linear
  velocity 3 (base axes) [m/s], last base position 3 [m], has_imu_velocity, filtered IMU
  origin velocity 3 (world axes) [m/s]];
- ``flags`` int64 (n_soles, 2): loaded, armed; ``anchors`` (n_soles, 3): the loaded soles'
  world positions [m].
"""

from __future__ import annotations

import math

import numpy as np

from wbm_control.jit import kernel

#: Bits of :func:`estimate_base`'s status: the soles fixed in the estimate (bit i: sole i) are
#: ``(status >> FIXED_SHIFT) & SOLE_MASK``, those anchored in this sample ``status >> NEW_SHIFT``.
NOT_FINITE = 1  # an input is not finite: nothing was changed
NEW_ANCHORS = 4  # a sole was anchored in this sample
FIXED_SHIFT = 8
NEW_SHIFT = 32
SOLE_MASK = (1 << (NEW_SHIFT - FIXED_SHIFT)) - 1

STATE_SIZE = 21


@kernel
def _unit_quaternion_of_rotation(
    m00: float,
    m01: float,
    m02: float,
    m10: float,
    m11: float,
    m12: float,
    m20: float,
    m21: float,
    m22: float,
) -> tuple[float, float, float, float]:
    """:func:`wbm_control.small_linalg.unit_quaternion_of_rotation`, the same operations."""
    t = m00 + (m11 + m22)
    if t > 0.0:
        t = math.sqrt(t + 1.0)
        w = 0.5 * t
        t = 0.5 / t
        x, y, z = (m21 - m12) * t, (m02 - m20) * t, (m10 - m01) * t
    else:
        m = np.empty((3, 3))
        m[0, 0], m[0, 1], m[0, 2] = m00, m01, m02
        m[1, 0], m[1, 1], m[1, 2] = m10, m11, m12
        m[2, 0], m[2, 1], m[2, 2] = m20, m21, m22
        i = 1 if m11 > m00 else 0
        if m22 > m[i, i]:
            i = 2
        j, k = (i + 1) % 3, (i + 2) % 3
        t = math.sqrt(m[i, i] - m[j, j] - m[k, k] + 1.0)
        c = np.zeros(3)
        c[i] = 0.5 * t
        t = 0.5 / t
        w = (m[k, j] - m[j, k]) * t
        c[j] = (m[j, i] + m[i, j]) * t
        c[k] = (m[k, i] + m[i, k]) * t
        x, y, z = c[0], c[1], c[2]
    squared = (x * x + z * z) + (y * y + w * w)
    if squared > 0.0:
        n = math.sqrt(squared)
        return x / n, y / n, z / n, w / n
    return x, y, z, w


@kernel
def _has_accelerometer(inputs: np.ndarray, start: int) -> bool:
    """Whether the accelerometer's 3 values from ``start`` are finite and not all zero."""
    finite = True
    nonzero = False
    for i in range(start, start + 3):
        finite = finite and math.isfinite(inputs[i])
        nonzero = nonzero or inputs[i] != 0.0
    return finite and nonzero


@kernel
def estimate_base(
    placements: np.ndarray,
    frame_rows: np.ndarray,
    jacobians: np.ndarray,
    supports: np.ndarray,
    inputs: np.ndarray,
    wrench_sensors: np.ndarray,
    sole_rows: np.ndarray,
    loads: np.ndarray,
    load_known: np.ndarray,
    initial: np.ndarray,
    initial_position: np.ndarray,
    gravity: np.ndarray,
    state: np.ndarray,
    flags: np.ndarray,
    anchors: np.ndarray,
    q: np.ndarray,
    v: np.ndarray,
    world: np.ndarray,
    still: np.ndarray,
    forces: np.ndarray,
    work: np.ndarray,
    time: float,
    load_threshold: float,
    unload_threshold: float,
    cutoff: float,
    accelerometer: bool,
) -> int:
    """One sample of the base estimator (module docstring; the state updated in place).

    Args:
        placements: The frame placements (module docstring).
        frame_rows: Their rows of the IMU, the soles, the sensors (module docstring).
        jacobians: Pinocchio's ``data.J`` (6 x nv, F order) of the pass at the base origin.
        supports: (ndof, 1 + n_soles): 1.0 where a joint moves the IMU's (column 0) or a
            sole's link, else 0.0.
        wrench_sensors: int64 (k,): the sensor (index into the sensors' rows) of each of the
            sample's wrenches.
        sole_rows: int64 (n_soles,): the sample's wrench (index into ``wrench_sensors``) read
            by each sole's F/T sensor, -1 for none (no sensor, or none in the sample).
        loads: (n_soles,): loads [N] from another source (soles without an F/T sensor).
        load_known: int64 (n_soles,): 1 where ``loads`` holds a load.
        initial: int64: the soles anchored at start, the initial sole first.
        initial_position: (3,): the initial sole's world position at start [m].
        gravity: (3,) [m/s^2], world axes.
        inputs: The sample's readings (module docstring).
        state: The filter's state (module docstring), updated.
        flags: The soles' loaded and armed flags (module docstring), updated.
        anchors: The soles' anchors (module docstring), updated.
        q: (nq,): the estimate's configuration, written.
        v: (nv,): the estimate's velocity, written.
        world: (k x 6): the sample's wrenches about the world origin, world axes, written.
        still: (3,): the base linear velocity [m/s] (base axes) holding the fixed soles still,
            written when there are fixed soles.
        forces: (n_soles,): the soles' normal forces [N] (those with a load), written.
        work: (2 n_soles + 1 + n_sensors, 6): scratch.
        time: The sample's time [s].
        load_threshold: Normal force above which a sole becomes loaded [N].
        unload_threshold: Normal force below which a loaded, armed sole is released [N].
        cutoff: The velocity filter's cut-off [Hz]; 0.0: none.
        accelerometer: Whether the filter is complementary with the accelerometer.

    Returns:
        The status: the bits above (arrays returned by a kernel cost ~1 us each to box:
        the outputs are the caller's).
    """
    nq = jacobians.shape[1] + 1
    ndof = nq - 7
    n_soles = flags.shape[0]
    k = wrench_sensors.shape[0]
    i_dq = nq
    i_gyro = nq + ndof
    i_quat = i_gyro + 3
    i_acc = i_quat + 4
    i_wrench = i_acc + 3
    # Finite inputs: joint positions and velocities, gyro, the wrenches.
    for i in range(7, i_quat):
        if not math.isfinite(inputs[i]):
            return NOT_FINITE
    for i in range(i_wrench, i_wrench + 6 * k):
        if not math.isfinite(inputs[i]):
            return NOT_FINITE
    status = 0

    # Orientation: R_world_base = R_world_imu R_base_imu^T, through the unit quaternion.
    imu = frame_rows[0]
    b00, b10, b20 = placements[imu, 0], placements[imu, 1], placements[imu, 2]
    b01, b11, b21 = placements[imu, 3], placements[imu, 4], placements[imu, 5]
    b02, b12, b22 = placements[imu, 6], placements[imu, 7], placements[imu, 8]
    x, y, z, w = inputs[i_quat], inputs[i_quat + 1], inputs[i_quat + 2], inputs[i_quat + 3]
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    a00, a01, a02 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    a10, a11, a12 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    a20, a21, a22 = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    qx, qy, qz, qw = _unit_quaternion_of_rotation(
        a00 * b00 + a01 * b01 + a02 * b02,
        a00 * b10 + a01 * b11 + a02 * b12,
        a00 * b20 + a01 * b21 + a02 * b22,
        a10 * b00 + a11 * b01 + a12 * b02,
        a10 * b10 + a11 * b11 + a12 * b12,
        a10 * b20 + a11 * b21 + a12 * b22,
        a20 * b00 + a21 * b01 + a22 * b02,
        a20 * b10 + a21 * b11 + a22 * b12,
        a20 * b20 + a21 * b21 + a22 * b22,
    )
    tx, ty, tz = 2.0 * qx, 2.0 * qy, 2.0 * qz
    twx, twy, twz = tx * qw, ty * qw, tz * qw
    txx, txy, txz = tx * qx, ty * qx, tz * qx
    tyy, tyz, tzz = ty * qy, tz * qy, tz * qz
    r00, r01, r02 = 1.0 - (tyy + tzz), txy - twz, txz + twy
    r10, r11, r12 = txy + twz, 1.0 - (txx + tzz), tyz - twx
    r20, r21, r22 = txz - twy, tyz + twx, 1.0 - (txx + tyy)

    # The soles' positions in the base (base axes) and their offsets from the base origin
    # (world axes).
    offsets = work[:n_soles, :3]
    for i in range(n_soles):
        row = frame_rows[1 + i]
        t0, t1, t2 = placements[row, 9], placements[row, 10], placements[row, 11]
        offsets[i, 0] = r00 * t0 + r01 * t1 + r02 * t2
        offsets[i, 1] = r10 * t0 + r11 * t1 + r12 * t2
        offsets[i, 2] = r20 * t0 + r21 * t1 + r22 * t2

    # The F/T wrenches about the base origin, world axes: f = R_s f_s, m = R_s m_s + p_s x f,
    # R_s = R R_sb, p_s = R p_sb.
    at_base = work[2 * n_soles + 1 :]
    for r in range(k):
        row = frame_rows[1 + n_soles + wrench_sensors[r]]
        c00, c10, c20 = placements[row, 0], placements[row, 1], placements[row, 2]
        c01, c11, c21 = placements[row, 3], placements[row, 4], placements[row, 5]
        c02, c12, c22 = placements[row, 6], placements[row, 7], placements[row, 8]
        t0, t1, t2 = placements[row, 9], placements[row, 10], placements[row, 11]
        s00 = r00 * c00 + r01 * c10 + r02 * c20
        s01 = r00 * c01 + r01 * c11 + r02 * c21
        s02 = r00 * c02 + r01 * c12 + r02 * c22
        s10 = r10 * c00 + r11 * c10 + r12 * c20
        s11 = r10 * c01 + r11 * c11 + r12 * c21
        s12 = r10 * c02 + r11 * c12 + r12 * c22
        s20 = r20 * c00 + r21 * c10 + r22 * c20
        s21 = r20 * c01 + r21 * c11 + r22 * c21
        s22 = r20 * c02 + r21 * c12 + r22 * c22
        p0 = r00 * t0 + r01 * t1 + r02 * t2
        p1 = r10 * t0 + r11 * t1 + r12 * t2
        p2 = r20 * t0 + r21 * t1 + r22 * t2
        base = i_wrench + 6 * r
        f0, f1, f2 = inputs[base], inputs[base + 1], inputs[base + 2]
        m0, m1, m2 = inputs[base + 3], inputs[base + 4], inputs[base + 5]
        g0 = s00 * f0 + s01 * f1 + s02 * f2
        g1 = s10 * f0 + s11 * f1 + s12 * f2
        g2 = s20 * f0 + s21 * f1 + s22 * f2
        at_base[r, 0], at_base[r, 1], at_base[r, 2] = g0, g1, g2
        at_base[r, 3] = s00 * m0 + s01 * m1 + s02 * m2 + (p1 * g2 - p2 * g1)
        at_base[r, 4] = s10 * m0 + s11 * m1 + s12 * m2 + (p2 * g0 - p0 * g2)
        at_base[r, 5] = s20 * m0 + s21 * m1 + s22 * m2 + (p0 * g1 - p1 * g0)

    # The soles' normal forces: their F/T sensor's, else the other source's.
    known = np.zeros(n_soles, dtype=np.bool_)
    for i in range(n_soles):
        if sole_rows[i] >= 0:
            forces[i] = at_base[sole_rows[i], 2]
            known[i] = True
        elif load_known[i]:
            forces[i] = loads[i]
            known[i] = True
        else:
            forces[i] = 0.0

    # Release the soles whose load dropped, then place the base on the soles still anchored,
    # then anchor the newly loaded soles where they are now.
    for i in range(n_soles):
        if not flags[i, 0] or not known[i]:
            continue
        if forces[i] > load_threshold:
            flags[i, 1] = 1
        if forces[i] < unload_threshold and flags[i, 1]:
            flags[i, 0] = 0
            flags[i, 1] = 0
    has_last = state[0] != 0.0
    any_loaded = False
    for i in range(n_soles):
        any_loaded = any_loaded or flags[i, 0] != 0
    if not any_loaded and not has_last:
        first = initial[0]
        x0 = initial_position[0] - offsets[first, 0]
        x1 = initial_position[1] - offsets[first, 1]
        x2 = initial_position[2] - offsets[first, 2]
        for j in range(initial.shape[0]):
            i = initial[j]
            anchors[i, 0] = x0 + offsets[i, 0]
            anchors[i, 1] = x1 + offsets[i, 1]
            anchors[i, 2] = x2 + offsets[i, 2]
            flags[i, 0] = 1
    l00, l01, l02 = state[2], state[3], state[4]
    l10, l11, l12 = state[5], state[6], state[7]
    l20, l21, l22 = state[8], state[9], state[10]
    u0, u1, u2 = state[11], state[12], state[13]
    dt = 0.0
    if has_last:
        last_time = state[1]
        dt = time - (last_time if last_time != 0.0 else time)
        dt = 0.0 if 0.0 > dt else dt
    weight_sum = p0 = p1 = p2 = 0.0
    anchored = 0
    for i in range(n_soles):
        if flags[i, 0]:
            anchored += 1
            weight = forces[i] if known[i] else 1.0
            weight = 1.0 if 1.0 > weight else weight
            weight_sum += weight
            p0 += weight * (anchors[i, 0] - offsets[i, 0])
            p1 += weight * (anchors[i, 1] - offsets[i, 1])
            p2 += weight * (anchors[i, 2] - offsets[i, 2])
    if anchored:
        p0, p1, p2 = p0 / weight_sum, p1 / weight_sum, p2 / weight_sum
    elif has_last:
        p0 = state[14] + dt * (l00 * u0 + l01 * u1 + l02 * u2)
        p1 = state[15] + dt * (l10 * u0 + l11 * u1 + l12 * u2)
        p2 = state[16] + dt * (l20 * u0 + l21 * u1 + l22 * u2)
    for i in range(n_soles):
        if not known[i] or forces[i] <= load_threshold:
            continue
        flags[i, 1] = 1
        if not flags[i, 0]:
            flags[i, 0] = 1
            anchors[i, 0] = p0 + offsets[i, 0]
            anchors[i, 1] = p1 + offsets[i, 1]
            anchors[i, 2] = p2 + offsets[i, 2]
            status |= NEW_ANCHORS | (1 << (NEW_SHIFT + i))

    # The IMU's and the soles' spatial velocities from the joints (base at rest), about the
    # base origin, base axes: (v_O, w) each; J: world axes = base axes at the base origin.
    n_frames = supports.shape[1]
    motions = work[n_soles : n_soles + n_frames]
    motions[:, :] = 0.0
    for f in range(n_frames):
        for j in range(ndof):
            if supports[j, f] != 0.0:
                dq = inputs[i_dq + j]
                for r in range(6):
                    motions[f, r] += jacobians[r, 6 + j] * dq
    # The gyro reads R_base_imu^T (w_b + w_imu) (IMU axes): w_b = R_base_imu gyro - w_imu.
    g0, g1, g2 = inputs[i_gyro], inputs[i_gyro + 1], inputs[i_gyro + 2]
    w0 = (b00 * g0 + b01 * g1 + b02 * g2) - motions[0, 3]
    w1 = (b10 * g0 + b11 * g1 + b12 * g2) - motions[0, 4]
    w2 = (b20 * g0 + b21 * g1 + b22 * g2) - motions[0, 5]
    fixed_mask = 0
    count = 0
    for i in range(n_soles):
        if flags[i, 0]:
            fixed_mask |= 1 << i
            count += 1
    if count:
        # Least squares over the fixed soles: v_b minus the mean of the soles' velocities with
        # the base translation still, v_O,i + (w_b + w_i) x p_i.
        s0 = s1 = s2 = 0.0
        for i in range(n_soles):
            if not flags[i, 0]:
                continue
            row = frame_rows[1 + i]
            t0, t1, t2 = placements[row, 9], placements[row, 10], placements[row, 11]
            c0, c1, c2 = w0 + motions[1 + i, 3], w1 + motions[1 + i, 4], w2 + motions[1 + i, 5]
            s0 += motions[1 + i, 0] + (c1 * t2 - c2 * t1)
            s1 += motions[1 + i, 1] + (c2 * t0 - c0 * t2)
            s2 += motions[1 + i, 2] + (c0 * t1 - c1 * t0)
        kf = float(count)
        v0, v1, v2 = -s0 / kf, -s1 / kf, -s2 / kf
        still[0], still[1], still[2] = v0, v1, v2
    elif has_last:
        # The last world velocity in the base axes now: R^T (R_last v_last).
        c0 = l00 * u0 + l01 * u1 + l02 * u2
        c1 = l10 * u0 + l11 * u1 + l12 * u2
        c2 = l20 * u0 + l21 * u1 + l22 * u2
        v0 = r00 * c0 + r10 * c1 + r20 * c2
        v1 = r01 * c0 + r11 * c1 + r21 * c2
        v2 = r02 * c0 + r12 * c1 + r22 * c2
    else:
        v0 = v1 = v2 = 0.0

    # The IMU origin's velocity relative to the base origin, base axes.
    e0 = e1 = e2 = 0.0
    if accelerometer:
        imu_t0, imu_t1, imu_t2 = placements[imu, 9], placements[imu, 10], placements[imu, 11]
        c0, c1, c2 = w0 + motions[0, 3], w1 + motions[0, 4], w2 + motions[0, 5]
        e0 = motions[0, 0] + (c1 * imu_t2 - c2 * imu_t1)
        e1 = motions[0, 1] + (c2 * imu_t0 - c0 * imu_t2)
        e2 = motions[0, 2] + (c0 * imu_t1 - c1 * imu_t0)
    fused = (
        cutoff > 0.0 and accelerometer and state[17] != 0.0 and _has_accelerometer(inputs, i_acc)
    )
    if fused:
        # The complementary filter: the IMU origin's world velocity predicted from the
        # accelerometer, pulled towards the odometry's.
        h0, h1, h2 = v0 + e0, v1 + e1, v2 + e2
        o0 = r00 * h0 + r01 * h1 + r02 * h2
        o1 = r10 * h0 + r11 * h1 + r12 * h2
        o2 = r20 * h0 + r21 * h1 + r22 * h2
        dt_f = time - (state[1] if has_last else time)
        dt_f = 0.0 if 0.0 > dt_f else dt_f
        alpha = dt_f / (dt_f + 1.0 / (2.0 * np.pi * cutoff))
        f0, f1, f2 = inputs[i_acc], inputs[i_acc + 1], inputs[i_acc + 2]
        h0 = b00 * f0 + b01 * f1 + b02 * f2  # base axes
        h1 = b10 * f0 + b11 * f1 + b12 * f2
        h2 = b20 * f0 + b21 * f1 + b22 * f2
        y0, y1, y2 = state[18], state[19], state[20]
        y0 += dt_f * ((r00 * h0 + r01 * h1 + r02 * h2) + gravity[0])
        y1 += dt_f * ((r10 * h0 + r11 * h1 + r12 * h2) + gravity[1])
        y2 += dt_f * ((r20 * h0 + r21 * h1 + r22 * h2) + gravity[2])
        y0, y1, y2 = y0 + alpha * (o0 - y0), y1 + alpha * (o1 - y1), y2 + alpha * (o2 - y2)
        state[18], state[19], state[20] = y0, y1, y2
        v0 = (r00 * y0 + r10 * y1 + r20 * y2) - e0
        v1 = (r01 * y0 + r11 * y1 + r21 * y2) - e1
        v2 = (r02 * y0 + r12 * y1 + r22 * y2) - e2
    elif cutoff > 0.0 and has_last:
        alpha = dt / (dt + 1.0 / (2.0 * np.pi * cutoff))
        c0 = l00 * u0 + l01 * u1 + l02 * u2  # the last estimate's, world axes
        c1 = l10 * u0 + l11 * u1 + l12 * u2
        c2 = l20 * u0 + l21 * u1 + l22 * u2
        f0 = c0 + alpha * ((r00 * v0 + r01 * v1 + r02 * v2) - c0)
        f1 = c1 + alpha * ((r10 * v0 + r11 * v1 + r12 * v2) - c1)
        f2 = c2 + alpha * ((r20 * v0 + r21 * v1 + r22 * v2) - c2)
        v0 = r00 * f0 + r10 * f1 + r20 * f2
        v1 = r01 * f0 + r11 * f1 + r21 * f2
        v2 = r02 * f0 + r12 * f1 + r22 * f2
    if accelerometer and not fused:  # where the next fused sample starts from
        h0, h1, h2 = v0 + e0, v1 + e1, v2 + e2
        state[18] = r00 * h0 + r01 * h1 + r02 * h2
        state[19] = r10 * h0 + r11 * h1 + r12 * h2
        state[20] = r20 * h0 + r21 * h1 + r22 * h2
        state[17] = 1.0

    # The estimate.
    q[0], q[1], q[2], q[3], q[4], q[5], q[6] = p0, p1, p2, qx, qy, qz, qw
    v[0], v[1], v[2], v[3], v[4], v[5] = v0, v1, v2, w0, w1, w2
    for j in range(ndof):
        q[7 + j] = inputs[7 + j]
        v[6 + j] = inputs[i_dq + j]
    for r in range(k):
        f0, f1, f2 = at_base[r, 0], at_base[r, 1], at_base[r, 2]
        world[r, 0], world[r, 1], world[r, 2] = f0, f1, f2
        world[r, 3] = at_base[r, 3] + (p1 * f2 - p2 * f1)
        world[r, 4] = at_base[r, 4] + (p2 * f0 - p0 * f2)
        world[r, 5] = at_base[r, 5] + (p0 * f1 - p1 * f0)
    state[0], state[1] = 1.0, time
    state[2], state[3], state[4] = r00, r01, r02
    state[5], state[6], state[7] = r10, r11, r12
    state[8], state[9], state[10] = r20, r21, r22
    state[11], state[12], state[13] = v0, v1, v2
    state[14], state[15], state[16] = p0, p1, p2
    return status | (fixed_mask << FIXED_SHIFT)


_warmed_up = False


def warm_up() -> None:
    """Compile (or load from the cache) the kernel for the estimator's argument types.

    The types are those :meth:`~wbm_control.base_estimator.BaseEstimator.update` passes: C
    arrays (float64; int64 for the indices and flags), writable, 1-D or 2-D, except Pinocchio's
    ``data.J``, a writable F-order 2-D array; floats and a bool. Once per process.
    """
    global _warmed_up
    if _warmed_up:
        return
    ndof, n_soles, n_sensors = 1, 2, 2
    nq = 7 + ndof
    placements = np.zeros((1 + n_soles + n_sensors, 12))
    placements[:, [0, 4, 8]] = 1.0
    inputs = np.zeros(nq + ndof + 10 + 6 * n_sensors)
    inputs[6] = inputs[nq + ndof + 6] = 1.0  # unit quaternions
    inputs[nq + ndof + 7 + 2] = 9.81
    state = np.zeros(STATE_SIZE)
    for time in (0.0, 0.002):
        estimate_base(
            placements,
            np.arange(1 + n_soles + n_sensors, dtype=np.int64),
            np.zeros((6, nq - 1), order="F"),
            np.ones((ndof, 1 + n_soles)),
            inputs,
            np.arange(n_sensors, dtype=np.int64),
            np.arange(n_soles, dtype=np.int64),
            np.zeros(n_soles),
            np.zeros(n_soles, dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            np.zeros(3),
            np.array([0.0, 0.0, -9.81]),
            state,
            np.zeros((n_soles, 2), dtype=np.int64),
            np.zeros((n_soles, 3)),
            np.empty(nq),
            np.empty(nq - 1),
            np.empty((n_sensors, 6)),
            np.empty(3),
            np.empty(n_soles),
            np.empty((2 * n_soles + 1 + n_sensors, 6)),
            time,
            40.0,
            20.0,
            10.0,
            True,
        )
    _warmed_up = True
