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

Per sample: one Pinocchio pass with the base at the origin, then one compiled call for the
arithmetic and the soles' bookkeeping (:mod:`wbm_control.jit.estimator_kernels`; the Python
float code it replaced is kept as the reference in tests/control/test_jit_estimator.py).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_control.jit import estimator_kernels
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

    def __init__(
        self,
        q: np.ndarray,
        v: np.ndarray,
        loaded_soles: tuple[str, ...],
        foot_wrenches_world: dict[str, np.ndarray],
        normal_forces: dict[str, float],
        still_base_velocity: np.ndarray | None = None,
    ):
        # The fields set straight into the instance (a frozen dataclass sets each one through
        # object.__setattr__: twice the time, for an object built every step).
        fields = self.__dict__
        fields["q"], fields["v"], fields["loaded_soles"] = q, v, loaded_soles
        fields["foot_wrenches_world"], fields["normal_forces"] = foot_wrenches_world, normal_forces
        fields["still_base_velocity"] = still_base_velocity


class _WrenchLayout(NamedTuple):
    """How one sample's F/T readings (their names, in the readings' order) enter the kernel.

    Attributes:
        names: The names of the estimator's sensors among the readings, in their order.
        sensors: int64 (len(names),): each one's index among the estimator's sensors.
        sole_rows: int64 (n_soles,): each sole's sensor's index in ``names``, -1 for none.
        force_items: (sole, sole index) of the soles with a reading, in ``sensor_of_sole``'s
            order (the order of :attr:`BaseEstimate.normal_forces`).
        inputs: The view of the estimator's input buffer this sample fills.
        wrench_lengths: (6, 6, ...): the wrenches' expected lengths.
    """

    names: tuple[str, ...]
    sensors: np.ndarray
    sole_rows: np.ndarray
    force_items: tuple[tuple[str, int], ...]
    inputs: np.ndarray
    wrench_lengths: tuple[int, ...]


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
        # Per-sample constants. The sole names in the config's order.
        self._soles = tuple(self.sole_frame_ids)
        self._nq, self._nv = self.pin_model.nq, self.pin_model.nv
        self._ndof = self._nv - 6
        # The kernel's inputs (jit.estimator_kernels): the configuration of the pass (base at
        # the origin, identity), then the sample's readings; one buffer, filled by one
        # concatenate. Its first nq entries are the pass's configuration.
        self._sensors = tuple(self.sensor_frame_ids)
        self._inputs = np.zeros(self._nq + self._ndof + 10 + 6 * len(self._sensors))
        self._q_base_frame = self._inputs[: self._nq]
        self._q_base_frame[:] = pin.neutral(self.pin_model)
        self._base_pose = self._q_base_frame[:7].copy()
        self._no_accelerometer = np.zeros(3)
        self._layouts: dict[tuple[str, ...], _WrenchLayout] = {}
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
        # All the placements as one (nframes x 12) array over the same memory, for the kernel,
        # which reads the IMU's, the soles' and the sensors' rows (:func:`_placements_view`).
        frame_ids = (
            self.imu_frame_id,
            *(self.sole_frame_ids[s] for s in self._soles),
            *self.sensor_frame_ids.values(),
        )
        self._placements = _placements_view(self.data, len(self.pin_model.frames))
        self._copied_frames: tuple[int, ...] = ()
        if self._placements is None:  # not Pinocchio's layout: copied before each kernel call
            self._placements = np.zeros((len(frame_ids), 12))
            self._copied_frames = frame_ids
            frame_ids = tuple(range(len(frame_ids)))
        self._frame_rows = np.array(frame_ids, dtype=np.int64)
        # The joint Jacobians (world axes, which are the base axes at the base origin; a view of
        # self.data.J) and, for the IMU then each sole, the joints that move it (its parent
        # joint's support), as 0/1 columns: the spatial velocity each of them has from the
        # joints (:meth:`_joint_velocities`, and the kernel's sums).
        self._jacobians = self.data.J
        self._joint_jacobians = self._jacobians[:, 6:]
        self._supports = np.zeros((self._ndof, 1 + len(self._soles)))
        moved = (self.imu_frame_id, *(self.sole_frame_ids[s] for s in self._soles))
        for column, frame_id in enumerate(moved):
            for joint in self.pin_model.supports[frames[frame_id].parentJoint]:
                start = self.pin_model.joints[joint].idx_v - 6
                if start >= 0:
                    self._supports[start : start + self.pin_model.joints[joint].nv, column] = 1.0
        self._loaded_soles_names: dict[int, tuple[str, ...]] = {}
        self.initial_sole_position = (
            np.zeros(3)
            if initial_sole_position is None
            else np.array(initial_sole_position, dtype=float)
        )
        self._initial_position = np.array(self.initial_sole_position, dtype=float)
        self._initial = np.array(
            [self._soles.index(s) for s in dict.fromkeys((initial_sole, *self.initial_soles))],
            dtype=np.int64,
        )
        # Loads from another source for the soles without an F/T sensor [N] (``sole_loads``).
        self._sensorless = tuple(
            (i, s) for i, s in enumerate(self._soles) if s not in self.sensor_of_sole
        )
        self._loads = np.zeros(len(self._soles))
        self._load_known = np.zeros(len(self._soles), dtype=np.int64)
        # The kernel's state: jit.estimator_kernels' module docstring.
        self._state = np.zeros(estimator_kernels.STATE_SIZE)
        self._flags = np.zeros((len(self._soles), 2), dtype=np.int64)  # loaded, armed
        self._anchor_positions = np.zeros((len(self._soles), 3))  # [m], world
        self._forces = np.zeros(len(self._soles))  # the sample's normal forces [N]
        self._work = np.zeros((2 * len(self._soles) + 1 + len(self._sensors), 6))
        self._loads_given = False
        self.reset()

    def reset(self, anchors: Mapping[str, np.ndarray] | None = None) -> None:
        """Forget the state; optionally give the soles' world positions to anchor them at.

        Raises:
            InputError: ``anchors`` names a sole the robot does not have.
        """
        self._state[:] = 0.0
        self._flags[:] = 0
        self._anchor_positions[:] = 0.0
        for name, position in (anchors or {}).items():
            if name not in self.sole_frame_ids:
                raise InputError("anchors", f"sole names among {list(self._soles)}", name)
            i = self._soles.index(name)
            self._anchor_positions[i] = np.asarray(position, dtype=float)
            self._flags[i] = 1  # loaded and armed: released when its load drops

    @property
    def anchors(self) -> dict[str, np.ndarray]:
        """Sole name to the world position it is assumed fixed at (loaded soles only)."""
        return {
            sole: self._anchor_positions[i].copy()
            for i, sole in enumerate(self._soles)
            if self._flags[i, 0]
        }

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

        Pinocchio's pass at the base origin (:meth:`_kinematics_in_base`), then one kernel
        (:func:`~wbm_control.jit.estimator_kernels.estimate_base`) for the sample's arithmetic
        and the soles' bookkeeping; here: the readings into the kernel's buffer (one
        concatenate), its results into the estimate's dicts.

        Args:
            readings: The robot's sensors.
            sole_loads: Sole name to its load (normal force) [N] from another source (the
                contact estimate, :mod:`wbm_control.contact_estimation`), used for the soles
                without an F/T sensor; an F/T reading wins where there is one.

        Raises:
            InputError: No IMU reading, or a reading of the wrong size or not finite (the first
                in the order joint positions, joint velocities, gyro, F/T sensors; then the IMU
                quaternion's and, with ``accelerometer``, the accelerometer's size).
        """
        imu = readings.imu
        if imu is None:
            raise InputError("readings.imu", "an IMU reading (the estimator needs it)")
        wrenches = readings.wrenches
        layout = self._layouts.get(tuple(wrenches))
        if layout is None:
            layout = self._layout(tuple(wrenches))
        q_j, dq_j, gyro = readings.joint_positions, readings.joint_velocities, imu.angular_velocity
        quaternion = imu.orientation_xyzw
        acceleration = imu.linear_acceleration if self.accelerometer else self._no_accelerometer
        samples = [wrenches[name] for name in layout.names]
        try:
            ndof = self._ndof
            valid = (
                len(q_j) == ndof
                and len(dq_j) == ndof
                and len(gyro) == 3
                and len(quaternion) == 4
                and len(acceleration) == 3
                and tuple(map(len, samples)) == layout.wrench_lengths
            )
            if valid:
                np.concatenate(
                    (self._base_pose, q_j, dq_j, gyro, quaternion, acceleration, *samples),
                    out=layout.inputs,
                )
        except (TypeError, ValueError):
            valid = False
        if not valid:
            self._raise_invalid(readings)
        pin.computeJointJacobians(self.pin_model, self.data, self._q_base_frame)
        pin.updateFramePlacements(self.pin_model, self.data)
        if self._copied_frames:
            self._copy_placements()
        if sole_loads and self._sensorless:
            for i, sole in self._sensorless:
                load = sole_loads.get(sole)
                self._load_known[i] = load is not None
                if load is not None:
                    self._loads[i] = float(load)
            self._loads_given = True
        elif self._loads_given:
            self._load_known[:] = 0
            self._loads_given = False
        cutoff = self.velocity_cutoff
        q, v = np.empty(self._nq), np.empty(self._nv)
        world, still = np.empty((len(layout.names), 6)), np.empty(3)
        status = estimator_kernels.estimate_base(
            self._placements,
            self._frame_rows,
            self._jacobians,
            self._supports,
            layout.inputs,
            layout.sensors,
            layout.sole_rows,
            self._loads,
            self._load_known,
            self._initial,
            self._initial_position,
            self._gravity,
            self._state,
            self._flags,
            self._anchor_positions,
            q,
            v,
            world,
            still,
            self._forces,
            self._work,
            float(readings.time),
            float(self.load_threshold),
            float(self.unload_threshold),
            0.0 if cutoff is None else float(cutoff),
            bool(self.accelerometer),
        )
        if status & estimator_kernels.NOT_FINITE:
            self._raise_invalid(readings)
        if status & estimator_kernels.NEW_ANCHORS and self.flat_ground:
            self._anchor_on_ground(status >> estimator_kernels.NEW_SHIFT)
        values = self._forces.tolist()
        normal_forces = {sole: values[i] for sole, i in layout.force_items}
        if sole_loads:
            for sole, load in sole_loads.items():
                if sole not in self.sensor_of_sole:
                    normal_forces[sole] = float(load)
        fixed = (status >> estimator_kernels.FIXED_SHIFT) & estimator_kernels.SOLE_MASK
        loaded_soles = self._loaded_soles_names.get(fixed)
        if loaded_soles is None:
            loaded_soles = tuple(sorted(s for i, s in enumerate(self._soles) if fixed >> i & 1))
            self._loaded_soles_names[fixed] = loaded_soles
        return BaseEstimate(
            q,
            v,
            loaded_soles,
            dict(zip(layout.names, world)),  # noqa: B905 (as many rows as names)
            normal_forces,
            still if fixed else None,
        )

    def _layout(self, names: tuple[str, ...]) -> _WrenchLayout:
        """The layout of a sample with F/T readings of these names (in this order), kept."""
        index = {name: i for i, name in enumerate(self._sensors)}
        known = tuple(name for name in names if name in index)
        rows = {name: row for row, name in enumerate(known)}
        sole_rows = np.array(
            [rows.get(self.sensor_of_sole.get(sole, ""), -1) for sole in self._soles],
            dtype=np.int64,
        )
        force_items = tuple(
            (sole, self._soles.index(sole))
            for sole, sensor in self.sensor_of_sole.items()
            if sensor in rows
        )
        layout = _WrenchLayout(
            known,
            np.array([index[name] for name in known], dtype=np.int64),
            sole_rows,
            force_items,
            self._inputs[: self._nq + self._ndof + 10 + 6 * len(known)],
            (6,) * len(known),
        )
        self._layouts[names] = layout
        return layout

    def _raise_invalid(self, readings: RobotReadings) -> None:
        """Raise the InputError that names the first invalid reading (the checks' order)."""
        self._checked_inputs(readings)
        quaternion = np.asarray(readings.imu.orientation_xyzw, dtype=float)
        if quaternion.shape != (4,):
            raise InputError("readings.imu.orientation_xyzw", "4 values", quaternion.shape)
        acceleration = np.asarray(readings.imu.linear_acceleration, dtype=float)
        raise InputError("readings.imu.linear_acceleration", "3 values", acceleration.shape)

    def _copy_placements(self) -> None:
        """The placements the kernel reads, copied (when they are not read in place)."""
        oMf = self.data.oMf
        for row, frame_id in enumerate(self._copied_frames):
            placement = oMf[frame_id]
            self._placements[row, :9] = placement.rotation.ravel(order="F")
            self._placements[row, 9:] = placement.translation

    def _anchor_on_ground(self, new: int) -> None:
        """Lower the soles anchored in this sample (bit i: sole i) onto the flat ground."""
        rotation = self._state[2:11].reshape(3, 3).copy()  # the estimate's base rotation
        for i, sole in enumerate(self._soles):
            if new >> i & 1:
                anchor = self._anchor_positions[i]
                below = self._height_above_ground(sole, float(anchor[2]), rotation)
                anchor[2] = float(anchor[2]) - below

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


def _placements_view(data: pin.Data, n_frames: int) -> np.ndarray | None:
    """``data.oMf`` as one (n_frames x 12) float array over Pinocchio's memory, or None.

    Pinocchio keeps the frame placements in one contiguous vector of SE3, each a 3 x 3
    rotation (column-major) then a translation: 12 doubles, 96 bytes. The view is checked
    against each frame's own views (addresses and values); None when the layout differs (a
    build with another SE3 layout: the caller copies the placements it needs). ``data`` must
    outlive the view and never be resized (an estimator's own data: never).
    """
    oMf = data.oMf
    start = oMf[0].rotation.__array_interface__["data"][0]
    step = 12 * ctypes.sizeof(ctypes.c_double)
    for i in range(n_frames):
        placement = oMf[i]
        rotation, translation = placement.rotation, placement.translation
        if (
            rotation.__array_interface__["data"][0] != start + i * step
            or translation.__array_interface__["data"][0] != start + i * step + 72
            or not rotation.flags.f_contiguous
        ):
            return None
    buffer = (ctypes.c_double * (12 * n_frames)).from_address(start)
    view = np.ctypeslib.as_array(buffer).reshape(n_frames, 12)
    for i in range(n_frames):
        placement = oMf[i]
        if not (
            np.array_equal(view[i, :9], placement.rotation.ravel(order="F"))
            and np.array_equal(view[i, 9:], placement.translation)
        ):
            return None
    return view
