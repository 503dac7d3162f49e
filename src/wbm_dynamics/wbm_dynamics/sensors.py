"""Simulated sensors: 6-axis force/torque sensors and the IMU (noise: :mod:`wbm_dynamics.noise`).

F/T sensors (seed 004, section 8.4.4: the sensor is a welded joint that measures the wrench it
transmits). A sensor frame S splits the rigid body of its parent joint j into the parent side
and the child side B (the URDF links beyond the sensor's fixed joint, e.g. the foot), plus every
joint subtree hanging from B. Newton-Euler on the child side, with the generalized acceleration
and the external forces of the step, gives the wrench the parent side applies to it:

    w_P->B = I_B a_j + v_j x* (I_B v_j) - I_B g_j - f_ext,B + sum_k (jXk)^* f_k,

with I_B the inertia of B, (v_j, a_j) the twist and acceleration of body j, g_j gravity, all in
frame j, and f_k the wrench transmitted into each child subtree k (Pinocchio's RNEA ``data.f``).
The reading follows :mod:`wbm_description.robot_io`: the child-on-parent wrench
w_B->P = -w_P->B, at the sensor origin, in sensor axes.

IMU: orientation of the IMU frame in the world, angular velocity in IMU axes, and proper
acceleration (classical acceleration of the IMU origin minus gravity) in IMU axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_description.conventions import quaternion_xyzw_from_rotation
from wbm_description.robot_io import ImuReading

_LOCAL = pin.ReferenceFrame.LOCAL


@dataclass(frozen=True)
class ForceTorqueSensorModel:
    """What one F/T sensor needs, precomputed from the model.

    Attributes:
        name: Sensor name (the robot config's).
        frame: Sensor frame name.
        joint: Parent joint j of the sensor frame.
        joint_to_sensor: Placement of the sensor frame in the frame of joint j.
        child_inertia: Inertia of the child side B of body j, in the frame of joint j.
        child_joints: Joints whose subtrees hang from B.
        child_frames: Frame ids of B (the sensor frame and its descendants on body j).
    """

    name: str
    frame: str
    joint: int
    joint_to_sensor: pin.SE3
    child_inertia: pin.Inertia
    child_joints: tuple[int, ...]
    child_frames: frozenset[int]

    @classmethod
    def build(
        cls, model: pin.Model, name: str, frame: str, beyond: Sequence[int]
    ) -> ForceTorqueSensorModel:
        """Split the sensor's body at the sensor frame.

        Args:
            model: The Pinocchio model.
            name: Sensor name.
            frame: Sensor frame.
            beyond: The sensor frame and every frame below it
                (:meth:`~wbm_description.whole_body_model.WholeBodyModel.frames_below`).
        """
        frame_id = model.getFrameId(frame)
        sensor = model.frames[frame_id]
        joint = sensor.parentJoint
        inertia = pin.Inertia.Zero()
        child_joints = []
        for i in sorted(beyond):
            item = model.frames[i]
            if item.type == pin.FrameType.JOINT and item.parentJoint != joint:
                child_joints.append(item.parentJoint)
            elif item.parentJoint == joint and item.type == pin.FrameType.FIXED_JOINT:
                # A fixed joint frame carries the inertia of its child link, in its own axes.
                inertia += item.placement.act(item.inertia)
        on_body = frozenset(i for i in beyond if model.frames[i].parentJoint == joint)
        return cls(
            name, frame, joint, sensor.placement.copy(), inertia, tuple(child_joints), on_body
        )

    def wrench(self, model: pin.Model, data: pin.Data, external_on_child: pin.Force) -> np.ndarray:
        """Child-on-parent wrench at the sensor, sensor axes (force [N], torque [N m]), (6,).

        Args:
            model: The model.
            data: Data after ``pin.rnea(model, data, q, v, a, fext)`` of the step.
            external_on_child: Total external wrench on B (contacts, pushes), frame of joint j.
        """
        j = self.joint
        inertia = self.child_inertia
        twist = data.v[j]
        # data.a_gf: acceleration of body j with gravity folded in (a - g), frame j.
        parent_on_child = inertia * data.a_gf[j] + twist.cross(inertia * twist) - external_on_child
        for k in self.child_joints:
            parent_on_child += data.liMi[k].act(data.f[k])
        return -self.joint_to_sensor.actInv(parent_on_child).vector


def imu_reading(
    model: pin.Model,
    data: pin.Data,
    frame_id: int,
    q: np.ndarray,
    v: np.ndarray,
    q_step: np.ndarray,
    v_step: np.ndarray,
    a_step: np.ndarray,
) -> ImuReading:
    """IMU reading: orientation and gyro at (q, v), accelerometer from the last step.

    Args:
        model: The model.
        data: Scratch data (overwritten).
        frame_id: IMU frame.
        q: Current configuration.
        v: Current velocity.
        q_step: Configuration at the start of the last step.
        v_step: Velocity at the start of the last step.
        a_step: Generalized acceleration of the last step.
    """
    pin.forwardKinematics(model, data, q_step, v_step, a_step)
    acceleration = pin.getFrameClassicalAcceleration(model, data, frame_id, _LOCAL).linear
    rotation_step = pin.updateFramePlacement(model, data, frame_id).rotation
    proper = acceleration - rotation_step.T @ model.gravity.linear
    pin.forwardKinematics(model, data, q, v)
    rotation = pin.updateFramePlacement(model, data, frame_id).rotation
    gyro = pin.getFrameVelocity(model, data, frame_id, _LOCAL).angular
    return ImuReading(quaternion_xyzw_from_rotation(rotation), gyro.copy(), proper.copy())
