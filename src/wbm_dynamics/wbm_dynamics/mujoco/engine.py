"""The MuJoCo engine: the engine protocol (:class:`~wbm_dynamics.engine.Engine`) on MuJoCo.

:class:`MujocoEngine` runs the model of :func:`.model_builder.build_mujoco_robot` with
MuJoCo's own dynamics, contacts (soft constraints, :mod:`.settings`) and integrator, and speaks
wbm's conventions at its edge (:mod:`.conversions`, :mod:`wbm_description.robot_io`):

- joint servos: the command is held by our simulator's :class:`~wbm_dynamics.actuation.
  JointServos` (same validation, same "not commanded" rules) and handed to one MuJoCo actuator
  per joint as force = ctrl - kp' q - kd' dq, with ctrl = effort + kp' q_ref + kd' dq_ref and
  kp' = kp where a position is commanded, kd' = kd where a position or a velocity is
  commanded (0 elsewhere), clamped by MuJoCo to the torque limits. This is the servo law
  tau = effort + kp (q_ref - q) + kd (dq_ref - dq), saturated, with MuJoCo integrating the
  velocity gain implicitly (``implicitfast``);
- joint friction: MuJoCo's joint damping (viscous) and frictionloss (Coulomb, a soft
  constraint in MuJoCo, an explicit -k_c sign(dq) torque in our simulator);
- joint position limits: MuJoCo's soft limit constraints (default solref), where our simulator
  has inelastic stops;
- readings: encoders and the IMU orientation and gyro at the current state; the accelerometer,
  the F/T sensors and the joint efforts from the last step (MuJoCo evaluates its sensors before
  integrating), as our simulator does;
- F/T: MuJoCo's ``force``/``torque`` sensors report the wrench the parent body exerts on the
  sensor body's subtree (from ``cfrc_int``), at the site, in site axes; wbm's convention is the
  wrench the child side exerts on the parent side, so the readings are negated;
- pushes: a wrench at a frame origin in world axes, applied through ``xfrc_applied`` (world
  axes, at the body's centre of mass) with the torque moved to the centre of mass at the state
  at the start of each step, and held over the step (over every stage of RK4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from wbm_description.conventions import quaternion_wxyz_to_xyzw
from wbm_description.exceptions import InputError, NameNotFound
from wbm_description.robot_io import ImuReading, JointCommand, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.actuation import JointServos
from wbm_dynamics.engine import Engine, GroundTruth, Push, servo_gains
from wbm_dynamics.mujoco.model_builder import IMU_SITE, MujocoRobotModel, build_mujoco_robot
from wbm_dynamics.mujoco.settings import MujocoSettings


@dataclass
class _Push(Push):
    body: int  # the pushed body
    offset_in_body: np.ndarray  # frame origin in the body frame [m]


class MujocoEngine(Engine):
    """Simulates one robot with MuJoCo, with the engine protocol of our Simulator.

    Args:
        model: The whole-body model built from a robot config, e.g.
            ``WholeBodyModel.from_config(load_robot("icub"))``.
        settings: MuJoCo settings (time step, integrator, contact constants).
        servo_kp: Servo stiffness per joint [N m/rad], model order; default the config's.
        servo_kd: Servo damping per joint [N m s/rad], model order; default the config's.
        max_speed: Divergence guard: a generalized velocity entry above this [m/s or rad/s]
            stops the simulation.

    Raises:
        ConfigError: The model has no robot config, or MuJoCo cannot represent it.
        InputError: Gains of the wrong length, or a non-positive max_speed.
    """

    def __init__(
        self,
        model: WholeBodyModel,
        settings: MujocoSettings | None = None,
        *,
        servo_kp: np.ndarray | None = None,
        servo_kd: np.ndarray | None = None,
        max_speed: float = 1.0e3,
    ):
        if not (isinstance(max_speed, int | float) and math.isfinite(max_speed) and max_speed > 0):
            raise InputError("max_speed", "a finite speed > 0", max_speed)
        self.robot = model
        self.settings = settings if settings is not None else MujocoSettings()
        self.mujoco_robot: MujocoRobotModel = build_mujoco_robot(model, self.settings)
        self.model = self.mujoco_robot.model
        self.data = mujoco.MjData(self.model)
        self._kinematics = mujoco.MjData(self.model)
        self.state_map = self.mujoco_robot.state_map
        self.dt = float(self.model.opt.timestep)
        self.max_speed = float(max_speed)
        config = model.config
        kp, kd = servo_gains(model, servo_kp, servo_kd)
        self.servos = JointServos(
            kp,
            kd,
            self.mujoco_robot.torque_limits,
            np.asarray(model.viscous_friction),
            np.asarray(model.coulomb_friction),
        )
        self._imu_site = (
            mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, IMU_SITE)
            if config.imu_frame is not None
            else -1
        )
        self._sole_of_geom = {geom: sole for sole, geom in self.mujoco_robot.sole_geoms.items()}
        self.reset()

    # ------------------------------------------------------------------ state

    @property
    def q(self) -> np.ndarray:
        """Current configuration, Pinocchio layout (nq,)."""
        return self.state_map.q_from_qpos(self.data.qpos)

    @property
    def v(self) -> np.ndarray:
        """Current generalized velocity, Pinocchio layout (base twist in base axes) (nv,)."""
        return self.state_map.v_from_qvel(self.data.qpos, self.data.qvel)

    def reset(self, q: object = None, v: object = None) -> None:
        """Restart at time 0 from (q, v) (see :meth:`Engine.reset`)."""
        q0, v0 = self._restart(q, v)
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = self.state_map.qpos_from_q(q0)
        self.data.qvel[:] = self.state_map.qvel_from_v(q0, v0)
        self.servos.clear()
        self._apply_command()
        self.data.xfrc_applied[:] = 0.0
        self._bad_acceleration_warnings = 0
        mujoco.mj_forward(self.model, self.data)

    # ------------------------------------------------------------------ inputs

    def set_command(self, command: JointCommand) -> None:
        """Hold a joint command (see :meth:`Engine.set_command` and the module docstring)."""
        self.servos.set_command(command)
        self._apply_command()

    def _apply_command(self) -> None:
        """Actuator ctrl and bias gains of the held command (see the module docstring)."""
        servos = self.servos
        has_position = ~np.isnan(servos.position)
        damped = has_position | ~np.isnan(servos.velocity)
        kp = np.where(has_position, servos.kp, 0.0)
        kd = np.where(damped, servos.kd, 0.0)
        position = np.where(has_position, servos.position, 0.0)
        velocity = np.where(~np.isnan(servos.velocity), servos.velocity, 0.0)
        effort = np.where(np.isnan(servos.effort), 0.0, servos.effort)
        self.model.actuator_biasprm[:, 1] = -kp
        self.model.actuator_biasprm[:, 2] = -kd
        self.data.ctrl[:] = effort + kp * position + kd * velocity

    def apply_wrench(self, frame: str, wrench: object, duration: float) -> None:
        """Push (see :meth:`Engine.apply_wrench`).

        ``frame`` is a link of the URDF (a MuJoCo body) or a frame of the robot config (sole,
        F/T, IMU, tool, contact point).
        """
        anchors = self.mujoco_robot.anchors
        if frame in anchors:
            body = self.mujoco_robot.body_id(anchors[frame].body)
            offset = np.array(anchors[frame].placement.translation)
        else:
            body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, frame)
            if body <= 0:
                names = [self.model.body(i).name for i in range(1, self.model.nbody)]
                raise NameNotFound("frame", frame, [*names, *anchors], where="MuJoCo engine")
            offset = np.zeros(3)
        wrench, end_step = self._push_end(wrench, duration)
        self._pushes.append(_Push(wrench, end_step, body, offset))

    # ------------------------------------------------------------------ stepping

    def step(self, n: int = 1) -> None:
        """Advance n steps of the MuJoCo time step.

        Raises:
            InputError: n is not an integer >= 0.
            SimulationDiverged: MuJoCo found a bad acceleration, or the state became
                non-finite or exploded; further steps raise again until :meth:`reset`.
        """
        remaining = self._steps_to_take(n)
        model, data = self.model, self.data
        while remaining > 0:
            if not self._pushes:
                mujoco.mj_step(model, data, remaining)
                self._count_steps(remaining)
                remaining = 0
            else:
                self._apply_pushes()
                mujoco.mj_step(model, data)
                self._count_steps()
                remaining -= 1
                if not self._pushes:
                    data.xfrc_applied[:] = 0.0
            self._check_divergence()

    def _current_kinematics(self) -> mujoco.MjData:
        """Scratch data holding the body placements of the current state.

        After a step, the main data holds the placements of the state before the step.
        """
        kinematics = self._kinematics
        kinematics.qpos[:] = self.data.qpos
        kinematics.qvel[:] = self.data.qvel
        mujoco.mj_kinematics(self.model, kinematics)
        return kinematics

    def _apply_pushes(self) -> None:
        """xfrc_applied (world axes, at each body's CoM) of the active pushes, current state."""
        kinematics = self._current_kinematics()
        applied = self.data.xfrc_applied
        applied[:] = 0.0
        for push in self._pushes:
            rotation = kinematics.xmat[push.body].reshape(3, 3)
            origin = kinematics.xpos[push.body] + rotation @ push.offset_in_body
            lever = origin - kinematics.xipos[push.body]
            force = push.wrench[:3]
            applied[push.body, :3] += force
            applied[push.body, 3:] += push.wrench[3:] + np.cross(lever, force)

    def _check_divergence(self) -> None:
        data = self.data
        warnings = int(data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number)
        reason = None
        if warnings > self._bad_acceleration_warnings:
            self._bad_acceleration_warnings = warnings
            reason = "MuJoCo reported a bad acceleration (mjWARN_BADQACC) and reset its state"
        elif not (np.all(np.isfinite(data.qpos)) and np.all(np.isfinite(data.qvel))):
            reason = "non-finite state (NaN or inf in qpos or qvel)"
        elif data.qvel.size and float(np.abs(data.qvel).max()) > self.max_speed:
            worst = int(np.abs(data.qvel).argmax())
            reason = f"velocity qvel[{worst}] = {data.qvel[worst]:.3g} exceeds {self.max_speed:g}"
        if reason is not None:
            raise self._diverge(reason)

    # ------------------------------------------------------------------ outputs

    def joint_torques(self) -> np.ndarray:
        """Actuator torques of the last step [N m], model joint order (ndof,)."""
        return self.data.actuator_force.copy()

    def ft_wrenches(self) -> dict[str, np.ndarray]:
        """F/T readings of the last step, by sensor name (robot_io's sign convention).

        Each is the wrench (force [N], torque [N m]) the child side exerts on the parent side,
        at the sensor origin, in sensor axes: MuJoCo's parent-on-child reading, negated.
        """
        data = self.data.sensordata
        return {
            name: -np.concatenate([data[force : force + 3], data[torque : torque + 3]])
            for name, (force, torque) in self.mujoco_robot.sensors.ft.items()
        }

    def _imu_reading(self) -> ImuReading | None:
        sensors = self.mujoco_robot.sensors
        if self._imu_site < 0 or sensors.imu_accelerometer is None:
            return None
        kinematics = self._current_kinematics()
        mujoco.mj_comPos(self.model, kinematics)
        mujoco.mj_comVel(self.model, kinematics)
        rotation = kinematics.site_xmat[self._imu_site].reshape(3, 3)
        quaternion_wxyz = np.empty(4)
        mujoco.mju_mat2Quat(quaternion_wxyz, rotation.reshape(-1))
        if quaternion_wxyz[0] < 0.0:
            quaternion_wxyz = -quaternion_wxyz
        velocity = np.empty(6)  # (angular, linear) in the site frame
        mujoco.mj_objectVelocity(
            self.model, kinematics, mujoco.mjtObj.mjOBJ_SITE, self._imu_site, velocity, 1
        )
        address = sensors.imu_accelerometer
        return ImuReading(
            quaternion_wxyz_to_xyzw(quaternion_wxyz),
            velocity[:3].copy(),
            self.data.sensordata[address : address + 3].copy(),
        )

    def readings(self) -> RobotReadings:
        """What the robot's sensors report now (noise-free)."""
        sm = self.state_map
        return RobotReadings(
            time=self.time,
            joint_positions=self.data.qpos[sm.qpos_index].copy(),
            joint_velocities=self.data.qvel[sm.dof_index].copy(),
            joint_efforts=self.joint_torques(),
            imu=self._imu_reading(),
            wrenches=self.ft_wrenches(),
        )

    def sole_contact_wrenches(self) -> dict[str, np.ndarray]:
        """Per sole, the ground-on-robot wrench of the last step, from MuJoCo's contacts.

        Returns:
            Sole name to (force [N], torque about the world origin [N m]), world axes.
        """
        model, data = self.model, self.data
        wrenches = {sole: np.zeros(6) for sole in self.mujoco_robot.sole_geoms}
        ncon = data.ncon
        if ncon == 0:
            return wrenches
        contacts = data.contact  # the struct of arrays of the step's contacts
        geom1, geom2 = contacts.geom1[:ncon], contacts.geom2[:ncon]
        local = np.empty(6)
        rows, soles, signs, forces = [], [], [], []
        for i in range(ncon):
            g1, g2 = int(geom1[i]), int(geom2[i])
            if g1 in self._sole_of_geom:
                soles.append(self._sole_of_geom[g1])
                signs.append(-1.0)
            elif g2 in self._sole_of_geom:
                soles.append(self._sole_of_geom[g2])
                signs.append(1.0)
            else:
                continue
            # mj_contactForce: the force geom1 exerts on geom2, in the contact frame (normal
            # first); contact.frame rows are the frame's axes in world coordinates.
            mujoco.mj_contactForce(model, data, i, local)
            rows.append(i)
            forces.append(local[:3].copy())
        if not rows:
            return wrenches
        frames = contacts.frame[rows].reshape(-1, 3, 3)
        # force_world = sign * frame^T @ local, for all sole contacts at once
        world = np.asarray(signs)[:, None] * np.einsum("kji,kj->ki", frames, np.asarray(forces))
        torques = np.cross(contacts.pos[rows], world)  # about the world origin
        for k, sole in enumerate(soles):
            wrench = wrenches[sole]
            wrench[:3] += world[k]
            wrench[3:] += torques[k]
        return wrenches

    def ground_truth(self) -> GroundTruth:
        """The true state, and per sole the contact force and centre of pressure.

        ``contact_forces`` and ``contact_positions`` are keyed by sole name (MuJoCo resolves
        each sole as a box, not as corner points): the total ground force on the sole [N] and
        its centre of pressure on the ground plane [m] (NaN when the sole is unloaded).
        """
        forces = {}
        positions = {}
        for sole, wrench in self.sole_contact_wrenches().items():
            force, torque = wrench[:3], wrench[3:]
            forces[sole] = force.copy()
            if force[2] > 1e-9:
                positions[sole] = np.array([-torque[1] / force[2], torque[0] / force[2], 0.0])
            else:
                positions[sole] = np.full(3, np.nan)
        data = self.data
        return GroundTruth(
            time=self.time,
            q=self.q,
            v=self.v,
            contact_forces=forces,
            contact_positions=positions,
            joint_torques=self.joint_torques(),
            contact_solver_converged=bool(data.solver_niter[0] < self.model.opt.iterations),
        )
