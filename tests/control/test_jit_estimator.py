"""The base estimator's kernel computes what its Python float code computed (issue 11).

The update before its kernel (wbm_control.base_estimator at commit 14540ec: the per-sample
arithmetic written out on Python floats, the soles' state in sets and a dict) is kept below as
``ReferenceEstimator`` (its code as it was, docstrings and comments dropped). Compared, update
by update, on the same readings:

- random sequences (iCub: F/T sensors; G1: none, its loads from ``sole_loads``): random joint
  positions and velocities, tilted IMU orientations (random unit quaternions), gyro, loads
  crossing the load and unload thresholds (soles loaded, armed, released, re-anchored), a
  sensor missing from a sample and an unknown one, accelerometer readings valid, not finite
  or zero (no fusion), time steps of 0, negative and positive sizes from t = 0 (the update's
  ``last_time or time``), resets with and without anchors; with and without the velocity
  filter, the accelerometer and the flat ground;
- the controller regression sequence (``controller_regression.py``: iCub crouching and waving
  its arms, the right sole unloaded and loaded again), with the accelerometer fusion and
  without (the controller's own estimator);
- invalid readings: the same InputError (the same message), and the state untouched;
- the placements copied instead of read in place (another Pinocchio build's SE3 layout).

q, v, the still base velocity, the wrenches, the loads and the anchors agree to 1e-12 relative
(to 1 + the largest entry of the reference's array; the loaded soles, the dicts' keys and
order exactly). Measured: bit-identical, every field of every update of these sequences.
``test_measured_differences`` asserts the bits for q, the loads, the wrenches and the anchors,
and 4e-16 for v and the still base velocity: their joints' part (the IMU's and the soles'
velocities from the joint Jacobians) was numpy's matrix product, whose summation order is
the BLAS library's; the kernel sums in joint order.
After the warm-up, the controller's steps compile nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from controller_regression import contact_events, make_controller, readings_at

from wbm_control import base_estimator
from wbm_control.base_estimator import BaseEstimate, BaseEstimator
from wbm_control.exceptions import InputError
from wbm_control.jit import estimator_kernels, zmp_kernels
from wbm_control.small_linalg import (
    Rows3,
    rotation_of_unit_quaternion,
    unit_quaternion_of_rotation,
)
from wbm_description.registry import load_robot
from wbm_description.robot_io import ImuReading, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel

RELATIVE = 1e-12  # see the module docstring
STEPS = 70  # the regression sequence (test_step_equivalence.py): one and two soles held


# ---------------------------------------------------------------- the Python code (14540ec)


class ReferenceEstimator:
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
        if velocity_cutoff is not None and (not velocity_cutoff > 0.0):
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
        self.sole_corners = {sole.name: sole.corners() for sole in config.soles}
        self._q_base_frame = pin.neutral(self.pin_model)
        self._soles = tuple(self.sole_frame_ids)
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
        self._nq, self._nv = (self.pin_model.nq, self.pin_model.nv)
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
        self._anchors: dict[str, tuple[float, ...]] = {
            k: tuple(np.asarray(p, dtype=float).tolist()) for k, p in (anchors or {}).items()
        }
        self._loaded: set[str] = set(self._anchors)
        self._armed: set[str] = set(self._anchors)
        self._last: BaseEstimate | None = None
        self._last_rotation: Rows3 | None = None
        self._last_linear: tuple[float, float, float] | None = None
        self._last_time: float | None = None
        self._imu_velocity: tuple[float, float, float] | None = None

    @property
    def anchors(self) -> dict[str, np.ndarray]:
        return {k: np.array(v, dtype=float) for k, v in self._anchors.items()}

    def _kinematics_in_base(self, q_joints: np.ndarray) -> None:
        q = self._q_base_frame
        q[7:] = q_joints
        pin.computeJointJacobians(self.pin_model, self.data, q)
        pin.updateFramePlacements(self.pin_model, self.data)

    def _orientation(self, readings: RobotReadings) -> tuple[tuple[float, ...], Rows3]:
        (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = self._imu_rotation_view.tolist()
        x, y, z, w = readings.imu.orientation_xyzw.tolist()
        n = math.sqrt(x * x + y * y + z * z + w * w)
        x, y, z, w = (x / n, y / n, z / n, w / n)
        a00, a01, a02 = (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w))
        a10, a11, a12 = (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w))
        a20, a21, a22 = (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y))
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
        return (quaternion, rotation_of_unit_quaternion(*quaternion))

    def _checked_inputs(
        self, readings: RobotReadings
    ) -> tuple[np.ndarray, np.ndarray, list[float], list[tuple[str, list[float]]]]:
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
        if q_j.shape == (ndof,) and dq_j.shape == (ndof,) and (gyro.shape == (3,)):
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
                    return (q_j, dq_j, rates, wrenches)
        for name, value in (("joint_positions", q_j), ("joint_velocities", dq_j)):
            if value.shape != (ndof,) or not np.isfinite(value).all():
                raise InputError(f"readings.{name}", f"{ndof} finite values", value.shape)
        if gyro.shape != (3,) or not np.isfinite(gyro).all():
            raise InputError("readings.imu.angular_velocity", "3 finite values", gyro)
        for name, array in arrays:
            if array.shape != (6,) or not np.isfinite(array).all():
                raise InputError(f"wrenches[{name!r}]", "6 finite values", array)
        return (q_j, dq_j, gyro.tolist(), [(name, array.tolist()) for name, array in arrays])

    def update(
        self, readings: RobotReadings, sole_loads: Mapping[str, float] | None = None
    ) -> BaseEstimate:
        q_j, dq_j, gyro, wrenches = self._checked_inputs(readings)
        self._kinematics_in_base(q_j)
        quaternion, rotation = self._orientation(readings)
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rotation
        sole_in_base = [view.tolist() for view in self._sole_translation_views]
        offsets = [
            (
                r00 * t0 + r01 * t1 + r02 * t2,
                r10 * t0 + r11 * t1 + r12 * t2,
                r20 * t0 + r21 * t1 + r22 * t2,
            )
            for t0, t1, t2 in sole_in_base
        ]
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
        loaded, armed, anchors = (self._loaded, self._armed, self._anchors)
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
            x0, x1, x2 = (x0 - o0, x1 - o1, x2 - o2)
            for sole in dict.fromkeys((self.initial_sole, *self.initial_soles)):
                o0, o1, o2 = offsets[self._soles.index(sole)]
                anchors[sole] = (x0 + o0, x1 + o1, x2 + o2)
                loaded.add(sole)
        last_linear = self._last_linear
        rotation_last = self._last_rotation
        dt = 0.0
        if self._last_time is not None:
            dt = max(readings.time - (self._last_time or readings.time), 0.0)
        anchored = [i for i, s in enumerate(self._soles) if s in loaded and s in anchors]
        if anchored:
            weight_sum = p0 = p1 = p2 = 0.0
            for i in anchored:
                sole = self._soles[i]
                weight = max(normal_forces.get(sole, 1.0), 1.0)
                weight_sum += weight
                (a0, a1, a2), (o0, o1, o2) = (anchors[sole], offsets[i])
                p0 += weight * (a0 - o0)
                p1 += weight * (a1 - o1)
                p2 += weight * (a2 - o2)
            p0, p1, p2 = (p0 / weight_sum, p1 / weight_sum, p2 / weight_sum)
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
        fixed = [i for i, s in enumerate(self._soles) if s in loaded and s in anchors]
        imu_motion, *sole_motions = self._joint_velocities(dq_j)
        (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = self._imu_rotation_view.tolist()
        g0, g1, g2 = gyro
        w0 = b00 * g0 + b01 * g1 + b02 * g2 - imu_motion[3]
        w1 = b10 * g0 + b11 * g1 + b12 * g2 - imu_motion[4]
        w2 = b20 * g0 + b21 * g1 + b22 * g2 - imu_motion[5]
        still_base_velocity = None
        if fixed:
            s0 = s1 = s2 = 0.0
            for i in fixed:
                t0, t1, t2 = sole_in_base[i]
                o0, o1, o2, a0, a1, a2 = sole_motions[i]
                a0, a1, a2 = (w0 + a0, w1 + a1, w2 + a2)
                s0 += o0 + (a1 * t2 - a2 * t1)
                s1 += o1 + (a2 * t0 - a0 * t2)
                s2 += o2 + (a0 * t1 - a1 * t0)
            k = float(len(fixed))
            v0, v1, v2 = (-s0 / k, -s1 / k, -s2 / k)
            still_base_velocity = np.array([v0, v1, v2])
        elif self._last is not None:
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
        relative = None
        if self.accelerometer:
            relative = self._imu_relative_velocity((w0, w1, w2), imu_motion)
        fused = (
            self.velocity_cutoff is not None
            and self.accelerometer
            and (self._imu_velocity is not None)
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
            c0 = l00 * u0 + l01 * u1 + l02 * u2
            c1 = l10 * u0 + l11 * u1 + l12 * u2
            c2 = l20 * u0 + l21 * u1 + l22 * u2
            f0 = c0 + alpha * (r00 * v0 + r01 * v1 + r02 * v2 - c0)
            f1 = c1 + alpha * (r10 * v0 + r11 * v1 + r12 * v2 - c1)
            f2 = c2 + alpha * (r20 * v0 + r21 * v1 + r22 * v2 - c2)
            v0 = r00 * f0 + r10 * f1 + r20 * f2
            v1 = r01 * f0 + r11 * f1 + r21 * f2
            v2 = r02 * f0 + r12 * f1 + r22 * f2
        if relative is not None and (not fused):
            e0, e1, e2 = (v0 + relative[0], v1 + relative[1], v2 + relative[2])
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
        self._last, self._last_time = (estimate, readings.time)
        self._last_rotation, self._last_linear = (rotation, (v0, v1, v2))
        return estimate

    def _joint_velocities(self, dq_j: np.ndarray) -> list[list[float]]:
        return (self._joint_jacobians * dq_j @ self._supports).T.tolist()

    def _imu_relative_velocity(
        self, angular: tuple[float, float, float], imu_motion: list[float]
    ) -> tuple[float, float, float]:
        t0, t1, t2 = self._imu_translation_view.tolist()
        o0, o1, o2, a0, a1, a2 = imu_motion
        a0, a1, a2 = (angular[0] + a0, angular[1] + a1, angular[2] + a2)
        return (o0 + (a1 * t2 - a2 * t1), o1 + (a2 * t0 - a0 * t2), o2 + (a0 * t1 - a1 * t0))

    def _fuse_accelerometer(
        self,
        time: float,
        proper: np.ndarray,
        rotation: Rows3,
        linear: tuple[float, float, float],
        relative: tuple[float, float, float],
    ) -> tuple[float, float, float]:
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rotation
        (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = self._imu_rotation_view.tolist()
        e0, e1, e2 = (linear[0] + relative[0], linear[1] + relative[1], linear[2] + relative[2])
        o0 = r00 * e0 + r01 * e1 + r02 * e2
        o1 = r10 * e0 + r11 * e1 + r12 * e2
        o2 = r20 * e0 + r21 * e1 + r22 * e2
        dt = max(time - (self._last_time if self._last_time is not None else time), 0.0)
        alpha = dt / (dt + 1.0 / (2.0 * np.pi * self.velocity_cutoff))
        f0, f1, f2 = proper.tolist()
        h0 = b00 * f0 + b01 * f1 + b02 * f2
        h1 = b10 * f0 + b11 * f1 + b12 * f2
        h2 = b20 * f0 + b21 * f1 + b22 * f2
        gx, gy, gz = self._gravity.tolist()
        u0, u1, u2 = self._imu_velocity
        u0 += dt * (r00 * h0 + r01 * h1 + r02 * h2 + gx)
        u1 += dt * (r10 * h0 + r11 * h1 + r12 * h2 + gy)
        u2 += dt * (r20 * h0 + r21 * h1 + r22 * h2 + gz)
        u0, u1, u2 = (u0 + alpha * (o0 - u0), u1 + alpha * (o1 - u1), u2 + alpha * (o2 - u2))
        self._imu_velocity = (u0, u1, u2)
        return (
            r00 * u0 + r10 * u1 + r20 * u2 - relative[0],
            r01 * u0 + r11 * u1 + r21 * u2 - relative[1],
            r02 * u0 + r12 * u1 + r22 * u2 - relative[2],
        )

    def _height_above_ground(self, sole: str, height: float, base_rotation: np.ndarray) -> float:
        rotation = base_rotation @ self.data.oMf[self.sole_frame_ids[sole]].rotation
        lowest = height + float(np.min(self.sole_corners[sole] @ rotation[2]))
        above = lowest - float(self.initial_sole_position[2])
        return above if abs(above) <= self.ground_tolerance else 0.0

    def _sensor_wrenches(
        self, base_rotation: Rows3, readings: list[tuple[str, list[float]]]
    ) -> dict[str, tuple[float, ...]]:
        result = {}
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = base_rotation
        for name, wrench in readings:
            rotation_view, translation_view = self._sensor_views[name]
            (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = rotation_view.tolist()
            t0, t1, t2 = translation_view.tolist()
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
    values = np.asarray(linear_acceleration, dtype=float).tolist()
    return all(math.isfinite(a) for a in values) and any(a != 0.0 for a in values)


def _shift_to_world_origin(
    wrench_about_base_origin: tuple[float, ...], p0: float, p1: float, p2: float
) -> np.ndarray:
    w0, w1, w2, w3, w4, w5 = wrench_about_base_origin
    return np.array(
        [w0, w1, w2, w3 + (p1 * w2 - p2 * w1), w4 + (p2 * w0 - p0 * w2), w5 + (p0 * w1 - p1 * w0)]
    )


# ---------------------------------------------------------------- comparisons


def _relative(new: np.ndarray, reference: np.ndarray) -> float:
    new, reference = np.asarray(new, dtype=float), np.asarray(reference, dtype=float)
    assert new.shape == reference.shape
    if not reference.size:
        return 0.0
    if np.array_equal(new, reference, equal_nan=True):
        return 0.0
    return float(np.max(np.abs(new - reference)) / (1.0 + np.max(np.abs(reference))))


def compare(
    new: BaseEstimate,
    reference: BaseEstimate,
    estimator: BaseEstimator,
    reference_estimator: ReferenceEstimator,
    record: dict[str, float] | None = None,
) -> None:
    """The two estimates (and the estimators' anchors) agree (module docstring)."""
    differences = {
        "q": _relative(new.q, reference.q),
        "v": _relative(new.v, reference.v),
    }
    assert new.loaded_soles == reference.loaded_soles
    assert (new.still_base_velocity is None) == (reference.still_base_velocity is None)
    if reference.still_base_velocity is not None:
        differences["still"] = _relative(new.still_base_velocity, reference.still_base_velocity)
    assert list(new.foot_wrenches_world) == list(reference.foot_wrenches_world)
    differences["wrenches"] = max(
        (
            _relative(new.foot_wrenches_world[k], w)
            for k, w in reference.foot_wrenches_world.items()
        ),
        default=0.0,
    )
    assert list(new.normal_forces) == list(reference.normal_forces)
    assert all(type(f) is float for f in new.normal_forces.values())
    differences["loads"] = max(
        (_relative(new.normal_forces[k], f) for k, f in reference.normal_forces.items()),
        default=0.0,
    )
    anchors, reference_anchors = estimator.anchors, reference_estimator.anchors
    assert anchors.keys() == reference_anchors.keys()
    differences["anchors"] = max(
        (_relative(anchors[k], a) for k, a in reference_anchors.items()), default=0.0
    )
    for name, difference in differences.items():
        assert difference <= RELATIVE, (name, difference)
        if record is not None:
            record[name] = max(record.get(name, 0.0), difference)


def _random_quaternion(rng: np.random.Generator, tilt: float) -> np.ndarray:
    """A unit quaternion (x, y, z, w) about a random axis by up to ``tilt`` [rad]."""
    axis = rng.normal(size=3)
    angle = rng.uniform(-tilt, tilt)
    return np.concatenate([np.sin(angle / 2) * axis / np.linalg.norm(axis), [np.cos(angle / 2)]])


def random_readings(
    model: WholeBodyModel, rng: np.random.Generator, time: float, weight: float
) -> RobotReadings:
    """Random readings: tilted IMU, loads across the thresholds, odd accelerometers."""
    q_j = model.initial_configuration()[7:] + rng.normal(0.0, 0.2, model.ndof)
    dq_j = rng.normal(0.0, 0.5, model.ndof)
    orientation = _random_quaternion(rng, math.pi if rng.random() < 0.2 else 0.4)
    choice = rng.random()
    if choice < 0.15:
        acceleration = np.array([np.nan, 0.0, 9.8])
    elif choice < 0.3:
        acceleration = np.zeros(3)
    else:
        acceleration = rng.normal(0.0, 2.0, 3) + np.array([0.0, 0.0, 9.81])
    wrenches = {}
    for sensor in model.config.ft_sensors:
        if rng.random() < 0.1:
            continue  # a sample without this sensor
        wrench = rng.normal(0.0, 5.0, 6)
        wrench[2] = rng.choice([-1.0, 1.0]) * rng.uniform(0.0, weight)
        wrenches[sensor.name] = wrench
    if rng.random() < 0.1:
        wrenches["unknown"] = np.full(6, np.nan)
    items = list(wrenches.items())
    if rng.random() < 0.3:
        items.reverse()  # the readings' order is the estimate's
    return RobotReadings(
        time=time,
        joint_positions=q_j,
        joint_velocities=dq_j,
        joint_efforts=np.zeros(model.ndof),
        imu=ImuReading(orientation, rng.normal(0.0, 0.5, 3), acceleration),
        wrenches=dict(items),
    )


@pytest.fixture(scope="module")
def g1() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("g1"))


SETTINGS = [
    {},
    {"velocity_cutoff": 10.0},
    {"velocity_cutoff": 10.0, "accelerometer": True},
    {"velocity_cutoff": 5.0, "accelerometer": True, "flat_ground": True},
    {"flat_ground": True, "ground_tolerance": 0.5, "initial_soles": ("right_foot",)},
    {"accelerometer": True, "initial_sole": "right_foot", "initial_sole_position": [0.1, 0, 0.2]},
]


@pytest.mark.parametrize("robot", ["icub", "g1"])
@pytest.mark.parametrize("settings", SETTINGS)
def test_random_sequences(robot, settings, request):
    model = request.getfixturevalue(robot)
    rng = np.random.default_rng(11)
    weight = 9.81 * model.total_mass
    record: dict[str, float] = {}
    for _ in range(12):
        estimator = BaseEstimator(model, **settings)
        reference = ReferenceEstimator(model, **settings)
        time = 0.0 if rng.random() < 0.5 else 1.0
        for sample in range(25):
            readings = random_readings(model, rng, time, weight)
            loads = None
            if not model.config.ft_sensors or rng.random() < 0.3:
                loads = {s.name: rng.uniform(0.0, weight) for s in model.config.soles}
                if rng.random() < 0.3:
                    loads.pop(model.config.soles[0].name)
            compare(
                estimator.update(readings, loads),
                reference.update(readings, loads),
                estimator,
                reference,
                record,
            )
            time += float(rng.choice([0.0, 0.002, 0.001, -0.001, 0.01]))
            if sample == 12:
                anchors = None
                if rng.random() < 0.5:
                    anchors = {model.config.soles[1].name: rng.normal(0.0, 0.1, 3)}
                estimator.reset(anchors)
                reference.reset(anchors)
    assert record["q"] <= RELATIVE


def test_controller_sequence(icub):
    """The regression sequence's readings, fused with the accelerometer and by the controller."""
    controller = make_controller(icub, "torque")
    settings = controller.settings.estimator
    kwargs = {
        "load_threshold": settings.load_threshold,
        "unload_threshold": settings.unload_threshold,
        "initial_soles": tuple(controller.settings.initial_contacts),
        "velocity_cutoff": settings.velocity_cutoff or None,
    }
    reference = ReferenceEstimator(icub, **kwargs)
    fused = BaseEstimator(icub, **kwargs, accelerometer=True)
    fused_reference = ReferenceEstimator(icub, **kwargs, accelerometer=True)
    loaded = set()
    for step in range(STEPS):
        readings = readings_at(icub, step)
        controller.step(readings)
        compare(
            controller.status.estimate, reference.update(readings), controller.estimator, reference
        )
        compare(fused.update(readings), fused_reference.update(readings), fused, fused_reference)
        loaded.add(controller.status.estimate.loaded_soles)
        contact_events(controller, step)
    assert len(loaded) >= 2, loaded


def _invalid(readings: RobotReadings, ndof: int) -> list[RobotReadings]:
    imu = readings.imu
    bad = []
    for field in ("joint_positions", "joint_velocities"):
        for value in (np.zeros(ndof + 1), np.full(ndof, np.nan), np.zeros((ndof, 1)), 0.0):
            bad.append(replace(readings, **{field: value}))
        values = np.zeros(ndof)
        values[3] = np.inf
        bad.append(replace(readings, **{field: values}))
    for value in (np.zeros(4), np.array([0.0, np.nan, 0.0]), [0.0, 0.0]):
        bad.append(replace(readings, imu=replace(imu, angular_velocity=value)))
    name = next(iter(readings.wrenches))
    for value in (np.zeros(5), np.array([0, 0, np.inf, 0, 0, 0.0]), np.zeros((6, 1))):
        bad.append(replace(readings, wrenches={**readings.wrenches, name: value}))
    # Several invalid: the first in the checks' order is named.
    bad.append(
        replace(
            readings,
            joint_velocities=np.full(ndof, np.nan),
            wrenches={**readings.wrenches, name: np.zeros(2)},
        )
    )
    bad.append(replace(readings, imu=None))
    return bad


def test_invalid_readings_raise_the_same_errors(icub):
    estimator = BaseEstimator(icub, velocity_cutoff=10.0, accelerometer=True)
    reference = ReferenceEstimator(icub, velocity_cutoff=10.0, accelerometer=True)
    good = readings_at(icub, 0)
    compare(estimator.update(good), reference.update(good), estimator, reference)
    for step, readings in enumerate(_invalid(good, icub.ndof)):
        with pytest.raises(InputError) as raised:
            reference.update(readings)
        with pytest.raises(InputError) as expected:
            estimator.update(readings)
        assert str(expected.value) == str(raised.value)
        # Nothing changed: the next valid sample gives the same estimate.
        valid = readings_at(icub, step + 1)
        compare(estimator.update(valid), reference.update(valid), estimator, reference)
    # The quaternion's size, unchecked before (a ValueError when unpacked), is named.
    wrong = replace(good, imu=replace(good.imu, orientation_xyzw=np.zeros(3)))
    with pytest.raises(InputError, match="orientation_xyzw"):
        estimator.update(wrong)


def test_measured_differences(icub):
    """What the module docstring states: q, the loads, the wrenches and the anchors
    bit-identical on random samples; v and the still velocity to rounding (measured: 0)."""
    rng = np.random.default_rng(3)
    record: dict[str, float] = {}
    estimator = BaseEstimator(icub, velocity_cutoff=10.0, accelerometer=True)
    reference = ReferenceEstimator(icub, velocity_cutoff=10.0, accelerometer=True)
    for sample in range(300):
        readings = random_readings(icub, rng, 0.002 * sample, 9.81 * icub.total_mass)
        new, old = estimator.update(readings), reference.update(readings)
        compare(new, old, estimator, reference, record)
    for name in ("q", "loads", "wrenches", "anchors"):
        assert record[name] == 0.0, record
    assert record["v"] < 4e-16 and record["still"] < 4e-16, record


def _signature_counts() -> dict[str, int]:
    counts = {}
    for module in (estimator_kernels, zmp_kernels):
        for name in dir(module):
            dispatcher = getattr(module, name)
            if hasattr(dispatcher, "signatures") and hasattr(dispatcher, "py_func"):
                counts[f"{module.__name__}.{name}"] = len(dispatcher.signatures)
    return counts


@pytest.mark.parametrize("mode", ["torque", "ik"])
def test_the_controller_steps_compile_nothing_after_the_warm_up(icub, mode):
    estimator_kernels.warm_up()
    zmp_kernels.warm_up()
    controller = make_controller(icub, mode)
    controller.estimator.accelerometer = True  # the shipped torque mode's
    before = _signature_counts()
    called = ("estimate_base", "zmp_with_base_velocity", "zmp_from_momentum")
    assert all(before[name] >= 1 for name in before if name.endswith(called)), before
    for step in range(STEPS):
        controller.step(readings_at(icub, step))
        contact_events(controller, step)
    assert _signature_counts() == before


def test_copied_placements_when_not_read_in_place(icub, monkeypatch):
    """Where data.oMf cannot be read as one array (another SE3 layout), the kernel reads a
    copy of the frames it needs, refreshed before each call: the same estimates."""
    monkeypatch.setattr(base_estimator, "_placements_view", lambda data, n_frames: None)
    estimator = BaseEstimator(icub, velocity_cutoff=10.0, accelerometer=True)
    assert estimator._copied_frames
    reference = ReferenceEstimator(icub, velocity_cutoff=10.0, accelerometer=True)
    for step in range(STEPS):
        readings = readings_at(icub, step)
        compare(estimator.update(readings), reference.update(readings), estimator, reference)


def test_placements_are_read_in_place(icub):
    estimator = BaseEstimator(icub)
    assert not estimator._copied_frames
    rows = estimator._placements
    for frame_id in range(len(icub.model.frames)):
        placement = estimator.data.oMf[frame_id]
        assert np.shares_memory(rows[frame_id], placement.translation)
        assert np.array_equal(rows[frame_id, :9], placement.rotation.ravel(order="F"))


def test_reset_anchors_must_name_soles(icub):
    estimator = BaseEstimator(icub)
    estimator.reset({"right_foot": np.array([0.0, -0.14, 0.0])})
    assert list(estimator.anchors) == ["right_foot"]
    with pytest.raises(InputError, match="anchors"):
        estimator.reset({"nose": np.zeros(3)})
