"""Ground reaction wrenches from the foot F/T sensors (seed 004, eqs 8.7-8.8, quasi-static).

An ankle F/T sensor measures the wrench that its child side (the foot below it) exerts on its
parent side (the leg), at the sensor origin, in sensor axes (the convention of
:mod:`wbm_description.robot_io`). The ground pushes on the foot; the foot's own weight sits
between the ground and the sensor. In static equilibrium of the foot,

    ground_on_foot + gravity_on_foot + leg_on_foot = 0,   leg_on_foot = -measured,

so the ground reaction is the measured wrench, moved to the world, minus the foot's gravity
wrench (m g at its CoM). Foot accelerations are neglected (the quasi-static assumption of every
F/T-based CoP estimate); the error is m_foot * a_foot.

Pure numpy and Pinocchio (no ROS).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_description.exceptions import InputError, NameNotFound
from wbm_description.support_geometry import wrench_in_world
from wbm_description.whole_body_model import WholeBodyModel

_BODY = pin.FrameType.BODY
_JOINT = pin.FrameType.JOINT
_FIXED_JOINT = pin.FrameType.FIXED_JOINT


@dataclass(frozen=True)
class ForceSensorSide:
    """An F/T sensor with what hangs below it.

    Attributes:
        name: Sensor name (the robot config's ``ft_sensors`` key).
        frame: The sensor frame.
        frame_id: Its Pinocchio frame id.
        child_frame_ids: Frames on the child side (the sensor frame and every frame below it).
        sole_names: Soles of the robot config whose frame is on the child side.
    """

    name: str
    frame: str
    frame_id: int
    child_frame_ids: tuple[int, ...]
    sole_names: tuple[str, ...]


class FootForceSensors:
    """The robot config's F/T sensors and the soles below them, for CoP and support polygon.

    Args:
        model: The whole-body model, built from a robot config.

    Raises:
        InputError: The model has no robot config.
        NameNotFound: A sensor frame is not in the model (the config checks prevent it).
    """

    def __init__(self, model: WholeBodyModel):
        if model.config is None:
            raise InputError(
                "model", "a model built from a robot config (WholeBodyModel.from_config)"
            )
        self.model = model
        pin_model = model.model
        sensors = []
        for sensor in model.config.ft_sensors:
            frame_id = model.frame_id(sensor.frame)
            below = list(model.frames_below(sensor.frame))
            # A sensor given as a link: the link's own inertia sits on the fixed joint above it.
            parent_id = pin_model.frames[frame_id].parentFrame
            if (
                pin_model.frames[frame_id].type == _BODY
                and pin_model.frames[parent_id].type == _FIXED_JOINT
            ):
                below.append(parent_id)
            soles = tuple(
                sole.name for sole in model.config.soles if model.frame_id(sole.frame) in below
            )
            sensors.append(
                ForceSensorSide(sensor.name, sensor.frame, frame_id, tuple(below), soles)
            )
        self.sensors: tuple[ForceSensorSide, ...] = tuple(sensors)
        self._by_name = {sensor.name: sensor for sensor in self.sensors}
        self._data = pin_model.createData()

    def sensor(self, name: str) -> ForceSensorSide:
        """The sensor called ``name`` (the robot config's ``ft_sensors`` key)."""
        try:
            return self._by_name[name]
        except KeyError:
            raise NameNotFound("F/T sensor", name, self._by_name) from None

    def child_side_inertia(self, q: np.ndarray, name: str) -> tuple[float, np.ndarray]:
        """Mass [kg] and world position of the CoM [m] of everything below a sensor.

        Rigid bodies fixed below the sensor are frame inertias; a movable joint below the sensor
        brings its whole subtree (Pinocchio merges fixed children into the joint's inertia).
        """
        sensor = self.sensor(name)
        pin_model = self.model.model
        data = self._data
        pin.framesForwardKinematics(pin_model, data, self.model.check_configuration(q))
        sensor_joint = pin_model.frames[sensor.frame_id].parentJoint
        mass = 0.0
        moment = np.zeros(3)
        for frame_id in sensor.child_frame_ids:
            frame = pin_model.frames[frame_id]
            if frame.parentJoint == sensor_joint and frame.inertia.mass > 0.0:
                mass += frame.inertia.mass
                moment += frame.inertia.mass * data.oMf[frame_id].act(frame.inertia.lever)
            elif (
                frame.type == _JOINT
                and pin_model.frames[frame.parentFrame].parentJoint == sensor_joint
            ):
                # A movable joint right below the sensor's rigid body: its whole subtree.
                for joint_id in pin_model.subtrees[frame.parentJoint]:
                    inertia = pin_model.inertias[joint_id]
                    mass += inertia.mass
                    moment += inertia.mass * data.oMi[joint_id].act(inertia.lever)
        com = moment / mass if mass > 0.0 else data.oMf[sensor.frame_id].translation.copy()
        return mass, com

    def ground_reaction(self, q: np.ndarray, name: str, measured: np.ndarray) -> np.ndarray:
        """The ground-on-robot wrench below a sensor, from its reading (quasi-static).

        Args:
            q: Configuration, Pinocchio layout (nq,).
            name: Sensor name.
            measured: Reading (force [N], torque [N m]): child side on parent side, at the sensor
                origin, sensor axes.

        Returns:
            (force [N], torque about the world origin [N m]), world axes.
        """
        measured = np.asarray(measured, dtype=float)
        if measured.shape != (6,) or not np.all(np.isfinite(measured)):
            raise InputError("measured", "6 finite values (force, torque)", measured)
        sensor = self.sensor(name)
        q = self.model.check_configuration(q)
        world_T_sensor = self.model.frame_placement(q, sensor.frame)
        wrench = wrench_in_world(world_T_sensor, measured)
        mass, com = self.child_side_inertia(q, name)
        gravity_force = mass * np.asarray(self.model.model.gravity.linear)
        gravity_wrench = np.concatenate([gravity_force, np.cross(com, gravity_force)])
        return wrench - gravity_wrench

    def ground_reactions(
        self, q: np.ndarray, readings: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """:meth:`ground_reaction` of every sensor with a reading."""
        return {name: self.ground_reaction(q, name, wrench) for name, wrench in readings.items()}
