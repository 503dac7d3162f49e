"""Base state estimation from what a real robot has: IMU and leg kinematics.

- Orientation: the IMU's orientation in the world composed with the IMU's placement in the base
  from joint kinematics, R_world_base = R_world_imu R_base_imu(q_j)^T.
- Angular velocity: the gyro reads omega_imu = R_base_imu^T omega_base + J_omega,joints dq (IMU
  axes), solved for omega_base (base axes).
- Position: a loaded sole (F/T normal force above a threshold) is assumed fixed at its anchor,
  the world position it had when it became loaded; the base position is the one that puts the
  loaded soles at their anchors (averaged, weighted by normal force).
- Linear velocity: the loaded soles' origins do not move, J_sole,lin v = 0, solved for the base
  linear velocity (least squares over the loaded soles). With ``velocity_cutoff`` it is filtered:
  a first-order low-pass, or with ``accelerometer`` a complementary filter with the
  accelerometer (the odometry's low frequencies, the accelerometer's high ones: no lag).

No ground truth is used. Before any foot is loaded the reference sole (``initial_sole``) is
anchored at ``initial_sole_position`` (default the world origin, where wbm puts the world frame).

Known flat ground (``flat_ground``, off by default): the ground is the horizontal plane at the
height of ``initial_sole_position``. A newly loaded sole is anchored where the estimate puts it,
except its height: the sole's lowest corner is put on that plane (a sole loaded on flat ground
touches it there, flat or rolled on an edge). Only the height; only when the estimate puts that
corner within ``ground_tolerance`` of the plane: a sole on a step or an obstacle farther off is
anchored where the estimate puts it, as without the setting (ground that departs from the plane
by less is taken as the plane: the setting is for flat ground). Why: a sole is anchored when its
load first crosses ``load_threshold``, a fraction of the weight; a ground that gives under load
(any real or simulated contact) lets it sink further as the weight comes onto it, and the
estimator, taking the sole as fixed, rises at every step by the difference of the depths of the
two soles when the new one is anchored (the old one has begun to rise): a ratchet the
kinematics cannot see. Measured on the G1 walking 0.8 m at 0.12 m/s in torque mode (0.5 ms
engine step): the new sole anchored at ~45 N sank a further 1.1 mm under the full load on
MuJoCo (its soft contact), 0.5 mm on wbm's compliant ground, and the estimate's height rose
0.9 / 0.45 mm a step (9.8 mm after 10 steps on MuJoCo; 0.9 mm with ``flat_ground``). On the
plane the height error stays the depth under the present load instead of a sum over the steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_control.small_linalg import (
    Rows3,
    rotation_of_unit_quaternion,
    unit_quaternion_of_rotation,
)
from wbm_description.robot_io import RobotReadings
from wbm_description.whole_body_model import WholeBodyModel


@dataclass(frozen=True)
class BaseEstimate:
    """The estimated state, in Pinocchio's layout.

    Attributes:
        q: Configuration (base pose in the world, joint positions) (nq,).
        v: Velocity (base twist in base axes, joint velocities) (nv,).
        loaded_soles: Sole names assumed fixed in this estimate.
        foot_wrenches_world: F/T sensor name to ground-on-foot wrench about the world origin.
        normal_forces: Sole name to normal force [N] from its F/T sensor.
        still_base_velocity: The base linear velocity (3,) [m/s], base axes, that holds the
            loaded soles still (the least squares before the low-pass filter; ``v[:3]``
            without ``velocity_cutoff``), None without loaded soles or when unknown.
    """

    q: np.ndarray
    v: np.ndarray
    loaded_soles: tuple[str, ...]
    foot_wrenches_world: dict[str, np.ndarray]
    normal_forces: dict[str, float]
    still_base_velocity: np.ndarray | None = None


class BaseEstimator:
    """IMU + leg-kinematics base estimator (see the module docstring).

    Args:
        model: The whole-body model (floating base).
        load_threshold: Normal force above which a sole becomes loaded [N].
        unload_threshold: Normal force below which a loaded sole is released [N] (hysteresis).
        initial_sole: Sole anchored at start; default the one on the world reference link.
        initial_sole_position: Its world position at start [m].
        initial_soles: Other soles also anchored at start, where the kinematics put them
            relative to ``initial_sole`` (a robot that starts standing on them).

        velocity_cutoff: Cut-off frequency [Hz] of a first-order low-pass filter on the base
            linear velocity (world axes); None: unfiltered. Soles on a compliant ground are not
            perfectly fixed: the filter keeps their vibration out of the estimate.
        accelerometer: With ``velocity_cutoff``, make the filter complementary: the
            IMU origin's velocity is predicted by integrating the accelerometer (its proper
            acceleration in world axes plus gravity) and pulled towards the leg odometry's at
            the cut-off, so the filter passes the odometry's low frequencies and the
            accelerometer's high ones without the first-order filter's lag (1 / (2 pi f_c):
            16 ms at 10 Hz; the G1's CoM velocity lagged the truth by ~22 ms, which kept its
            lateral sway shifted to the side of its first step). The base velocity then follows
            from the IMU's (the gyro's angular velocity and the joints'). A reading without an
            accelerometer (not finite, or exactly zero: what an IMU message without one is
            converted to) and the first sample take the first-order filter.
        flat_ground: Whether the ground is known flat and level at the height of
            ``initial_sole_position``: newly loaded soles are anchored on it (module docstring).
        ground_tolerance: With ``flat_ground``, a sole whose lowest corner the estimate puts
            farther than this from the ground plane is anchored where the estimate puts it [m].

    A sole anchored at start is released only after its load has once exceeded
    ``load_threshold`` (the first samples of a robot put down on the ground read no load).
    """

    def __init__(
        self,
        model: WholeBodyModel,
        *,
        load_threshold: float = 40.0,
        unload_threshold: float = 20.0,
        initial_sole: str | None = None,
        initial_sole_position: np.ndarray | None = None,
        initial_soles: tuple[str, ...] = (),
        velocity_cutoff: float | None = None,
        flat_ground: bool = False,
        ground_tolerance: float = 0.01,
        accelerometer: bool = False,
    ):
        config = model.config
        if not config.floating_base:
            raise InputError("model", "a floating-base model", config.name)
        if config.imu_frame is None:
            raise InputError("model", "a robot config with an IMU frame", config.name)
        if not unload_threshold <= load_threshold:
            raise InputError(
                "unload_threshold",
                f"at most load_threshold ({load_threshold} N)",
                unload_threshold,
            )
        self.model = model
        self.pin_model = model.model
        self.data = model.model.createData()
        self.load_threshold = float(load_threshold)
        self.unload_threshold = float(unload_threshold)
        self.imu_frame_id = model.frame_id(config.imu_frame)
        self.sole_frame_ids = {sole.name: model.frame_id(sole.frame) for sole in config.soles}
        # Each sole's F/T sensor: the sensor on the same joint (body) as the sole frame.
        frames = self.pin_model.frames
        self.sensor_of_sole: dict[str, str] = {}
        self.sensor_frame_ids: dict[str, int] = {}
        for sensor in config.ft_sensors:
            sensor_id = model.frame_id(sensor.frame)
            self.sensor_frame_ids[sensor.name] = sensor_id
            for sole, sole_id in self.sole_frame_ids.items():
                if frames[sole_id].parentJoint == frames[sensor_id].parentJoint:
                    self.sensor_of_sole[sole] = sensor.name
        if initial_sole is None:
            matches = [s.name for s in config.soles if s.frame == config.world_reference_link]
            initial_sole = matches[0] if matches else config.soles[0].name
        if initial_sole not in self.sole_frame_ids:
            raise InputError("initial_sole", f"one of {list(self.sole_frame_ids)}", initial_sole)
        self.initial_sole = initial_sole
        for name in initial_soles:
            if name not in self.sole_frame_ids:
                raise InputError("initial_soles", f"names among {list(self.sole_frame_ids)}", name)
        self.initial_soles = tuple(initial_soles)
        if velocity_cutoff is not None and not velocity_cutoff > 0.0:
            raise InputError(
                "velocity_cutoff", "a positive frequency [Hz] or None", velocity_cutoff
            )
        self.velocity_cutoff = velocity_cutoff
        self.accelerometer = bool(accelerometer)
        self._gravity = np.asarray(self.pin_model.gravity.linear, dtype=float).copy()
        if not (np.isfinite(ground_tolerance) and ground_tolerance >= 0.0):
            raise InputError("ground_tolerance", "a finite distance >= 0 [m]", ground_tolerance)
        self.flat_ground = bool(flat_ground)
        self.ground_tolerance = float(ground_tolerance)
        # Each sole's corners in its frame (4 x 3) [m], for the lowest one on flat ground.
        self.sole_corners = {sole.name: sole.corners() for sole in config.soles}
        self._q_base_frame = pin.neutral(self.pin_model)  # base at the origin, identity
        # Per-sample constants. The sole names in the config's order.
        self._soles = tuple(self.sole_frame_ids)
        # Views into self.data's placements (Pinocchio's own memory, read in place; self.data is
        # this estimator's and never resized, so they stay valid and show each pass's values):
        # the IMU's rotation and the soles' and sensors' placements in the base frame.
        oMf = self.data.oMf
        self._imu_rotation_view = oMf[self.imu_frame_id].rotation
        self._imu_translation_view = oMf[self.imu_frame_id].translation
        self._sole_translation_views = tuple(
            oMf[self.sole_frame_ids[s]].translation for s in self._soles
        )
        self._sensor_views = {
            name: (oMf[frame_id].rotation, oMf[frame_id].translation)
            for name, frame_id in self.sensor_frame_ids.items()
        }
        # The joints' columns of the joint Jacobians (world axes, which are the base axes at the
        # base origin; a view of self.data.J) and, for the IMU then each sole, the joints that
        # move it (its parent joint's support), as 0/1 columns: one product gives the spatial
        # velocity each of them has from the joints (:meth:`_joint_velocities`).
        self._nq, self._nv = self.pin_model.nq, self.pin_model.nv
        self._ndof = self._nv - 6
        self._joint_jacobians = self.data.J[:, 6:]
        frame_ids = (self.imu_frame_id, *(self.sole_frame_ids[s] for s in self._soles))
        self._supports = np.zeros((self._ndof, len(frame_ids)))
        for column, frame_id in enumerate(frame_ids):
            for joint in self.pin_model.supports[frames[frame_id].parentJoint]:
                start = self.pin_model.joints[joint].idx_v - 6
                if start >= 0:
                    self._supports[start : start + self.pin_model.joints[joint].nv, column] = 1.0
        self._loaded_soles_names: dict[tuple[int, ...], tuple[str, ...]] = {}
        self.initial_sole_position = (
            np.zeros(3)
            if initial_sole_position is None
            else np.asarray(initial_sole_position, dtype=float)
        )
        self.reset()

    def reset(self, anchors: Mapping[str, np.ndarray] | None = None) -> None:
        """Forget the state; optionally give the soles' world positions to anchor them at."""
        # World positions [m] as float triples (the update's arithmetic is on floats).
        self._anchors: dict[str, tuple[float, ...]] = {
            k: tuple(np.asarray(p, dtype=float).tolist()) for k, p in (anchors or {}).items()
        }
        self._loaded: set[str] = set(self._anchors)
        self._armed: set[str] = set(self._anchors)  # may be released when their load drops
        self._last: BaseEstimate | None = None
        self._last_rotation: Rows3 | None = None  # base rotation of self._last (rows)
        self._last_linear: tuple[float, float, float] | None = None  # self._last.v[:3] [m/s]
        self._last_time: float | None = None
        # Filtered IMU origin velocity, world axes [m/s].
        self._imu_velocity: tuple[float, float, float] | None = None

    @property
    def anchors(self) -> dict[str, np.ndarray]:
        """Sole name to the world position it is assumed fixed at (loaded soles only)."""
        return {k: np.array(v, dtype=float) for k, v in self._anchors.items()}

    def _kinematics_in_base(self, q_joints: np.ndarray) -> None:
        """One pass at the base placed at the origin with identity orientation.

        Placements, velocities and Jacobians of the robot with its base rotated by R follow from
        these by a rotation (Pinocchio's base twist is in base axes): the estimator needs no
        second kinematics pass once it knows R.
        """
        q = self._q_base_frame
        q[7:] = q_joints
        pin.computeJointJacobians(self.pin_model, self.data, q)
        pin.updateFramePlacements(self.pin_model, self.data)

    def _orientation(self, readings: RobotReadings) -> tuple[tuple[float, ...], Rows3]:
        """R_world_base from the IMU and the joint kinematics (of :meth:`_kinematics_in_base`).

        Returns:
            (the unit quaternion (x, y, z, w), its rotation matrix by rows): the product
            R_world_imu R_base_imu^T, re-orthonormalized by its conversion to a quaternion and
            normalization (the IMU quaternion is normalized: rounding only; a 3 x 3 SVD costs
            more than the rest of this function), then the rotation of that quaternion, as the
            free-flyer joint has it. Pinocchio's conversions written out on floats
            (:func:`~wbm_control.small_linalg.unit_quaternion_of_rotation`).
        """
        (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = self._imu_rotation_view.tolist()
        x, y, z, w = readings.imu.orientation_xyzw.tolist()
        n = math.sqrt(x * x + y * y + z * z + w * w)
        x, y, z, w = x / n, y / n, z / n, w / n
        # R_world_imu (small_linalg.rotation_from_quaternion_xyzw's formula).
        a00, a01, a02 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
        a10, a11, a12 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
        a20, a21, a22 = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
        quaternion = unit_quaternion_of_rotation(
            (
                (
                    a00 * b00 + a01 * b01 + a02 * b02,
                    a00 * b10 + a01 * b11 + a02 * b12,
                    a00 * b20 + a01 * b21 + a02 * b22,
                ),
                (
                    a10 * b00 + a11 * b01 + a12 * b02,
                    a10 * b10 + a11 * b11 + a12 * b12,
                    a10 * b20 + a11 * b21 + a12 * b22,
                ),
                (
                    a20 * b00 + a21 * b01 + a22 * b02,
                    a20 * b10 + a21 * b11 + a22 * b12,
                    a20 * b20 + a21 * b21 + a22 * b22,
                ),
            )
        )
        return quaternion, rotation_of_unit_quaternion(*quaternion)

    def _checked_inputs(
        self, readings: RobotReadings
    ) -> tuple[np.ndarray, np.ndarray, list[float], list[tuple[str, list[float]]]]:
        """The readings the update uses, checked.

        Returns:
            (joint positions [rad] (ndof,), joint velocities [rad/s] (ndof,), as float arrays;
            gyro [rad/s] (IMU axes), 3 floats; the F/T readings of this estimator's sensors as
            (name, wrench: 6 floats [N, N m], sensor axes) in the readings' order).

        Raises:
            InputError: No IMU reading, or a reading of the wrong size or not finite (the first
                in the order joint positions, joint velocities, gyro, F/T sensors).
        """
        if readings.imu is None:
            raise InputError("readings.imu", "an IMU reading (the estimator needs it)")
        q_j = np.asarray(readings.joint_positions, dtype=float)
        dq_j = np.asarray(readings.joint_velocities, dtype=float)
        gyro = np.asarray(readings.imu.angular_velocity, dtype=float)
        sensors = self.sensor_frame_ids
        arrays = [
            (name, np.asarray(wrench, dtype=float))
            for name, wrench in readings.wrenches.items()
            if name in sensors
        ]
        ndof = self._ndof
        if q_j.shape == (ndof,) and dq_j.shape == (ndof,) and gyro.shape == (3,):
            # One finiteness test for all, on floats: a sum is finite when every term is (a sum
            # of finite values that overflows goes to the checks below, which let it through).
            rates = gyro.tolist()
            total = sum(q_j.tolist()) + sum(dq_j.tolist()) + sum(rates)
            wrenches = []
            for name, array in arrays:
                if array.shape != (6,):
                    break
                values = array.tolist()
                total += sum(values)
                wrenches.append((name, values))
            else:
                if math.isfinite(total):
                    return q_j, dq_j, rates, wrenches
        for name, value in (("joint_positions", q_j), ("joint_velocities", dq_j)):
            if value.shape != (ndof,) or not np.isfinite(value).all():
                raise InputError(f"readings.{name}", f"{ndof} finite values", value.shape)
        if gyro.shape != (3,) or not np.isfinite(gyro).all():
            raise InputError("readings.imu.angular_velocity", "3 finite values", gyro)
        for name, array in arrays:
            if array.shape != (6,) or not np.isfinite(array).all():
                raise InputError(f"wrenches[{name!r}]", "6 finite values", array)
        return q_j, dq_j, gyro.tolist(), [(name, array.tolist()) for name, array in arrays]

    def update(
        self, readings: RobotReadings, sole_loads: Mapping[str, float] | None = None
    ) -> BaseEstimate:
        """Estimate the base state from one sample of the robot's sensors.

        The per-sample arithmetic on 3-vectors and 3 x 3 matrices is written out on Python
        floats (numpy's call costs ten times that arithmetic at this size); the joints' part of
        the IMU's and the soles' velocities is one product (:meth:`_joint_velocities`).

        Args:
            readings: The robot's sensors.
            sole_loads: Sole name to its load (normal force) [N] from another source (the
                contact estimate, :mod:`wbm_control.contact_estimation`), used for the soles
                without an F/T sensor; an F/T reading wins where there is one.

        Raises:
            InputError: No IMU reading, or non-finite values.
        """
        q_j, dq_j, gyro, wrenches = self._checked_inputs(readings)
        self._kinematics_in_base(q_j)
        quaternion, rotation = self._orientation(readings)
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rotation
        # Sole positions relative to the base origin, world axes (base at the origin), and in
        # base axes (for the velocities), in the config's sole order.
        sole_in_base = [view.tolist() for view in self._sole_translation_views]
        offsets = [
            (
                r00 * t0 + r01 * t1 + r02 * t2,
                r10 * t0 + r11 * t1 + r12 * t2,
                r20 * t0 + r21 * t1 + r22 * t2,
            )
            for t0, t1, t2 in sole_in_base
        ]
        # The F/T wrenches about the base origin, world axes (normal forces: translation does
        # not change the world-axes force).
        wrenches_at_origin_base = self._sensor_wrenches(rotation, wrenches)
        normal_forces = {
            sole: wrenches_at_origin_base[sensor][2]
            for sole, sensor in self.sensor_of_sole.items()
            if sensor in wrenches_at_origin_base
        }
        if sole_loads:
            for sole, load in sole_loads.items():
                if sole not in self.sensor_of_sole:
                    normal_forces[sole] = float(load)

        # Release the soles whose load dropped (they may be moving already), then place the base
        # on the soles still anchored, then anchor the newly loaded soles where they are now.
        loaded, armed, anchors = self._loaded, self._armed, self._anchors
        for sole in list(loaded):
            force = normal_forces.get(sole)
            if force is None:
                continue
            if force > self.load_threshold:
                armed.add(sole)
            if force < self.unload_threshold and sole in armed:
                loaded.discard(sole)
                armed.discard(sole)
                anchors.pop(sole, None)
        if not anchors and self._last is None:
            x0, x1, x2 = self.initial_sole_position.tolist()
            o0, o1, o2 = offsets[self._soles.index(self.initial_sole)]
            x0, x1, x2 = x0 - o0, x1 - o1, x2 - o2  # the base position
            for sole in dict.fromkeys((self.initial_sole, *self.initial_soles)):
                o0, o1, o2 = offsets[self._soles.index(sole)]
                anchors[sole] = (x0 + o0, x1 + o1, x2 + o2)
                loaded.add(sole)
        last_linear = self._last_linear
        rotation_last = self._last_rotation  # the last estimate's base rotation
        dt = 0.0
        if self._last_time is not None:
            dt = max(readings.time - (self._last_time or readings.time), 0.0)
        # In the config's sole order, not the set's (string hashes vary between processes).
        anchored = [i for i, s in enumerate(self._soles) if s in loaded and s in anchors]
        if anchored:
            # The mean of the anchors minus the offsets, weighted by the normal forces.
            weight_sum = p0 = p1 = p2 = 0.0
            for i in anchored:
                sole = self._soles[i]
                weight = max(normal_forces.get(sole, 1.0), 1.0)
                weight_sum += weight
                (a0, a1, a2), (o0, o1, o2) = anchors[sole], offsets[i]
                p0 += weight * (a0 - o0)
                p1 += weight * (a1 - o1)
                p2 += weight * (a2 - o2)
            p0, p1, p2 = p0 / weight_sum, p1 / weight_sum, p2 / weight_sum
        elif self._last is not None:
            (l00, l01, l02), (l10, l11, l12), (l20, l21, l22) = rotation_last
            u0, u1, u2 = last_linear
            b0, b1, b2 = self._last.q[:3].tolist()
            p0 = b0 + dt * (l00 * u0 + l01 * u1 + l02 * u2)
            p1 = b1 + dt * (l10 * u0 + l11 * u1 + l12 * u2)
            p2 = b2 + dt * (l20 * u0 + l21 * u1 + l22 * u2)
        else:
            p0 = p1 = p2 = 0.0
        for i, sole in enumerate(self._soles):
            force = normal_forces.get(sole)
            if force is None or force <= self.load_threshold:
                continue
            armed.add(sole)
            if sole not in loaded:
                loaded.add(sole)
                o0, o1, o2 = offsets[i]
                anchor = (p0 + o0, p1 + o1, p2 + o2)
                if self.flat_ground:
                    below = self._height_above_ground(sole, anchor[2], np.array(rotation))
                    anchor = (anchor[0], anchor[1], anchor[2] - below)
                anchors[sole] = anchor

        # Velocities: gyro for the base angular velocity, fixed soles for the linear one.
        fixed = [i for i, s in enumerate(self._soles) if s in loaded and s in anchors]
        # The IMU's and the soles' spatial velocities from the joints (base at rest), about the
        # base origin, base axes: (v_O, w) each.
        imu_motion, *sole_motions = self._joint_velocities(dq_j)
        # The gyro reads R_base_imu^T (w_b + w_imu) (IMU axes): w_b = R_base_imu gyro - w_imu.
        (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = self._imu_rotation_view.tolist()
        g0, g1, g2 = gyro
        w0 = (b00 * g0 + b01 * g1 + b02 * g2) - imu_motion[3]
        w1 = (b10 * g0 + b11 * g1 + b12 * g2) - imu_motion[4]
        w2 = (b20 * g0 + b21 * g1 + b22 * g2) - imu_motion[5]
        still_base_velocity = None
        if fixed:
            # Least squares over the fixed soles, B_i v_b = r_i, by its normal equations. With
            # the base rotated by R, B_i = R J_i,b and r_i = -R J_i,a v_a (J_i: the linear rows
            # of the LOCAL_WORLD_ALIGNED Jacobian at the base origin, b its base linear columns,
            # a the others); R^T R = I, so the normal equations are those of the Jacobians at
            # the base origin, whose base block J_i,b is the identity (a free-flyer translation
            # moves every frame alike): k v_b = -sum J_i,a v_a, v_b minus the mean of the soles'
            # velocities with the base translation still, J_i,a v_a = v_O,i + (w_b + w_i) x p_i
            # ((v_O,i, w_i) the sole's spatial velocity from the joints, p_i its position).
            s0 = s1 = s2 = 0.0
            for i in fixed:
                t0, t1, t2 = sole_in_base[i]
                o0, o1, o2, a0, a1, a2 = sole_motions[i]
                a0, a1, a2 = w0 + a0, w1 + a1, w2 + a2
                s0 += o0 + (a1 * t2 - a2 * t1)
                s1 += o1 + (a2 * t0 - a0 * t2)
                s2 += o2 + (a0 * t1 - a1 * t0)
            k = float(len(fixed))
            v0, v1, v2 = -s0 / k, -s1 / k, -s2 / k
            still_base_velocity = np.array([v0, v1, v2])
        elif self._last is not None:
            # The last world velocity in the base axes now: R^T (R_last v_last).
            (l00, l01, l02), (l10, l11, l12), (l20, l21, l22) = rotation_last
            u0, u1, u2 = last_linear
            c0 = l00 * u0 + l01 * u1 + l02 * u2
            c1 = l10 * u0 + l11 * u1 + l12 * u2
            c2 = l20 * u0 + l21 * u1 + l22 * u2
            v0 = r00 * c0 + r10 * c1 + r20 * c2
            v1 = r01 * c0 + r11 * c1 + r21 * c2
            v2 = r02 * c0 + r12 * c1 + r22 * c2
        else:
            v0 = v1 = v2 = 0.0

        relative = None  # the IMU origin's velocity relative to the base origin, base axes
        if self.accelerometer:
            relative = self._imu_relative_velocity((w0, w1, w2), imu_motion)
        fused = (
            self.velocity_cutoff is not None
            and self.accelerometer
            and self._imu_velocity is not None
            and _has_accelerometer(readings.imu.linear_acceleration)
        )
        if fused:
            v0, v1, v2 = self._fuse_accelerometer(
                readings.time,
                np.asarray(readings.imu.linear_acceleration, dtype=float),
                rotation,
                (v0, v1, v2),
                relative,
            )
        elif self.velocity_cutoff is not None and self._last is not None:
            alpha = dt / (dt + 1.0 / (2.0 * np.pi * self.velocity_cutoff))
            (l00, l01, l02), (l10, l11, l12), (l20, l21, l22) = rotation_last
            u0, u1, u2 = last_linear
            c0 = l00 * u0 + l01 * u1 + l02 * u2  # the last estimate's, world axes
            c1 = l10 * u0 + l11 * u1 + l12 * u2
            c2 = l20 * u0 + l21 * u1 + l22 * u2
            f0 = c0 + alpha * ((r00 * v0 + r01 * v1 + r02 * v2) - c0)
            f1 = c1 + alpha * ((r10 * v0 + r11 * v1 + r12 * v2) - c1)
            f2 = c2 + alpha * ((r20 * v0 + r21 * v1 + r22 * v2) - c2)
            v0 = r00 * f0 + r10 * f1 + r20 * f2
            v1 = r01 * f0 + r11 * f1 + r21 * f2
            v2 = r02 * f0 + r12 * f1 + r22 * f2
        if relative is not None and not fused:  # where the next fused sample starts from
            e0, e1, e2 = v0 + relative[0], v1 + relative[1], v2 + relative[2]
            self._imu_velocity = (
                r00 * e0 + r01 * e1 + r02 * e2,
                r10 * e0 + r11 * e1 + r12 * e2,
                r20 * e0 + r21 * e1 + r22 * e2,
            )

        q = np.empty(self._nq)
        q[:7] = (p0, p1, p2, *quaternion)
        q[7:] = q_j
        v = np.empty(self._nv)
        v[:6] = (v0, v1, v2, w0, w1, w2)
        v[6:] = dq_j
        foot_wrenches = {
            name: _shift_to_world_origin(w, p0, p1, p2)
            for name, w in wrenches_at_origin_base.items()
        }
        key = tuple(fixed)
        loaded_soles = self._loaded_soles_names.get(key)
        if loaded_soles is None:
            loaded_soles = tuple(sorted(self._soles[i] for i in fixed))
            self._loaded_soles_names[key] = loaded_soles
        estimate = BaseEstimate(
            q, v, loaded_soles, foot_wrenches, normal_forces, still_base_velocity
        )
        self._last, self._last_time = estimate, readings.time
        self._last_rotation, self._last_linear = rotation, (v0, v1, v2)
        return estimate

    def _joint_velocities(self, dq_j: np.ndarray) -> list[list[float]]:
        """The spatial velocities the joints give the IMU's and the soles' links, base at rest.

        One product of the joint Jacobians at the base origin (:meth:`_kinematics_in_base`,
        Pinocchio's ``data.J``: world axes, about the world origin, which are the base's here)
        with the joint velocities ``dq_j`` [rad/s] over each link's supporting joints.

        Returns:
            For the IMU then each sole (the config's order): (v_O [m/s], w [rad/s]), the
            velocity of the point at the base origin moving with the link and the link's angular
            velocity, base axes, as 6 floats.
        """
        return ((self._joint_jacobians * dq_j) @ self._supports).T.tolist()

    def _imu_relative_velocity(
        self, angular: tuple[float, float, float], imu_motion: list[float]
    ) -> tuple[float, float, float]:
        """The IMU origin's velocity minus the base origin's, base axes [m/s].

        v_O + (w_b + w) x r, (v_O, w) the IMU link's spatial velocity from the joints
        ``imu_motion`` (:meth:`_joint_velocities`; an IMU on a link beyond joints: iCub's), w_b
        the base angular velocity ``angular`` [rad/s], r the IMU origin in the base [m] (the
        kinematics of :meth:`_kinematics_in_base`), base axes.
        """
        t0, t1, t2 = self._imu_translation_view.tolist()
        o0, o1, o2, a0, a1, a2 = imu_motion
        a0, a1, a2 = angular[0] + a0, angular[1] + a1, angular[2] + a2
        return (
            o0 + (a1 * t2 - a2 * t1),
            o1 + (a2 * t0 - a0 * t2),
            o2 + (a0 * t1 - a1 * t0),
        )

    def _fuse_accelerometer(
        self,
        time: float,
        proper: np.ndarray,
        rotation: Rows3,
        linear: tuple[float, float, float],
        relative: tuple[float, float, float],
    ) -> tuple[float, float, float]:
        """One step of the complementary filter of ``accelerometer`` (class docstring).

        u: the IMU origin's world velocity [m/s]. Odometry: u_o = R (v_b + c), c the IMU
        origin's velocity relative to the base origin ``relative`` (base axes: the base angular
        velocity and the joints', :meth:`_imu_relative_velocity`). Prediction from the last
        filtered u: u_p = u + dt (R R_bi f + g), f the accelerometer's proper acceleration
        ``proper`` (IMU axes) [m/s^2], R_bi the IMU's rotation in the base, g gravity; then
        u = u_p + alpha (u_o - u_p), alpha the first-order filter's, and v_b = R^T u - c.
        ``rotation``: R (rows); ``linear``: v_b [m/s] from the odometry, base axes.

        Returns:
            The filtered v_b [m/s], base axes.
        """
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rotation
        (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = self._imu_rotation_view.tolist()
        e0, e1, e2 = linear[0] + relative[0], linear[1] + relative[1], linear[2] + relative[2]
        o0 = r00 * e0 + r01 * e1 + r02 * e2
        o1 = r10 * e0 + r11 * e1 + r12 * e2
        o2 = r20 * e0 + r21 * e1 + r22 * e2
        dt = max(time - (self._last_time if self._last_time is not None else time), 0.0)
        alpha = dt / (dt + 1.0 / (2.0 * np.pi * self.velocity_cutoff))
        f0, f1, f2 = proper.tolist()
        h0 = b00 * f0 + b01 * f1 + b02 * f2  # base axes
        h1 = b10 * f0 + b11 * f1 + b12 * f2
        h2 = b20 * f0 + b21 * f1 + b22 * f2
        gx, gy, gz = self._gravity.tolist()
        u0, u1, u2 = self._imu_velocity
        u0 += dt * ((r00 * h0 + r01 * h1 + r02 * h2) + gx)
        u1 += dt * ((r10 * h0 + r11 * h1 + r12 * h2) + gy)
        u2 += dt * ((r20 * h0 + r21 * h1 + r22 * h2) + gz)
        u0, u1, u2 = u0 + alpha * (o0 - u0), u1 + alpha * (o1 - u1), u2 + alpha * (o2 - u2)
        self._imu_velocity = (u0, u1, u2)
        return (
            (r00 * u0 + r10 * u1 + r20 * u2) - relative[0],
            (r01 * u0 + r11 * u1 + r21 * u2) - relative[1],
            (r02 * u0 + r12 * u1 + r22 * u2) - relative[2],
        )

    def _height_above_ground(self, sole: str, height: float, base_rotation: np.ndarray) -> float:
        """How far to lower a sole anchored at ``height`` [m] to put it on the flat ground [m].

        The estimated height of its lowest corner above the ground plane (the height of
        ``initial_sole_position``), 0 when that is farther than ``ground_tolerance`` (not this
        ground: a step or an obstacle). Uses the kinematics of :meth:`_kinematics_in_base`; the
        sole's orientation is that of the estimate, R = R_world_base R_base_sole.
        """
        rotation = base_rotation @ self.data.oMf[self.sole_frame_ids[sole]].rotation
        lowest = height + float(np.min(self.sole_corners[sole] @ rotation[2]))
        above = lowest - float(self.initial_sole_position[2])
        return above if abs(above) <= self.ground_tolerance else 0.0

    def _sensor_wrenches(
        self, base_rotation: Rows3, readings: list[tuple[str, list[float]]]
    ) -> dict[str, tuple[float, ...]]:
        """The F/T readings as ground-on-foot wrenches about the base origin, world axes.

        :func:`~wbm_control.balance.ft_wrenches_in_world` with the sensors placed by the base
        rotation R (rows) at the origin and the kinematics of :meth:`_kinematics_in_base`
        (sensor rotation R_s = R R_sb, position p_s = R p_sb), written out on floats: f = R_s f_s,
        m = R_s m_s + p_s x f (the same products as Pinocchio's SE3 composition and action,
        without their objects). ``readings``: (sensor name, wrench: 6 floats [N, N m], sensor
        axes), checked (:meth:`_checked_inputs`).

        Returns:
            Sensor name to (f, m) as 6 floats [N, N m].
        """
        result = {}
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = base_rotation
        for name, wrench in readings:
            rotation_view, translation_view = self._sensor_views[name]
            (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = rotation_view.tolist()
            t0, t1, t2 = translation_view.tolist()
            # R_s = R R_sb (row by row), p_s = R p_sb.
            s00 = r00 * a00 + r01 * a10 + r02 * a20
            s01 = r00 * a01 + r01 * a11 + r02 * a21
            s02 = r00 * a02 + r01 * a12 + r02 * a22
            s10 = r10 * a00 + r11 * a10 + r12 * a20
            s11 = r10 * a01 + r11 * a11 + r12 * a21
            s12 = r10 * a02 + r11 * a12 + r12 * a22
            s20 = r20 * a00 + r21 * a10 + r22 * a20
            s21 = r20 * a01 + r21 * a11 + r22 * a21
            s22 = r20 * a02 + r21 * a12 + r22 * a22
            p0 = r00 * t0 + r01 * t1 + r02 * t2
            p1 = r10 * t0 + r11 * t1 + r12 * t2
            p2 = r20 * t0 + r21 * t1 + r22 * t2
            f0, f1, f2, m0, m1, m2 = wrench
            g0 = s00 * f0 + s01 * f1 + s02 * f2
            g1 = s10 * f0 + s11 * f1 + s12 * f2
            g2 = s20 * f0 + s21 * f1 + s22 * f2
            result[name] = (
                g0,
                g1,
                g2,
                s00 * m0 + s01 * m1 + s02 * m2 + (p1 * g2 - p2 * g1),
                s10 * m0 + s11 * m1 + s12 * m2 + (p2 * g0 - p0 * g2),
                s20 * m0 + s21 * m1 + s22 * m2 + (p0 * g1 - p1 * g0),
            )
        return result


def _has_accelerometer(linear_acceleration: np.ndarray) -> bool:
    """Whether an IMU reading has an accelerometer: finite and not exactly zero."""
    values = np.asarray(linear_acceleration, dtype=float).tolist()
    return all(math.isfinite(a) for a in values) and any(a != 0.0 for a in values)


def _shift_to_world_origin(
    wrench_about_base_origin: tuple[float, ...], p0: float, p1: float, p2: float
) -> np.ndarray:
    """Move a world-axes wrench (6 floats [N, N m]) from the base origin at p [m] to the origin.

    Returns:
        The wrench about the world origin, world axes, a new array (6,) [N, N m].
    """
    w0, w1, w2, w3, w4, w5 = wrench_about_base_origin
    # tau + p x f, written out (np.cross costs more than the whole product here).
    return np.array(
        [
            w0,
            w1,
            w2,
            w3 + (p1 * w2 - p2 * w1),
            w4 + (p2 * w0 - p0 * w2),
            w5 + (p0 * w1 - p1 * w0),
        ]
    )
