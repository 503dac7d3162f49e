"""The controller node as a real process over DDS: commands, odom, diagnostics, safety."""

import os
import random
import subprocess
import sys
import time

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from control_helpers import CONTROLLER_YAML, REPO, interrupt_node, readings_from_state, spin_until
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PointStamped, PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

from wbm_control.ros.messages import diagnostic_values
from wbm_description.ros.messages import base_from_odometry, joint_state_message, wrench_message
from wbm_description.ros.node_runtime import EXIT_STARTUP_ERROR

pytestmark = [pytest.mark.process]

RATE = 100.0  # control rate of the node under test [Hz] (cheap on a shared 2-core machine)
STALE = 0.3  # its stale_timeout [s]


@pytest.fixture()
def ros_env():
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 200)))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["ROS_DOMAIN_ID"] = env["ROS_DOMAIN_ID"]
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return env


@pytest.fixture(params=["torque", "ik"])
def controller_process(request, ros_env, tmp_path):
    log_path = tmp_path / "controller.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "wbm_control.ros.controller_node", "--ros-args",
                "--params-file", str(CONTROLLER_YAML),
                "-p", f"control_rate:={RATE}", "-p", f"stale_timeout:={STALE}",
                "-p", f"mode:={request.param}",
            ],
            env=ros_env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
        )  # fmt: skip
        try:
            yield process, log_path, request.param
        finally:
            interrupt_node(process)


class RobotSide(Node):
    """Publishes the sensors of a robot standing still; records what the controller sends."""

    def __init__(self, model):
        super().__init__("fake_robot_side_of_test")
        self.model = model
        sensor_qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.joint_pub = self.create_publisher(JointState, "joint_states", sensor_qos)
        self.imu_pub = self.create_publisher(Imu, "imu", sensor_qos)
        self.ft_pubs = {
            s.name: self.create_publisher(WrenchStamped, f"ft/{s.name}", sensor_qos)
            for s in model.config.ft_sensors
        }
        self.com_pub = self.create_publisher(PointStamped, "targets/com", 10)
        self.hand_pub = self.create_publisher(PoseStamped, "targets/left_hand", 10)
        self.commands: list[JointState] = []
        self.odometry: list[Odometry] = []
        self.diagnostics: list[DiagnosticArray] = []
        self.create_subscription(JointState, "joint_commands", self.commands.append, 10)
        self.create_subscription(Odometry, "odom", self.odometry.append, 10)
        self.create_subscription(DiagnosticArray, "diagnostics", self.diagnostics.append, 10)
        q = model.initial_configuration()
        self.q = q
        _, wrenches = model.static_contact_torques(q, ["l_sole", "r_sole"])
        self.readings = readings_from_state(
            model, q, np.zeros(model.nv),
            {"left_foot": wrenches["l_sole"], "right_foot": wrenches["r_sole"]},
        )  # fmt: skip
        self.sensor_frames = {s.name: s.frame for s in model.config.ft_sensors}
        self.publishing = True
        self.bad_joint_states = False
        self.create_timer(1.0 / RATE, self.publish)

    def publish(self):
        if not self.publishing:
            return
        r = self.readings
        names = list(self.model.joint_names)
        if self.bad_joint_states:
            names[3] = "no_such_joint"
        self.joint_pub.publish(
            joint_state_message(names, r.joint_positions, r.joint_velocities, r.joint_efforts)
        )
        imu = Imu()
        x, y, z, w = r.imu.orientation_xyzw
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = x, y, z, w
        # Standing still: the accelerometer reads the reaction to gravity, in the IMU's axes
        # (mode "torque" fuses it into the base velocity, wbm_control.base_estimator).
        rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
        up = rotation.T @ np.array([0.0, 0.0, 9.81])
        imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = up
        self.imu_pub.publish(imu)
        for name, publisher in self.ft_pubs.items():
            message = WrenchStamped()
            message.header.frame_id = self.sensor_frames[name]
            message.wrench = wrench_message(r.wrenches[name])
            publisher.publish(message)


def spin_for(executor, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)


def test_node_controls_estimates_and_falls_back_safely(icub, controller_process):
    process, log_path, mode = controller_process
    rclpy.init()
    try:
        robot = RobotSide(icub)
        executor = rclpy.executors.SingleThreadedExecutor()
        executor.add_node(robot)
        # Normal control: torques for every joint, within the limits.
        assert spin_until(executor, lambda: len(robot.commands) > 20, 30.0), log_path.read_text()
        command = robot.commands[-1]
        assert list(command.name) == list(icub.joint_names)
        effort = np.array(command.effort)
        assert effort.shape == (icub.ndof,) and np.all(np.isfinite(effort))
        assert np.all(np.abs(effort) <= icub.torque_limits + 1e-9)
        if mode == "torque":
            assert len(command.position) == 0  # no servo references
        else:  # IK: references near the standing posture. The fake robot does not move, so the
            # CoM error (1.4 cm to the feet's centre) stays and the IK's CoM integral action winds
            # up to its 3 cm clamp: the references move the CoM by 4.4 cm at most (< 0.2 rad).
            assert np.max(np.abs(np.array(command.position) - robot.q[7:])) < 0.2
            assert len(command.velocity) == icub.ndof
        # Standing still, the torques are close to the static ones (the CoM is moved to the
        # centre of the feet over 1 s, so not equal): within 10 % of the largest, 84 N m hip.
        static, _ = icub.static_contact_torques(robot.q, ["l_sole", "r_sole"])
        assert np.max(np.abs(effort - static)) < 8.4
        # The estimated base state is the true one (exact sensor values: 1e-9).
        assert spin_until(executor, lambda: len(robot.odometry) > 5, 5.0)
        base_q, base_v = base_from_odometry(robot.odometry[-1])
        np.testing.assert_allclose(base_q[:3], robot.q[:3], atol=1e-9)
        np.testing.assert_allclose(np.abs(base_q[3:7] @ robot.q[3:7]), 1.0, atol=1e-9)
        np.testing.assert_allclose(base_v, 0.0, atol=1e-9)
        # Diagnostics: solve time, task errors, active contacts.
        assert spin_until(executor, lambda: len(robot.diagnostics) > 0, 5.0)
        values = diagnostic_values(robot.diagnostics[-1])
        assert float(values["solve_time_ms"]) > 0.0
        assert values["active_contacts"] == "left_foot,right_foot"
        assert "task_error/com" in values
        # Static equilibrium margin: the CoM (x from 0.034 at start to 0.02, the feet's centre)
        # is 5.6 to 7 cm behind the toes (x = 0.09), its nearest edge (sides > 10 cm away).
        assert 0.055 < float(values["static_margin_m"]) < 0.071

        # Bad inputs are dropped with a log and the node keeps going on the good ones.
        bad = PointStamped()
        bad.header.frame_id = "world"
        bad.point.x = float("nan")
        robot.com_pub.publish(bad)
        unknown_frame = PoseStamped()
        unknown_frame.header.frame_id = "moon"
        unknown_frame.pose.orientation.w = 1.0
        robot.hand_pub.publish(unknown_frame)
        far = PoseStamped()
        far.header.frame_id = "world"
        far.pose.position.x = 5.0
        far.pose.orientation.w = 1.0
        robot.hand_pub.publish(far)
        robot.bad_joint_states = True
        spin_for(executor, 0.1)
        robot.bad_joint_states = False
        count = len(robot.commands)
        spin_for(executor, 0.5)
        assert process.poll() is None
        assert len(robot.commands) > count + 10, log_path.read_text()[-3000:]
        assert len(robot.commands[-1].effort) == icub.ndof

        # Inputs stop: the safe command holds the joints (position = last, velocity 0) with the
        # static torques that carry the weight on the soles (within 10 % of the largest static
        # torque, as the steps' above; the hold used to have no effort).
        robot.publishing = False

        def holding() -> bool:
            last = robot.commands[-1]
            return (
                len(last.position) == icub.ndof
                and len(last.velocity) == icub.ndof
                and not np.any(np.array(last.velocity))
                and np.allclose(last.position, robot.q[7:], rtol=0.0, atol=1e-12)
            )

        assert spin_until(executor, holding, 5.0)
        hold = robot.commands[-1]
        np.testing.assert_allclose(hold.position, robot.q[7:], atol=1e-12)
        np.testing.assert_allclose(hold.velocity, 0.0)
        assert len(hold.effort) == icub.ndof
        assert np.max(np.abs(np.array(hold.effort) - static)) < 8.4
        assert spin_until(
            executor,
            lambda: robot.diagnostics[-1].status[0].level == DiagnosticStatus.WARN,
            5.0,
        )
        assert "stale" in robot.diagnostics[-1].status[0].message
        # Inputs come back: normal control resumes (the diagnostics say so; the hold's commands
        # have efforts too now).
        robot.publishing = True
        assert spin_until(
            executor,
            lambda: robot.diagnostics[-1].status[0].level == DiagnosticStatus.OK,
            5.0,
        )
        assert len(robot.commands[-1].effort) == icub.ndof
        assert process.poll() is None
    finally:
        rclpy.shutdown()
    process.send_signal(2)
    process.wait(timeout=10)
    log = log_path.read_text()
    assert "target for 'com' rejected" in log
    assert "unknown frame 'moon'" in log
    assert "target for 'left_hand' clamped" in log
    assert "dropped joint_states" in log
    assert "safe mode" in log and "stale inputs" in log
    assert "normal control resumed" in log
    assert process.returncode == 0, log


def test_bad_parameter_stops_the_node_naming_the_key(ros_env):
    result = subprocess.run(
        [
            sys.executable, "-m", "wbm_control.ros.controller_node", "--ros-args",
            "--params-file", str(CONTROLLER_YAML), "-p", "com.kp:=-5.0",
        ],
        env=ros_env, capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == EXIT_STARTUP_ERROR
    assert "cannot start" in result.stderr + result.stdout
    assert "com.kp" in result.stderr + result.stdout


def test_joint_state_reader_and_command_message_equal_the_converters():
    # The node's cached reader and preallocated command against the one-shot converters: same
    # arrays (exact) for any order of names, same errors for bad messages.
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    from wbm_control.ros.messages import (
        CommandMessage,
        JointStateReader,
        command_message,
        joint_state_from_message,
    )
    from wbm_description.exceptions import InputError
    from wbm_description.robot_io import JointCommand
    from wbm_description.ros.cdr import values_decoder

    index = {"a": 0, "b": 1, "c": 2}
    reader = JointStateReader(index, 3)
    # The node's path: the values read from the serialized message (read-only views).
    values_reader, decode = JointStateReader(index, 3), values_decoder(JointState)
    rng = np.random.default_rng(2)
    for names in (["a", "b", "c"], ["a", "b", "c"], ["c", "a", "b"], ["c", "a", "b"]):
        message = joint_state_message(names, rng.normal(size=3), rng.normal(size=3))
        expected_arrays = joint_state_from_message(message, index, 3)
        _, _, *fields = decode(serialize_message(message))
        for read in (reader.read(message), values_reader.read_values(*fields)):
            for got, expected in zip(read, expected_arrays, strict=True):
                assert (got is None and expected is None) or np.array_equal(got, expected)
                assert got is None or got.flags.writeable
    for bad in (
        joint_state_message(["c", "a", "b"], [0.0, float("nan"), 1.0], [0.0, 0.0, 0.0]),
        joint_state_message(["c", "a", "b"], [0.0, 0.0, 0.0]),  # no velocities
        joint_state_message(["c", "a"], [0.0, 0.0], [0.0, 0.0]),  # a joint missing
        joint_state_message(["c", "a", "x"], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),  # unknown
        JointState(name=["c", "a", "b"], position=[0.0] * 3, velocity=[0.0] * 2),  # lengths
        joint_state_message(["c", "a", "b"], [0.0, 0.0, 0.0], [0.0, -np.inf, 0.0]),
    ):
        with pytest.raises(InputError):
            joint_state_from_message(bad, index, 3)
        with pytest.raises(InputError) as error:
            reader.read(bad)
        _, _, *fields = decode(serialize_message(bad))
        with pytest.raises(InputError) as values_error:
            values_reader.read_values(*fields)
        assert str(values_error.value) == str(error.value)
    filler = CommandMessage(["a", "b", "c"])
    for command in (
        JointCommand(position=rng.normal(size=3), velocity=rng.normal(size=3), effort=None),
        JointCommand(position=None, velocity=None, effort=rng.normal(size=3)),
    ):
        stamp_ns = int(rng.integers(0, 10**12))
        # The serialized message, read back by rclpy, is the converter's message.
        assert deserialize_message(filler.fill(command, stamp_ns), JointState) == command_message(
            ["a", "b", "c"], command, stamp_ns * 1e-9
        )
    with pytest.raises(InputError):
        filler.fill(JointCommand(position=None, velocity=None, effort=np.zeros(2)), 0)
