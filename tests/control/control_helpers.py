"""Helpers of the controller tests (a module of its own: `conftest` names clash across folders)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from wbm_description.robot_io import ImuReading, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel

REPO = Path(__file__).resolve().parents[2]
CONTROLLER_YAML = REPO / "config" / "icub" / "controller.yaml"


def readings_from_state(
    model: WholeBodyModel,
    q: np.ndarray,
    v: np.ndarray,
    ground_wrenches: dict[str, np.ndarray],
    *,
    time: float = 0.0,
) -> RobotReadings:
    """What the robot's sensors read in the state (q, v), computed from ground truth.

    IMU: orientation of imu_frame in the world and its angular velocity in its own axes
    (Pinocchio LOCAL). F/T: the ground wrench on each sole (at the sole origin, world axes)
    expressed at the sensor frame origin in sensor axes: the sensor of a foot of negligible mass
    below it reads the ground's wrench on the foot.
    """
    config = model.config
    data = model.model.createData()
    pin.forwardKinematics(model.model, data, q, v)
    pin.updateFramePlacements(model.model, data)
    imu_id = model.frame_id(config.imu_frame)
    imu_pose = data.oMf[imu_id]
    gyro = pin.getFrameVelocity(model.model, data, imu_id, pin.LOCAL).angular
    wrenches = {}
    for sensor in config.ft_sensors:
        sensor_pose = data.oMf[model.frame_id(sensor.frame)]
        total = np.zeros(6)
        for sole in config.soles:
            sole_frame = model.model.frames[model.frame_id(sole.frame)]
            if (
                sole_frame.parentJoint
                != model.model.frames[model.frame_id(sensor.frame)].parentJoint
            ):
                continue
            w = ground_wrenches.get(sole.name)
            if w is None:
                continue
            sole_pose = data.oMf[model.frame_id(sole.frame)]
            # World axes at the sole origin -> world origin -> sensor frame.
            at_world_origin = pin.SE3(np.eye(3), sole_pose.translation).act(pin.Force(w))
            total += sensor_pose.actInv(at_world_origin).vector
        wrenches[sensor.name] = total
    return RobotReadings(
        time=time,
        joint_positions=q[7:].copy(),
        joint_velocities=v[6:].copy(),
        joint_efforts=np.zeros(model.ndof),
        imu=ImuReading(
            orientation_xyzw=pin.Quaternion(imu_pose.rotation).coeffs().copy(),
            angular_velocity=np.array(gyro),
            linear_acceleration=np.array([0.0, 0.0, 9.81]),
        ),
        wrenches=wrenches,
    )


def interrupt_node(process: subprocess.Popen) -> None:
    """Ctrl-C a node process (SIGINT: its clean shutdown), kill it if it has not ended in 10 s."""
    process.send_signal(2)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def spin_until(executor, condition, timeout: float) -> bool:
    """Spin ``executor`` until ``condition()`` holds or ``timeout`` [s of wall time] passed."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        executor.spin_once(timeout_sec=0.01)
    return condition()
