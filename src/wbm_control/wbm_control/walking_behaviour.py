"""Walking in the whole-body controller: the walking facade as a per-tick reference source.

:class:`WalkingBehaviour` is registered in :attr:`WholeBodyController.reference_sources`. It leaves
the controller alone until the first walking command (cmd_vel, plan, goal): then it builds the
walking facade with the feet where they are, lowers the CoM to the walking settings' height over
:data:`HEIGHT_CHANGE_DURATION` (bent knees give the swing leg its reach), and from then on, at each
control step, after the base estimate and before the mode's step, it:

1. reads the CoM position and velocity at the estimate and the feet's normal forces from their
   F/T sensors (:class:`~wbm_control.walking.ContactState`: touch-down is measured, not only
   timed); a sole without an F/T sensor reads its estimated load gated by its estimated height
   and speed (:mod:`wbm_control.walking.touchdown_estimate`);
2. runs :meth:`WalkingController.update`;
3. applies its contact commands to the controller's contact set: ``ReleaseContact`` releases the
   sole (its frame task takes over), ``ActivateContact`` holds it where it touched down (x, y and
   yaw measured by the estimate, on the planned ground height, flat);
4. gives the swing sole's frame task the swing trajectory's pose, velocity and acceleration
   (feed-forward; in mode "torque" raised or lowered onto the ground where the estimate stands,
   see :meth:`WalkingBehaviour.ground_height`), and the CoM task the pattern generator's CoM,
   velocity and acceleration horizontally (the CoM task's DCM feedback then picks the ZMP in the
   support polygon of the held soles: the DCM/ZMP stabilizer); vertically the walking height;
5. turns the base orientation reference and the other frame tasks (hands) with the walking frame
   (at the planned CoM, yawed as the mean of the feet, the swing foot's yaw taken from its swing
   reference so that the frame turns smoothly), so that the robot keeps its upper-body posture.

Both modes use the same references: the torque mode's QP tracks them as accelerations, the IK
mode as position targets (its CoM target is the reference moved by the DCM feedback, see
:mod:`wbm_control.ik_mode`).

Frames: the estimator's world (z up, ground at z = 0, the left sole at the origin at start).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from wbm_control.base_estimator import BaseEstimate
from wbm_control.controller import WholeBodyController
from wbm_control.ik_mode import IkMode
from wbm_control.trajectories import quintic_time_scaling
from wbm_control.walking import (
    ActivateContact,
    ContactState,
    FootContactReading,
    ReleaseContact,
    WalkingController,
    WalkingGeometry,
    WalkingReferences,
    WalkingSettings,
)
from wbm_control.walking.footsteps import Footstep
from wbm_control.walking.touchdown_estimate import TouchdownEstimate
from wbm_description.exceptions import InputError

#: Duration of the CoM's move from the standing height to the walking height [s].
HEIGHT_CHANGE_DURATION = 1.0


def _yaw_rotation(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _mean_yaw(a: float, b: float) -> float:
    return a + 0.5 * math.atan2(math.sin(b - a), math.cos(b - a))


class WalkingBehaviour:
    """Connects a :class:`WalkingController` to a :class:`WholeBodyController`.

    Args:
        controller: The whole-body controller (its model has two soles, left and right).
        settings: Walking settings (robot-dependent fields left to None are measured on the
            model at the first step).
        left_sole: Name of the left sole in the robot config.
        right_sole: Name of the right sole in the robot config.

    Attributes:
        walking: The walking facade, built at the first walking command (None before: the
            behaviour leaves the controller alone until then).
        references: The references of the last step (None before).
    """

    def __init__(
        self,
        controller: WholeBodyController,
        settings: WalkingSettings | None = None,
        *,
        left_sole: str = "left_foot",
        right_sole: str = "right_foot",
    ):
        self.controller = controller
        self.settings = settings or WalkingSettings()
        self.left_sole, self.right_sole = left_sole, right_sole
        self.walking: WalkingController | None = None
        self.references: WalkingReferences | None = None
        self._last: tuple[BaseEstimate, float] | None = None
        self._activated: float | None = None
        self._data = controller.pin_model.createData()
        self._com_height: float | None = None
        self._relative: dict[str, pin.SE3] = {}
        self._base_relative: np.ndarray | None = None
        self._ground = 0.0
        estimator = controller.contact_estimator  # soles without F/T: touch-down estimated
        self._touchdown_estimate = (
            None
            if estimator is None
            else TouchdownEstimate(estimator.height_tolerance, estimator.speed_tolerance)
        )
        controller.reference_sources.append(self)

    # ------------------------------------------------------------------ commands

    @property
    def active(self) -> bool:
        """Whether walking drives the references (from the first walking command on)."""
        return self._activated is not None

    def _command(self, name: str, *args):
        """Apply a command to the facade, building it at the first one (feet where they are).

        The first command also starts lowering the CoM to the walking height; the facade's
        clock starts :data:`HEIGHT_CHANGE_DURATION` later (its first update).
        """
        if self._last is None:
            raise InputError(name, "a command after the controller's first step", args)
        estimate, t = self._last
        walking = self.walking
        if walking is None:
            geometry = WalkingGeometry.from_model(
                self.controller.model,
                estimate.q,
                left_sole=self.left_sole,
                right_sole=self.right_sole,
            )
            settings = self.settings
            if isinstance(self.controller.mode, IkMode):  # step timing: torque mode only (on,
                settings = settings.replace(step_timing_weight=0.0)  # iCub's 1 m ik walk fell)
                if settings.ik_zmp_inward_offset is not None:  # mode ik's own (config/g1)
                    settings = settings.replace(zmp_inward_offset=settings.ik_zmp_inward_offset)
            walking = WalkingController(geometry, settings, time=t)
        result = getattr(walking, name)(*args)  # raises on a bad command: nothing changes
        if self.walking is None:
            self.walking = walking
            self._activate(t)
        return result

    def set_velocity_command(self, vx: float, vy: float, wz: float):
        """Walk at a velocity (see :meth:`WalkingController.set_velocity_command`).

        Raises:
            InputError: A value is not finite (nothing changes).
        """
        if not all(math.isfinite(v) for v in (vx, vy, wz)):
            raise InputError("cmd_vel", "finite values", (vx, vy, wz))
        if self.walking is None and max(abs(vx), abs(vy), abs(wz)) == 0.0:
            return (0.0, 0.0, 0.0), False  # standing already: nothing to do
        return self._command("set_velocity_command", vx, vy, wz)

    def set_footstep_plan(self, steps: list[Footstep]):
        """Walk an explicit plan (see :meth:`WalkingController.set_footstep_plan`)."""
        return self._command("set_footstep_plan", list(steps))

    def set_goal(self, x: float, y: float, yaw: float):
        """Walk to a pose (see :meth:`WalkingController.set_goal`)."""
        return self._command("set_goal", x, y, yaw)

    def stop(self):
        """Stop with the feet side by side."""
        if self.walking is None:
            return None
        return self._command("stop")

    # ------------------------------------------------------------------ the tick

    def _activate(self, t: float) -> None:
        controller = self.controller
        self._activated = t
        self._com_start = (t, float(controller.com_reference()[2]))
        self._com_xy = controller.com_reference()[:2].copy()
        self._com_height = self.walking.settings.require_com_height()
        sm = self.walking.state_machine
        frame = self._walking_frame(sm.foot("left"), sm.foot("right"), controller.com_reference())
        soles = {controller.tasks.task_of_sole[s] for s in (self.left_sole, self.right_sole)}
        for name in controller.tasks.frames:
            if name not in soles:
                self._relative[name] = frame.actInv(controller.frame_reference(name))
        rotation = controller.tasks.base_orientation.rotation_reference
        self._base_relative = frame.rotation.T @ rotation

    @staticmethod
    def _walking_frame(left: Footstep, right: Footstep, com: np.ndarray) -> pin.SE3:
        """The walking frame: at the CoM's ground projection, yawed as the mean of the feet."""
        return pin.SE3(
            _yaw_rotation(_mean_yaw(left.yaw, right.yaw)), np.array([com[0], com[1], 0])
        )

    def contact_state(self, estimate: BaseEstimate) -> ContactState:
        """The feet's normal forces [N] from their F/T sensors.

        A sole the robot config gives no F/T sensor reads the controller's contact estimate
        instead, its load gated by its estimated height and speed
        (:class:`~wbm_control.walking.touchdown_estimate.TouchdownEstimate`).
        """
        forces = estimate.normal_forces
        readings = {
            sole: FootContactReading(normal_force=forces.get(sole))
            for sole in (self.left_sole, self.right_sole)
        }
        controller = self.controller
        if controller.contact_estimate is not None and self._touchdown_estimate is not None:
            contact = controller.contact_estimate
            gated = self._touchdown_estimate.readings(
                contact.heights, contact.speeds, contact.loads if contact.torque_wrenches else None
            )
            for sole in readings:
                if sole not in controller.estimator.sensor_of_sole:
                    readings[sole] = gated[sole]
        return ContactState(readings[self.left_sole], readings[self.right_sole])

    def __call__(self, controller: WholeBodyController, estimate: BaseEstimate, t: float) -> None:
        """One tick (see the module docstring)."""
        self._last = (estimate, t)
        if self._activated is None:
            return
        tasks = controller.tasks
        height, height_rate, height_acceleration = self._height(t)
        if t < self._activated + HEIGHT_CHANGE_DURATION:  # lowering the CoM, then walking
            tasks.com.track(
                np.array([*self._com_xy, height]),
                np.array([0.0, 0.0, height_rate]),
                np.array([0.0, 0.0, height_acceleration]),
            )
            return
        model = controller.pin_model
        com = pin.centerOfMass(model, self._data, estimate.q, estimate.v).copy()
        com_velocity = self._data.vcom[0].copy()
        references = self.walking.update(t, com, com_velocity, self.contact_state(estimate))
        self.references = references
        if isinstance(controller.mode, IkMode):  # position control: the IK's CoM command
            controller.mode.walking_references = references
        for command in references.contact_commands:
            if isinstance(command, ReleaseContact):
                controller.release_contact(command.sole)
                self._ground = self.ground_height(controller, estimate, command.sole)
            elif isinstance(command, ActivateContact):
                held = self._touchdown(controller, estimate, command)
                controller.activate_contact(command.sole, held)
                # Steps planned from this foot start where it is held, not where it was planned.
                self.walking.correct_landing(
                    command.side, Footstep.from_placement(command.side, held)
                )
        for side, sample in references.swing.items():
            sole = self.left_sole if side == "left" else self.right_sole
            task = tasks.frames[tasks.task_of_sole[sole]]
            pose = sample.pose
            if self._ground != 0.0:
                lifted = pose.translation + np.array([0.0, 0.0, self._ground])
                pose = pin.SE3(pose.rotation, lifted)
            task.track((pose, sample.velocity, sample.acceleration))
        position = np.array([references.com[0], references.com[1], height])
        velocity = np.array([references.com_velocity[0], references.com_velocity[1], height_rate])
        acceleration = np.array(
            [references.com_acceleration[0], references.com_acceleration[1], height_acceleration]
        )
        tasks.com.track(position, velocity, acceleration)
        sm = self.walking.state_machine
        feet = {side: sm.foot(side) for side in ("left", "right")}
        for side, sample in references.swing.items():  # the swing foot where it is planned now
            rotation = sample.pose.rotation
            feet[side] = Footstep(side, 0.0, 0.0, math.atan2(rotation[1, 0], rotation[0, 0]))
        frame = self._walking_frame(feet["left"], feet["right"], position)
        tasks.base_orientation.rotation_reference = frame.rotation @ self._base_relative
        twist = np.concatenate([velocity, np.zeros(3)])
        for name, relative in self._relative.items():
            tasks.frames[name].track((frame * relative, twist, np.zeros(6)))

    def ground_height(
        self, controller: WholeBodyController, estimate: BaseEstimate, lifted: str
    ) -> float:
        """Where the estimate puts the ground during the swing of sole ``lifted`` [m].

        The height of the other (stance) sole in the estimator's world (its anchor: constant
        during the swing). The footsteps are planned on the ground at z = 0, but the
        estimator anchors each sole where it lands, so the estimated ground drifts with the
        walk (a heel that strikes first anchors the sole a little high: iCub, 3 m at
        0.26 m/s, the estimate rose 6 to 11 mm on the compliant contact and 10 to 15 mm on
        MuJoCo). A swing planned down to z = 0 then meets the real ground that much early,
        while still moving forward (touch-downs 82-100 ms before the planned end of a 0.5 s
        swing, the sole 1-2 cm short of its footstep): so in mode "torque" the swing
        reference is shifted by this height. Mode "ik" keeps the planned ground (0).
        """
        if isinstance(controller.mode, IkMode):
            return 0.0
        stance = self.right_sole if lifted == self.left_sole else self.left_sole
        frame_id = controller.sole_frame_ids[stance]
        pin.framesForwardKinematics(controller.pin_model, self._data, estimate.q)
        return float(self._data.oMf[frame_id].translation[2])

    def _height(self, t: float) -> tuple[float, float, float]:
        """The CoM height reference [m], its rate [m/s] and acceleration [m/s^2].

        From the standing height to the walking settings' ``com_height`` above the ground (bent
        knees give the swing leg its reach) along a quintic of :data:`HEIGHT_CHANGE_DURATION`.
        """
        start, h0 = self._com_start
        s, ds, dds = quintic_time_scaling(t - start, HEIGHT_CHANGE_DURATION)
        delta = self._com_height - h0
        return h0 + s * delta, ds * delta, dds * delta

    def _touchdown(
        self, controller: WholeBodyController, estimate: BaseEstimate, command: ActivateContact
    ) -> pin.SE3:
        """Where a sole is held from touch-down.

        x, y and yaw where the estimate puts the sole, flat on the planned ground height. In
        mode "ik" the height is the footstep's ground plane, not the swing reference's at the
        touch-down (below the ground after a late touch-down lowered it: the servos would hold
        the stance sole that far into the ground and lift the robot).
        """
        frame_id = controller.sole_frame_ids[command.sole]
        pin.framesForwardKinematics(controller.pin_model, self._data, estimate.q)
        measured = self._data.oMf[frame_id]
        yaw = math.atan2(measured.rotation[1, 0], measured.rotation[0, 0])
        height = command.placement.translation[2]
        if isinstance(controller.mode, IkMode):
            height = self.walking.state_machine.foot(command.side).placement().translation[2]
        position = np.array([measured.translation[0], measured.translation[1], height])
        return pin.SE3(_yaw_rotation(yaw), position)
