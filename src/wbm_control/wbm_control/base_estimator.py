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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_control.small_linalg import rotation_from_quaternion_xyzw, solve_3x3
from wbm_description.robot_io import RobotReadings
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.whole_body_model import WholeBodyModel

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
_LOCAL = pin.ReferenceFrame.LOCAL


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
        self._rows_buffers: dict[int, np.ndarray] = {}  # fixed soles' Jacobian rows by count
        self.initial_sole_position = (
            np.zeros(3)
            if initial_sole_position is None
            else np.asarray(initial_sole_position, dtype=float)
        )
        self.reset()

    def reset(self, anchors: Mapping[str, np.ndarray] | None = None) -> None:
        """Forget the state; optionally give the soles' world positions to anchor them at."""
        self._anchors: dict[str, np.ndarray] = {
            k: np.asarray(p, dtype=float).copy() for k, p in (anchors or {}).items()
        }
        self._loaded: set[str] = set(self._anchors)
        self._armed: set[str] = set(self._anchors)  # may be released when their load drops
        self._last: BaseEstimate | None = None
        self._last_rotation: np.ndarray | None = None  # base rotation of self._last
        self._last_time: float | None = None
        self._imu_velocity: np.ndarray | None = None  # filtered IMU origin velocity, world [m/s]

    @property
    def anchors(self) -> dict[str, np.ndarray]:
        """Sole name to the world position it is assumed fixed at (loaded soles only)."""
        return {k: v.copy() for k, v in self._anchors.items()}

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

    def _orientation(self, readings: RobotReadings) -> pin.Quaternion:
        """R_world_base from the IMU and the joint kinematics (of :meth:`_kinematics_in_base`).

        Returned as a unit quaternion: the product of the two rotations, re-orthonormalized by
        its conversion to a quaternion and normalization (the IMU quaternion is normalized:
        rounding only; a 3 x 3 SVD costs more than the rest of this function).
        """
        rotation_imu_in_base = self.data.oMf[self.imu_frame_id].rotation
        rotation_imu_in_world = rotation_from_quaternion_xyzw(readings.imu.orientation_xyzw)
        quaternion = quaternion_of_rotation(rotation_imu_in_world @ rotation_imu_in_base.T)
        quaternion.normalize()
        return quaternion

    def update(
        self, readings: RobotReadings, sole_loads: Mapping[str, float] | None = None
    ) -> BaseEstimate:
        """Estimate the base state from one sample of the robot's sensors.

        Args:
            readings: The robot's sensors.
            sole_loads: Sole name to its load (normal force) [N] from another source (the
                contact estimate, :mod:`wbm_control.contact_estimation`), used for the soles
                without an F/T sensor; an F/T reading wins where there is one.

        Raises:
            InputError: No IMU reading, or non-finite values.
        """
        if readings.imu is None:
            raise InputError("readings.imu", "an IMU reading (the estimator needs it)")
        q_j = np.asarray(readings.joint_positions, dtype=float)
        dq_j = np.asarray(readings.joint_velocities, dtype=float)
        ndof = self.pin_model.nv - 6
        for name, value in (("joint_positions", q_j), ("joint_velocities", dq_j)):
            if value.shape != (ndof,) or not np.isfinite(value).all():
                raise InputError(f"readings.{name}", f"{ndof} finite values", value.shape)
        gyro = np.asarray(readings.imu.angular_velocity, dtype=float)
        if gyro.shape != (3,) or not np.isfinite(gyro).all():
            raise InputError("readings.imu.angular_velocity", "3 finite values", gyro)

        self._kinematics_in_base(q_j)
        quaternion = self._orientation(readings)
        q = np.zeros(self.pin_model.nq)
        q[3:7] = quaternion.coeffs()
        q[7:] = q_j
        # The base's rotation as the free-flyer joint has it (from the quaternion).
        rotation = base_rotation = quaternion.toRotationMatrix()
        oMf = self.data.oMf
        # Sole positions relative to the base origin, in world axes (base at the origin).
        sole_offsets = {
            s: base_rotation @ oMf[f].translation for s, f in self.sole_frame_ids.items()
        }
        # The F/T wrenches about the base origin, world axes (normal forces: translation does
        # not change the world-axes force).
        wrenches_at_origin_base = self._sensor_wrenches(base_rotation, readings.wrenches)
        normal_forces = {
            sole: float(wrenches_at_origin_base[sensor][2])
            for sole, sensor in self.sensor_of_sole.items()
            if sensor in wrenches_at_origin_base
        }
        for sole, load in (sole_loads or {}).items():
            if sole not in self.sensor_of_sole:
                normal_forces[sole] = float(load)

        # Release the soles whose load dropped (they may be moving already), then place the base
        # on the soles still anchored, then anchor the newly loaded soles where they are now.
        for sole in list(self._loaded):
            force = normal_forces.get(sole)
            if force is not None and force > self.load_threshold:
                self._armed.add(sole)
            if force is not None and force < self.unload_threshold and sole in self._armed:
                self._loaded.discard(sole)
                self._armed.discard(sole)
                self._anchors.pop(sole, None)
        if not self._anchors and self._last is None:
            origin = self.initial_sole_position - sole_offsets[self.initial_sole]
            for sole in dict.fromkeys((self.initial_sole, *self.initial_soles)):
                self._anchors[sole] = origin + sole_offsets[sole]
                self._loaded.add(sole)
        # In the config's sole order, not the set's (string hashes vary between processes).
        anchored = [s for s in self.sole_frame_ids if s in self._loaded and s in self._anchors]
        last = self._last
        # The last estimate's base rotation (that of its quaternion, kept from its update).
        rotation_last = self._last_rotation
        if anchored:
            # The weighted mean of the anchors minus the offsets, written out (one sole or
            # two: no (k,) and (k, 3) arrays to build for a product).
            weight_sum = 0.0
            position = np.zeros(3)
            for sole in anchored:
                weight = max(normal_forces.get(sole, 1.0), 1.0)
                weight_sum += weight
                position += weight * (self._anchors[sole] - sole_offsets[sole])
            q[:3] = position / weight_sum
        elif last is not None:
            dt = max(readings.time - (self._last_time or readings.time), 0.0)
            q[:3] = last.q[:3] + dt * rotation_last @ last.v[:3]
        for sole in self.sole_frame_ids:
            force = normal_forces.get(sole)
            if force is None or force <= self.load_threshold:
                continue
            self._armed.add(sole)
            if sole not in self._loaded:
                self._loaded.add(sole)
                anchor = q[:3] + sole_offsets[sole]
                if self.flat_ground:
                    anchor[2] -= self._height_above_ground(sole, anchor[2], base_rotation)
                self._anchors[sole] = anchor

        # Velocities: gyro for the base angular velocity, fixed soles for the linear one.
        v = np.empty(self.pin_model.nv)
        v[6:] = dq_j
        still_base_velocity = None
        # The IMU's LOCAL Jacobian does not depend on the base placement.
        J_imu = pin.getFrameJacobian(self.pin_model, self.data, self.imu_frame_id, _LOCAL)
        # Its base angular block is the rotation from the base to the IMU axes: its inverse is
        # its transpose.
        v[3:6] = J_imu[3:6, 3:6].T @ (gyro - J_imu[3:6, 6:] @ dq_j)
        fixed = [s for s in self.sole_frame_ids if s in self._loaded and s in self._anchors]
        if fixed:
            # Least squares over the fixed soles, B_i v_b = r_i, by its normal equations. With
            # the base rotated by R, B_i = R J_i,b and r_i = -R J_i,j v_j (J_i: the linear rows
            # of the LOCAL_WORLD_ALIGNED Jacobian at the base origin); R^T R = I, so the normal
            # equations are those of the Jacobians at the base origin: sum J_i,b^T J_i,b v_b =
            # -sum J_i,b^T J_i,j v_j, one stacked product each.
            rows = self._fixed_rows(fixed)
            rows_base = rows[:, 0:3]
            normal_rhs = rows_base.T @ (rows[:, 3:] @ v[3:])
            v[0:3] = solve_3x3(rows_base.T @ rows_base, -normal_rhs)
            still_base_velocity = v[0:3].copy()
        elif last is not None:
            v[0:3] = rotation.T @ (rotation_last @ last.v[:3])
        else:
            v[0:3] = 0.0

        proper = np.asarray(readings.imu.linear_acceleration, dtype=float)
        fused = (
            self.velocity_cutoff is not None
            and self.accelerometer
            and self._imu_velocity is not None
            and bool(np.all(np.isfinite(proper)) and np.any(proper != 0.0))
        )
        if fused:
            self._fuse_accelerometer(readings.time, proper, rotation, v)
        elif self.velocity_cutoff is not None and last is not None:
            dt = max(readings.time - (self._last_time or readings.time), 0.0)
            alpha = dt / (dt + 1.0 / (2.0 * np.pi * self.velocity_cutoff))
            previous_world = rotation_last @ last.v[:3]
            filtered_world = previous_world + alpha * (rotation @ v[0:3] - previous_world)
            v[0:3] = rotation.T @ filtered_world
        if self.accelerometer and not fused:  # where the next fused sample starts from
            self._imu_velocity = rotation @ (v[0:3] + self._imu_relative_velocity(v))

        foot_wrenches = {
            name: _shift_to_world_origin(w, q[:3]) for name, w in wrenches_at_origin_base.items()
        }
        estimate = BaseEstimate(
            q, v, tuple(sorted(fixed)), foot_wrenches, normal_forces, still_base_velocity
        )
        self._last, self._last_time = estimate, readings.time
        self._last_rotation = rotation
        return estimate

    def _imu_relative_velocity(self, v: np.ndarray) -> np.ndarray:
        """The IMU origin's velocity minus the base origin's, base axes [m/s].

        w_b x r plus the joints' part (an IMU on a link beyond joints: iCub's), from the IMU's
        Jacobian at the base placed at the origin (:meth:`_kinematics_in_base`).
        """
        rows = pin.getFrameJacobian(self.pin_model, self.data, self.imu_frame_id, _LWA)[:3]
        return rows[:, 3:] @ v[3:]

    def _fuse_accelerometer(
        self, time: float, proper: np.ndarray, rotation: np.ndarray, v: np.ndarray
    ) -> None:
        """One step of the complementary filter of ``accelerometer`` (class docstring), in place.

        u: the IMU origin's world velocity [m/s]. Odometry: u_o = R (v_b + c), c the IMU
        origin's velocity relative to the base origin (base axes: the base angular velocity and
        the joints', :meth:`_imu_relative_velocity`). Prediction from the last filtered u:
        u_p = u + dt (R R_bi f + g), f the accelerometer's proper acceleration ``proper`` (IMU
        axes) [m/s^2], R_bi the IMU's rotation in the base, g gravity; then
        u = u_p + alpha (u_o - u_p), alpha the first-order filter's, and v_b = R^T u - c.
        """
        imu = self.data.oMf[self.imu_frame_id]  # in the base frame (_kinematics_in_base)
        relative = self._imu_relative_velocity(v)
        odometry = rotation @ (v[0:3] + relative)
        dt = max(time - (self._last_time if self._last_time is not None else time), 0.0)
        alpha = dt / (dt + 1.0 / (2.0 * np.pi * self.velocity_cutoff))
        acceleration = rotation @ (imu.rotation @ proper) + self._gravity
        predicted = self._imu_velocity + dt * acceleration
        self._imu_velocity = predicted + alpha * (odometry - predicted)
        v[0:3] = rotation.T @ self._imu_velocity - relative

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
        self, base_rotation: np.ndarray, readings: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """The F/T readings as ground-on-foot wrenches about the base origin, world axes.

        :func:`~wbm_control.balance.ft_wrenches_in_world` with the sensors placed by the base
        rotation R at the origin and the kinematics of :meth:`_kinematics_in_base` (sensor
        rotation R_s = R R_sb, position p_s = R p_sb), written out on floats: f = R_s f_s,
        m = R_s m_s + p_s x f (the same products as Pinocchio's SE3 composition and action,
        without their objects).

        Raises:
            InputError: A reading that is not 6 finite values.
        """
        result = {}
        oMf = self.data.oMf
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = base_rotation.tolist()
        for name, wrench in readings.items():
            frame_id = self.sensor_frame_ids.get(name)
            if frame_id is None:
                continue
            array = np.asarray(wrench, dtype=float)
            if array.shape != (6,) or not np.isfinite(array).all():
                raise InputError(f"wrenches[{name!r}]", "6 finite values", array)
            placement = oMf[frame_id]
            (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = placement.rotation.tolist()
            t0, t1, t2 = placement.translation.tolist()
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
            f0, f1, f2, m0, m1, m2 = array.tolist()
            g0 = s00 * f0 + s01 * f1 + s02 * f2
            g1 = s10 * f0 + s11 * f1 + s12 * f2
            g2 = s20 * f0 + s21 * f1 + s22 * f2
            result[name] = np.array(
                [
                    g0,
                    g1,
                    g2,
                    s00 * m0 + s01 * m1 + s02 * m2 + (p1 * g2 - p2 * g1),
                    s10 * m0 + s11 * m1 + s12 * m2 + (p2 * g0 - p0 * g2),
                    s20 * m0 + s21 * m1 + s22 * m2 + (p0 * g1 - p1 * g0),
                ]
            )
        return result

    def _fixed_rows(self, fixed: list[str]) -> np.ndarray:
        """The linear rows of the fixed soles' LOCAL_WORLD_ALIGNED Jacobians, stacked (3k x nv).

        At the base origin (:meth:`_kinematics_in_base`), written into a buffer per sole count.
        """
        rows = self._rows_buffers.get(len(fixed))
        if rows is None:
            rows = self._rows_buffers[len(fixed)] = np.empty((3 * len(fixed), self.pin_model.nv))
        for i, sole in enumerate(fixed):
            rows[3 * i : 3 * i + 3] = pin.getFrameJacobian(
                self.pin_model, self.data, self.sole_frame_ids[sole], _LWA
            )[0:3]
        return rows


def _shift_to_world_origin(
    wrench_about_base_origin: np.ndarray, base_position: np.ndarray
) -> np.ndarray:
    """Move a world-axes wrench from the base origin (at p) to the world origin."""
    w0, w1, w2, w3, w4, w5 = wrench_about_base_origin.tolist()  # floats: numpy's arithmetic
    p0, p1, p2 = base_position.tolist()
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
