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

import math
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


def _quaternion_xyzw(rotation: list[list[float]]) -> np.ndarray:
    """:func:`~wbm_description.conventions.quaternion_xyzw_from_rotation` on Python floats.

    The same Shepperd's method, branch by branch (w >= 0), without numpy's per-element calls.
    """
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rotation
    trace = r00 + r11 + r22
    if trace > 0.0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = ((r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s, s / 4)
    elif r00 > r11 and r00 > r22:
        s = 2.0 * math.sqrt(1.0 + r00 - r11 - r22)
        q = (s / 4, (r01 + r10) / s, (r02 + r20) / s, (r21 - r12) / s)
    elif r11 > r22:
        s = 2.0 * math.sqrt(1.0 + r11 - r00 - r22)
        q = ((r01 + r10) / s, s / 4, (r12 + r21) / s, (r02 - r20) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + r22 - r00 - r11)
        q = ((r02 + r20) / s, (r12 + r21) / s, s / 4, (r10 - r01) / s)
    norm = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if q[3] < 0.0:
        norm = -norm
    return np.array(q) / norm


def _cross(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """The cross product a x b of two 3-vectors of Python floats."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


class ImuModel:
    """The IMU read from Pinocchio data the step already computed (no kinematics pass of its own).

    Args:
        model: The Pinocchio model.
        frame_id: IMU frame.
    """

    def __init__(self, model: pin.Model, frame_id: int):
        frame = model.frames[frame_id]
        self.frame_id = frame_id
        self.joint = frame.parentJoint
        self.rotation_in_joint = frame.placement.rotation.copy()  # R_f: IMU axes in joint axes
        self._offset = frame.placement.translation.tolist()  # p_f, joint axes [m]
        self._rotation_transposed = self.rotation_in_joint.T.copy()

    def proper_acceleration(self, twist: np.ndarray, acceleration_gf: np.ndarray) -> np.ndarray:
        """Proper acceleration of the IMU origin in IMU axes [m/s^2], (3,).

        Args:
            twist: Spatial velocity (v, w) of the IMU's joint, joint frame, (6,).
            acceleration_gf: Spatial acceleration minus gravity of that joint (Pinocchio's
                ``data.a_gf``), joint frame, (6,).

        The classical acceleration of the origin p_f of the IMU frame (a + alpha x p_f + w x
        (v + w x p_f)), with gravity folded in: a_gf's linear part already holds -g.
        """
        v = twist.tolist()
        a = acceleration_gf.tolist()
        w = v[3:]
        point_velocity = _cross(w, self._offset)
        point_velocity = (
            v[0] + point_velocity[0],
            v[1] + point_velocity[1],
            v[2] + point_velocity[2],
        )
        angular_term = _cross(a[3:], self._offset)
        centripetal = _cross(w, point_velocity)
        classical = np.array(
            [
                a[0] + angular_term[0] + centripetal[0],
                a[1] + angular_term[1] + centripetal[1],
                a[2] + angular_term[2] + centripetal[2],
            ]
        )
        return self._rotation_transposed @ classical

    def orientation_and_gyro(
        self, joint_rotation: np.ndarray, twist: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Orientation (x, y, z, w) of the IMU in the world and its angular velocity (IMU axes).

        Args:
            joint_rotation: Orientation of the IMU's joint in the world, 3 x 3.
            twist: Spatial velocity (v, w) of that joint, joint frame, (6,).
        """
        rotation = joint_rotation @ self.rotation_in_joint
        gyro = self._rotation_transposed @ twist[3:]
        return _quaternion_xyzw(rotation.tolist()), gyro


class ForceTorqueFromStep:
    """F/T readings from the step's own forward dynamics: sensors at the end of a joint's body.

    For a sensor whose child side B holds no joints (a foot below its ankle sensor), the
    Newton-Euler balance of B needs only the twist v and the acceleration minus gravity a_gf of
    its joint j, which the step's ABA has computed, and the external wrench f_ext on B:

        w_P->B = I_B a_gf + v x* (I_B v) - f_ext,   reading = -(S^-1 w_P->B) (sensor frame).

    Every sensor is evaluated at once: one product for the momenta I_B v, the cross products
    on floats, one product for the readings.

    Args:
        sensors: The sensors (none may have joints on its child side).

    Raises:
        ValueError: A sensor has joints on its child side.
    """

    def __init__(self, sensors: Sequence[ForceTorqueSensorModel]):
        for sensor in sensors:
            if sensor.child_joints:
                raise ValueError(f"F/T sensor '{sensor.name}' has joints on its child side")
        self.names = tuple(sensor.name for sensor in sensors)
        self.joints = tuple(sensor.joint for sensor in sensors)
        n = len(sensors)
        self._inertia = np.zeros((6 * n, 6 * n))  # block diagonal: I_B per sensor (lin, ang)
        # Per sensor, rows of its reading: (-S^-1) I_B on a_gf, -S^-1 on the bias, S^-1 on f_ext,
        # for the stacked (a_gf of every sensor, bias of every sensor, f_ext of every sensor).
        self._reading_map = np.zeros((6 * n, 18 * n))
        for k, sensor in enumerate(sensors):
            block = slice(6 * k, 6 * k + 6)
            inertia = sensor.child_inertia.matrix()
            self._inertia[block, block] = inertia
            rotation = sensor.joint_to_sensor.rotation
            offset = sensor.joint_to_sensor.translation
            # actInv on forces: joint frame to sensor frame.
            transform = np.zeros((6, 6))
            transform[:3, :3] = rotation.T
            transform[3:, 3:] = rotation.T
            transform[3:, :3] = -rotation.T @ _skew(offset)
            self._reading_map[block, block] = -transform @ inertia
            self._reading_map[block, 6 * n + 6 * k : 6 * n + 6 * k + 6] = -transform
            self._reading_map[block, 12 * n + 6 * k : 12 * n + 6 * k + 6] = transform

    def wrenches(
        self,
        twists: Sequence[np.ndarray],
        accelerations: Sequence[np.ndarray],
        external_on_child: Sequence[list[float]],
    ) -> dict[str, np.ndarray]:
        """Child-on-parent wrench at each sensor, sensor axes (force [N], torque [N m]).

        Args:
            twists: Per sensor, the spatial velocity (v, w) of its joint, joint frame, (6,).
            accelerations: Per sensor, its joint's acceleration minus gravity (``data.a_gf``),
                joint frame, (6,).
            external_on_child: Per sensor, the total external wrench on B (force, torque about
                the joint origin), joint frame, 6 floats.

        Returns:
            The readings by sensor name, (6,) each.
        """
        twist = np.concatenate(twists)
        momenta = (self._inertia @ twist).tolist()
        velocities = twist.tolist()
        terms = np.concatenate(accelerations).tolist()
        bias = []
        for k in range(len(self.names)):
            v = velocities[6 * k : 6 * k + 6]
            h = momenta[6 * k : 6 * k + 6]
            # v x* h for a spatial force h = (f, n): (w x f, v x f + w x n).
            force = _cross(v[3:], h[:3])
            torque_a = _cross(v[:3], h[:3])
            torque_b = _cross(v[3:], h[3:])
            bias += [
                force[0],
                force[1],
                force[2],
                torque_a[0] + torque_b[0],
                torque_a[1] + torque_b[1],
                torque_a[2] + torque_b[2],
            ]
        terms += bias
        for wrench in external_on_child:
            terms += wrench
        readings = self._reading_map @ np.array(terms)
        return {name: readings[6 * k : 6 * k + 6] for k, name in enumerate(self.names)}


def _skew(vector: np.ndarray) -> np.ndarray:
    """The matrix [p]x with [p]x f = p x f, 3 x 3."""
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
