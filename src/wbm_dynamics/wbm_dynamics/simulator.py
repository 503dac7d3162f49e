"""The dynamics simulator: floating-base forward dynamics with contacts, servos and sensors.

One :class:`Simulator` advances a whole-body model at a fixed time step (seed 004, Fig. 8.4):

1. contact forces from the state (compliant spring-dampers, or a rigid Coulomb-cone problem);
2. actuator torques from the held joint command (servo PD + feed-forward, saturated) and joint
   friction;
3. forward dynamics (Pinocchio's ABA) with the contact forces and pushes as external forces;
4. integration on the configuration manifold (``pin.integrate``: the base quaternion stays unit)
   with semi-implicit Euler (v first, then q with the new v; damping terms implicit) or RK4
   (classical Runge-Kutta, Munthe-Kaas corrected on the base so that it stays 4th order; with
   rigid contacts, the steps where a contact is active use the time-stepping scheme, which is
   first order by construction: RK4's stages would move the bodies as if unconstrained);
5. joint position limits as inelastic stops: a joint that would pass its limit gets, by an
   internal joint impulse (the robot's momentum is conserved), the velocity that lands it on it;
6. a divergence check: a non-finite or exploding state stops the simulation with the reason.

Readings (:meth:`Simulator.readings`) are what a robot reports, noise-free: encoders at the
current state, IMU orientation and gyro at the current state, and the accelerometer and F/T
sensors from the last step (its acceleration and the external forces that acted during it). The
ground truth (:meth:`Simulator.ground_truth`) adds the state and the force at every contact
point. :class:`Simulator` implements the engine protocol (:class:`~wbm_dynamics.engine.Engine`).

Conventions: :mod:`wbm_description.conventions` (q, v in Pinocchio's layout; wrenches of the
environment on the robot, world axes, at the point or frame origin). Joint arrays in model order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_description.robot_io import ImuReading, JointCommand, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.actuation import ActuatorTorques, JointServos
from wbm_dynamics.compliant_contact import CompliantContactModel
from wbm_dynamics.contact_points import (
    ContactKinematics,
    ContactPointSet,
    ContactPointSpec,
    points_from_config,
)
from wbm_dynamics.engine import Engine, GroundTruth, Push, servo_gains
from wbm_dynamics.environment import Environment
from wbm_dynamics.exceptions import SimulationDiverged
from wbm_dynamics.external_forces import ExternalForces
from wbm_dynamics.rigid_contact import RigidContactSolver
from wbm_dynamics.sensors import (
    ForceTorqueFromStep,
    ForceTorqueSensorModel,
    ImuModel,
    imu_reading,
)
from wbm_dynamics.settings import SimulatorSettings

__all__ = ["GroundTruth", "SimulationDiverged", "Simulator", "SimulatorSettings"]


@dataclass
class _Push(Push):
    frame_id: int  # the pushed frame
    joint: int  # its parent joint


@dataclass
class _StepRecord:
    """What acted during the last step, for the sensors."""

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    kinematics: ContactKinematics
    contact_forces: np.ndarray  # one row per point of ``kinematics``
    pushes: list[_Push]
    joint_torques: np.ndarray
    converged: bool
    # The contact wrench on each joint of ``kinematics.selection`` (joint frames), (g, 6), and
    # whether the simulator's data still holds this step's forward dynamics (ABA at q, v with
    # the step's forces: the joints' twists and accelerations the sensors read).
    joint_wrenches: np.ndarray | None = None
    from_dynamics: bool = False


class Simulator(Engine):
    """Simulates one robot in the environment of its settings.

    Args:
        model: The whole-body model, e.g. ``WholeBodyModel.from_config(load_robot("icub"))``.
        settings: Simulation settings (defaults: 1 ms, semi-implicit Euler, compliant contacts).
        contact_points: Contact points; default: the sole corners and contact points of the
            model's robot config (none without a config).
        servo_kp: Servo stiffness per joint [N m/rad], model order; default the config's.
        servo_kd: Servo damping per joint [N m s/rad], model order; default the config's.

    Raises:
        InputError: A contact point on an unknown frame, or gains of the wrong length.
    """

    def __init__(
        self,
        model: WholeBodyModel,
        settings: SimulatorSettings | None = None,
        *,
        contact_points: Sequence[ContactPointSpec] | None = None,
        servo_kp: np.ndarray | None = None,
        servo_kd: np.ndarray | None = None,
    ):
        self.robot = model
        self.settings = settings if settings is not None else SimulatorSettings()
        settings = self.settings
        self.dt = settings.dt
        # An own copy of the Pinocchio model: its armature carries the implicit damping.
        self.model = pin.Model(model.model)
        self.model.armature[:] = 0.0
        self.data = self.model.createData()
        self._sensor_data = self.model.createData()
        self.floating_base = model.floating_base
        self._jq = 7 if self.floating_base else 0
        self._jv = 6 if self.floating_base else 0
        config = model.config
        if contact_points is None:
            contact_points = points_from_config(config) if config is not None else []
        self.environment = Environment(settings.ground_friction, settings.boxes.values())
        self.contact_points = ContactPointSet(self.model, contact_points)

        kp, kd = servo_gains(model, servo_kp, servo_kd)
        limits = np.asarray(model.torque_limits, dtype=float)
        limits = np.where(np.isfinite(limits) & (limits > 0.0), limits, np.inf)
        self.servos = JointServos(
            kp, kd, limits, np.asarray(model.viscous_friction), np.asarray(model.coulomb_friction)
        )
        lower, upper = model.joint_position_limits
        self._lower = np.where(np.isfinite(lower) & (lower < upper), lower, -np.inf)
        self._upper = np.where(np.isfinite(upper) & (lower < upper), upper, np.inf)

        self._compliant = settings.contact_model == "compliant"
        self._rk4 = settings.integrator == "rk4"
        self.compliant_contact = CompliantContactModel(
            settings.compliant, self.environment, self.contact_points.size
        )
        self.rigid_contact = RigidContactSolver(
            self.model, settings.rigid, self.environment, self.contact_points
        )
        self._margin = 0.0 if self._compliant else settings.rigid.activation_distance

        self.ft_sensors: list[ForceTorqueSensorModel] = []
        self._ft_points: list[np.ndarray] = []  # per sensor, (points,) bool
        self.imu_frame_id: int | None = None
        if config is not None:
            frame_of_point = [model.frame_id(point.frame) for point in self.contact_points.specs]
            point_joint = self.contact_points.joint.tolist()
            for sensor in config.ft_sensors:
                beyond = set(model.frames_below(sensor.frame))
                ft = ForceTorqueSensorModel.build(self.model, sensor.name, sensor.frame, beyond)
                self.ft_sensors.append(ft)
                # The points on the sensor's body beyond the sensor (points on joints below
                # are in the transmitted wrenches of those joints).
                self._ft_points.append(
                    np.array(
                        [
                            f in ft.child_frames and joint == ft.joint
                            for f, joint in zip(frame_of_point, point_joint, strict=True)
                        ],
                        dtype=bool,
                    ).reshape(-1)
                )
            if config.imu_frame is not None:
                self.imu_frame_id = model.frame_id(config.imu_frame)
        # Per sensor: whether its points are all the points of its joint (then the joint's
        # total contact wrench is the one on its child side).
        self._ft_whole_joint = [
            bool(np.array_equal(mask, self.contact_points.joint == ft.joint))
            for ft, mask in zip(self.ft_sensors, self._ft_points, strict=True)
        ]

        # Sensors read from the step's forward dynamics (see readings()): live views on the
        # twists and accelerations of the sensors' joints in self.data, and on the IMU joint's
        # placement and twist in the sensor data.
        self._imu: ImuModel | None = None
        if self.imu_frame_id is not None:
            self._imu = ImuModel(self.model, self.imu_frame_id)
            joint = self._imu.joint
            self._imu_views = (
                self.data.v[joint].vector,
                self.data.a_gf[joint].vector,
                self._sensor_data.oMi[joint].rotation,
                self._sensor_data.v[joint].vector,
            )
        self._ft_from_step: ForceTorqueFromStep | None = None
        if all(self._ft_whole_joint) and not any(ft.child_joints for ft in self.ft_sensors):
            self._ft_from_step = ForceTorqueFromStep(self.ft_sensors)
            self._ft_views = (
                [self.data.v[ft.joint].vector for ft in self.ft_sensors],
                [self.data.a_gf[ft.joint].vector for ft in self.ft_sensors],
            )
        self._no_wrench = [0.0] * 6
        self._armature_damping: np.ndarray | None = None  # what model.armature holds (dt d)
        self._servo_damping: np.ndarray | None = None  # the servo damping of dt_servo_damping
        self._dt_servo_damping = np.zeros(self.ndof)
        self._tau = np.zeros(self.model.nv)
        self._fext = ExternalForces(self.model.njoints)
        self._sensor_fext = ExternalForces(self.model.njoints)
        self.reset()

    # ------------------------------------------------------------------ state

    @property
    def q(self) -> np.ndarray:
        """Current configuration (a copy), Pinocchio layout."""
        return self._q.copy()

    @property
    def v(self) -> np.ndarray:
        """Current generalized velocity (a copy), Pinocchio layout."""
        return self._v.copy()

    def reset(self, q: object = None, v: object = None) -> None:
        """Restart at time 0 from (q, v) (see :meth:`Engine.reset`)."""
        q0, v0 = self._restart(q, v)
        self._q = q0
        self._v = v0
        self.servos.clear()
        self.compliant_contact.reset()
        self.rigid_contact.reset()
        self._record = _StepRecord(
            q0.copy(),
            v0.copy(),
            np.zeros(self.model.nv),
            self.contact_points.kinematics(self.data, self.environment, -np.inf),
            np.zeros((0, 3)),
            [],
            np.zeros(self.ndof),
            True,
        )

    # ------------------------------------------------------------------ inputs

    def set_command(self, command: JointCommand) -> None:
        """Hold a joint command (see :meth:`Engine.set_command`)."""
        self.servos.set_command(command)

    def apply_wrench(self, frame: str, wrench: object, duration: float) -> None:
        """Push any frame of the model (see :meth:`Engine.apply_wrench`)."""
        frame_id = self.robot.frame_id(frame)
        wrench, end_step = self._push_end(wrench, duration)
        joint = self.model.frames[frame_id].parentJoint
        self._pushes.append(_Push(wrench, end_step, frame_id, joint))

    # ------------------------------------------------------------------ stepping

    def step(self, n: int = 1) -> None:
        """Advance n steps of ``settings.dt``.

        Raises:
            InputError: n is not an integer >= 0.
            SimulationDiverged: The state became non-finite or exploded (the last good state is
                kept; further steps raise again until :meth:`reset`).
        """
        for _ in range(self._steps_to_take(n)):
            if self._rk4:
                self._step_rk4()
            else:
                self._step_semi_implicit()

    def _external_forces(self, data: pin.Data) -> ExternalForces:
        """Pinocchio's per-joint external forces holding the active pushes (joint frames)."""
        fext = self._fext
        fext.clear()
        for push in self._pushes:
            force = self._push_in_joint(data, push)  # alive while its vector view is read
            fext.add(push.joint, force.vector)
        return fext

    def _generalized_torques(self, actuators: ActuatorTorques) -> np.ndarray:
        tau = self._tau
        tau[self._jv :] = actuators.actuator + actuators.friction
        return tau

    def _step_semi_implicit(self) -> None:
        q, v, dt = self._q, self._v, self.dt
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v)
        kinematics = self.contact_points.kinematics(data, self.environment, self._margin)
        actuators = self.servos.torques(q[self._jq :], v[self._jv :])
        if actuators.damping is not self._armature_damping:
            # The implicit damping in the mass matrix: rewritten only when the coefficients
            # change (a new command, a saturation, or another scheme's step).
            model.armature[self._jv :] = dt * actuators.damping
            self._armature_damping = actuators.damping
        tau = self._generalized_torques(actuators)
        fext = self._external_forces(data)
        converged = True
        if self._compliant:
            forces = self.compliant_contact.update_anchors(kinematics)
        else:
            v_free = v + dt * pin.aba(model, data, q, v, tau, fext.forces)
            result = self.rigid_contact.solve(data, q, v_free, kinematics, dt)
            forces, converged = result.forces, result.converged
        wrenches = self.contact_points.add_joint_forces(kinematics, forces, fext)
        a = pin.aba(model, data, q, v, tau, fext.forces).copy()
        v_next = v + dt * a
        q_next = pin.integrate(model, q, v_next * dt)
        # The joints' q + dt v is q_next's joint part (revolute and prismatic joints integrate
        # by addition); a joint past a limit is stopped and the step integrated again.
        stopped = self._stop_at_limits(q, v_next, q_next[self._jq :])
        if stopped:
            q_next = pin.integrate(model, q, v_next * dt)
        servo_damping = actuators.servo_damping
        if servo_damping is not self._servo_damping:
            self._servo_damping = servo_damping
            self._dt_servo_damping = dt * servo_damping
        applied = actuators.actuator - self._dt_servo_damping * a[self._jv :]
        self._commit(
            q_next, v_next, a, kinematics, forces, applied, converged, wrenches, not stopped
        )

    def _dynamics(self, q: np.ndarray, v: np.ndarray, *, contacts: bool):
        """Acceleration at (q, v) with explicit forces (an RK4 stage)."""
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v)
        actuators = self.servos.torques(q[self._jq :], v[self._jv :])
        tau = self._generalized_torques(actuators)
        fext = self._external_forces(data)
        kinematics = None
        forces = None
        if contacts:
            kinematics = self.contact_points.kinematics(data, self.environment, self._margin)
            forces = self.compliant_contact.forces(kinematics)
            self.contact_points.add_joint_forces(kinematics, forces, fext)
        a = pin.aba(model, data, q, v, tau, fext.forces).copy()
        return a, kinematics, forces, actuators.actuator

    def _tangent_rate(self, theta: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """d(theta)/dt such that q0 + theta moves with ``velocity`` (Munthe-Kaas correction)."""
        if not self.floating_base or not theta[:6].any():
            return velocity
        jacobian = pin.dIntegrate(self.model, self._q, theta, pin.ArgumentPosition.ARG1)
        rate = velocity.copy()
        rate[:6] = np.linalg.solve(jacobian[:6, :6], velocity[:6])
        return rate

    def _step_rk4(self) -> None:
        q0, v0, dt = self._q, self._v, self.dt
        model = self.model
        pin.forwardKinematics(model, self.data, q0, v0)
        kinematics0 = self.contact_points.kinematics(self.data, self.environment, self._margin)
        if self._compliant:
            self.compliant_contact.update_anchors(kinematics0)
        elif kinematics0.index.size and (
            self.environment.query(kinematics0.position).distance.min()
            < self.settings.rigid.activation_distance
        ):
            # Rigid contacts active: the velocity-level time-stepping scheme, first order by
            # construction (RK4 stages would move the bodies as if unconstrained in between).
            self._step_semi_implicit()
            return
        model.armature[:] = 0.0
        self._armature_damping = None
        n = self.contact_points.size
        mean_forces = np.zeros((n, 3))
        mean_torques = np.zeros(self.ndof)
        weights = (1.0, 2.0, 2.0, 1.0)
        offsets = (0.0, 0.5, 0.5, 1.0)
        theta = np.zeros(model.nv)
        rates = []
        accelerations = []
        for stage in range(4):
            if stage == 0:
                q, v = q0, v0
            else:
                theta = offsets[stage] * dt * rates[-1]
                q = pin.integrate(model, q0, theta)
                v = v0 + offsets[stage] * dt * accelerations[-1]
            a, kinematics, forces, torques = self._dynamics(q, v, contacts=self._compliant)
            rates.append(self._tangent_rate(theta, v))
            accelerations.append(a)
            weight = weights[stage] / 6.0
            if kinematics is not None and kinematics.index.size:
                mean_forces[kinematics.index] += weight * forces
            mean_torques += weight * torques
        increment = dt / 6.0 * (rates[0] + 2.0 * rates[1] + 2.0 * rates[2] + rates[3])
        v_next = v0 + dt / 6.0 * (
            accelerations[0] + 2.0 * accelerations[1] + 2.0 * accelerations[2] + accelerations[3]
        )
        q_next = pin.integrate(model, q0, increment)
        a = (v_next - v0) / dt
        self._commit(
            q_next, v_next, a, kinematics0, mean_forces[kinematics0.index], mean_torques, True
        )

    def _joint_impulse(
        self, q: np.ndarray, v: np.ndarray, joints: np.ndarray, target: np.ndarray
    ) -> None:
        """Set the velocities of some joints by an internal joint impulse (in place).

        dv = M^-1 S^T mu with mu such that dq[joints] = target: the impulse acts between the
        links of each joint (no base rows), so the robot's momentum is unchanged. M is the true
        mass matrix (the implicit-damping armature is left out).
        """
        columns = joints + self._jv
        armature = self.model.armature.copy()
        self.model.armature[:] = 0.0
        inverse = pin.computeMinverse(self.model, self.data, q)
        self.model.armature[:] = armature
        inverse = np.triu(inverse) + np.triu(inverse, 1).T
        impulse = np.linalg.solve(inverse[np.ix_(columns, columns)], target - v[columns])
        v += inverse[:, columns] @ impulse

    def _stop_at_limits(
        self, q: np.ndarray, v_next: np.ndarray, joints: np.ndarray | None = None
    ) -> bool:
        """Inelastic joint stops before the position update q + dt v (semi-implicit Euler).

        A joint that would pass a limit gets the velocity that lands it exactly on it.

        Args:
            q: Configuration at the start of the step.
            v_next: The step's new velocity (changed in place where a joint stops).
            joints: The joints' q + dt v if already computed.

        Returns:
            Whether a joint was stopped (the simulator's data was then used for M^-1).
        """
        if self.ndof == 0:
            return False
        if joints is None:
            joints = q[self._jq :] + self.dt * v_next[self._jv :]
        if (joints >= self._lower).all() and (joints <= self._upper).all():
            return False
        limit = np.clip(joints, self._lower, self._upper)
        stopped = np.flatnonzero(limit != joints)
        target = (limit[stopped] - q[self._jq :][stopped]) / self.dt
        self._joint_impulse(q, v_next, stopped, target)
        return True

    def _clamp_to_limits(self, q: np.ndarray, v: np.ndarray) -> None:
        """Inelastic joint stops after a step (RK4): clamp, and cancel outward velocities."""
        joints = q[self._jq :]
        if (
            self.ndof == 0
            or float(np.minimum(joints - self._lower, self._upper - joints).min()) >= 0.0
        ):
            return
        below = joints < self._lower
        above = joints > self._upper
        np.clip(joints, self._lower, self._upper, out=joints)
        dq = v[self._jv :]
        stopped = np.flatnonzero((below & (dq < 0.0)) | (above & (dq > 0.0)))
        if stopped.size:
            self._joint_impulse(q, v, stopped, np.zeros(stopped.size))

    def _commit(
        self,
        q_next,
        v_next,
        a,
        kinematics,
        forces,
        torques,
        converged,
        joint_wrenches=None,
        from_dynamics=False,
    ) -> None:
        # pin.integrate keeps the base quaternion unit (measured: 1e-16 after 1e5 steps).
        if self._rk4:
            self._clamp_to_limits(q_next, v_next)
        reason = self._divergence(q_next, v_next)
        if reason is not None:
            raise self._diverge(reason)
        self._record = _StepRecord(
            self._q,
            self._v,
            a,
            kinematics,
            forces,
            list(self._pushes),
            torques,
            converged,
            joint_wrenches,
            from_dynamics,
        )
        self._q = q_next
        self._v = v_next
        self._count_steps()

    def _divergence(self, q: np.ndarray, v: np.ndarray) -> str | None:
        fastest = float(np.abs(v).max())
        if not (math.isfinite(fastest) and math.isfinite(float(q.sum()))):
            return "non-finite state (NaN or inf in q or v)"
        if fastest > self.settings.max_speed:
            worst = int(np.abs(v).argmax())
            return (
                f"velocity v[{worst}] = {v[worst]:.3g} exceeds max_speed "
                f"{self.settings.max_speed:g}"
            )
        if self.floating_base:
            x, y, z = q[0], q[1], q[2]
            distance = math.sqrt(x * x + y * y + z * z)
            if distance > self.settings.max_distance:
                return (
                    f"base {distance:.3g} m from the origin exceeds max_distance "
                    f"{self.settings.max_distance:g} m"
                )
        return None

    # ------------------------------------------------------------------ outputs

    def contact_force_array(self) -> np.ndarray:
        """Mean force at every contact point during the last step, world axes [N], (n, 3)."""
        forces = np.zeros((self.contact_points.size, 3))
        record = self._record
        if record.kinematics.index.size:
            forces[record.kinematics.index] = record.contact_forces
        return forces

    def ground_truth(self) -> GroundTruth:
        """The true state and the contact forces of the last step."""
        record = self._record
        forces = self.contact_force_array()
        positions = np.full((self.contact_points.size, 3), np.nan)
        if record.kinematics.index.size:
            positions[record.kinematics.index] = record.kinematics.position
        names = self.contact_points.names
        return GroundTruth(
            time=self.time,
            q=self._q.copy(),
            v=self._v.copy(),
            contact_forces={name: forces[i].copy() for i, name in enumerate(names)},
            contact_positions={name: positions[i].copy() for i, name in enumerate(names)},
            joint_torques=record.joint_torques.copy(),
            contact_solver_converged=record.converged,
        )

    def ft_wrenches(self) -> dict[str, np.ndarray]:
        """Noise-free F/T readings of the last step, by sensor name (see robot_io's convention)."""
        if not self.ft_sensors:
            return {}
        record = self._record
        model, data = self.model, self._sensor_data
        fext = self._sensor_fext
        fext.clear()
        kinematics = record.kinematics
        joint_totals: dict[int, np.ndarray] = {}
        point_wrenches = None
        if kinematics.index.size:
            # The contact forces act at the points' positions at the start of the step, in the
            # joint frames at that configuration (the rotations of the step's kinematics).
            joints, totals = self.contact_points.joint_wrenches(kinematics, record.contact_forces)
            for joint, total in zip(joints, totals, strict=True):
                fext.add(joint, total)
                joint_totals[joint] = total
            if not all(self._ft_whole_joint):
                point_wrenches = self.contact_points.point_wrenches(
                    kinematics, record.contact_forces
                )
        push_on_joint = []
        if record.pushes:
            pin.forwardKinematics(model, data, record.q)
            for push in record.pushes:
                force = self._push_in_joint(data, push)
                fext.add(push.joint, force.vector)
                push_on_joint.append((push, force))
        pin.rnea(model, data, record.q, record.v, record.a, fext.forces)
        wrenches = {}
        for sensor, mask, whole_joint in zip(
            self.ft_sensors, self._ft_points, self._ft_whole_joint, strict=True
        ):
            on_child = pin.Force.Zero()
            if whole_joint:  # the sensor sees every point of its joint: the joint's total
                if sensor.joint in joint_totals:
                    on_child = pin.Force(joint_totals[sensor.joint])
            elif point_wrenches is not None:
                rows = mask[kinematics.index]
                if rows.any():
                    on_child = pin.Force(point_wrenches[rows].sum(axis=0))
            for push, force in push_on_joint:
                if push.joint == sensor.joint and push.frame_id in sensor.child_frames:
                    on_child += force
            wrenches[sensor.name] = sensor.wrench(model, data, on_child)
        return wrenches

    def _push_in_joint(self, data: pin.Data, push: _Push) -> pin.Force:
        origin = data.oMi[push.joint].act(self.model.frames[push.frame_id].placement)
        at_world = pin.SE3(np.eye(3), origin.translation).act(
            pin.Force(push.wrench[:3], push.wrench[3:])
        )
        return data.oMi[push.joint].actInv(at_world)

    def readings(self) -> RobotReadings:
        """What the robot's sensors report now (noise-free)."""
        record = self._record
        if record.from_dynamics and not record.pushes:
            return self._readings_from_step(record)
        imu = None
        if self.imu_frame_id is not None:
            imu = imu_reading(
                self.model,
                self._sensor_data,
                self.imu_frame_id,
                self._q,
                self._v,
                record.q,
                record.v,
                record.a,
            )
        return RobotReadings(
            self.time,
            self._q[self._jq :].copy(),
            self._v[self._jv :].copy(),
            record.joint_torques.copy(),
            imu,
            self.ft_wrenches(),
        )

    def _readings_from_step(self, record: _StepRecord) -> RobotReadings:
        """:meth:`readings` from the forward dynamics the last step left in ``self.data``.

        The accelerometer and the F/T sensors need the twists and accelerations of their
        joints at the start of the step with the step's acceleration: the step's ABA computed
        them (the same Newton-Euler quantities RNEA would recompute); only the IMU's current
        orientation and gyro take a kinematics pass (at the current state).
        """
        imu = None
        if self._imu is not None:
            twist, acceleration, rotation_now, twist_now = self._imu_views
            proper = self._imu.proper_acceleration(twist, acceleration)
            pin.forwardKinematics(self.model, self._sensor_data, self._q, self._v)
            orientation, gyro = self._imu.orientation_and_gyro(rotation_now, twist_now)
            imu = ImuReading(orientation, gyro, proper)
        wrenches = {}
        if self._ft_from_step is not None and self.ft_sensors:
            selection = record.kinematics.selection
            totals = (
                dict(zip(selection.joints, record.joint_wrenches.tolist(), strict=True))
                if selection is not None and record.joint_wrenches is not None
                else {}
            )
            twists, accelerations = self._ft_views
            on_child = [totals.get(joint, self._no_wrench) for joint in self._ft_from_step.joints]
            wrenches = self._ft_from_step.wrenches(twists, accelerations, on_child)
        elif self.ft_sensors:
            wrenches = self.ft_wrenches()
        return RobotReadings(
            self.time,
            self._q[self._jq :].copy(),
            self._v[self._jv :].copy(),
            record.joint_torques.copy(),
            imu,
            wrenches,
        )
