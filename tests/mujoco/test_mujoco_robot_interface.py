"""The robot-interface node hosts the MuJoCo backend and publishes the robot contract.

The node is run in-process (lockstep pacing, its own namespace and rclpy context) with the
``mujoco`` backend (built in: ``wbm_dynamics.backends.BACKENDS``); a client node answers each
joint state with the standing command.
"""

from __future__ import annotations

import os
import time

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from wbm_dynamics.backends import BACKENDS
from wbm_dynamics.mujoco.backend import MujocoBackend
from wbm_dynamics.mujoco.scenarios import standing_command
from wbm_dynamics.ros.robot_interface_node import RobotInterfaceNode

TIMEOUT = 20.0  # [s] of wall time, DDS discovery included


def test_robot_interface_node_hosts_mujoco(icub):
    assert BACKENDS["mujoco"] is MujocoBackend
    context = rclpy.Context()
    rclpy.init(context=context)
    namespace = f"/wbm_mujoco_test_{os.getpid()}"
    node = client = None
    executor = SingleThreadedExecutor(context=context)
    try:
        node = RobotInterfaceNode(
            context=context,
            namespace=namespace,
            parameter_overrides=[
                Parameter("backend", value="mujoco"),
                Parameter("pacing", value="lockstep"),
                Parameter("control_period", value=0.01),
                Parameter("command_timeout", value=0.0),
            ],
        )
        assert isinstance(node.backend, MujocoBackend)
        client = rclpy.create_node("mujoco_test_client", namespace=namespace, context=context)
        qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        states: list[JointState] = []
        wrenches: list[WrenchStamped] = []
        client.create_subscription(JointState, "joint_states", states.append, qos)
        client.create_subscription(WrenchStamped, "ft/left_foot", wrenches.append, qos)
        commands = client.create_publisher(JointState, "joint_commands", qos)
        executor.add_node(node)
        executor.add_node(client)
        standing = standing_command(icub)
        command = JointState(
            name=list(icub.joint_names),
            position=standing.position.tolist(),
            effort=standing.effort.tolist(),
        )
        deadline = time.monotonic() + TIMEOUT
        while commands.get_subscription_count() == 0 or node.count_publishers("joint_states") == 0:
            executor.spin_once(timeout_sec=0.05)
            assert time.monotonic() < deadline, "the nodes did not discover each other"
        # Lockstep: each command advances 10 ms and publishes the new state once.
        for k in range(1, 11):
            commands.publish(command)
            while not any(_stamp(s) >= 0.01 * k - 1e-9 for s in states):
                executor.spin_once(timeout_sec=0.05)
                assert time.monotonic() < deadline, f"no joint_states after command {k}"
        last = max(states, key=_stamp)
        assert abs(_stamp(last) - 0.1) < 1e-9
        assert list(last.name) == list(icub.joint_names)
        np.testing.assert_allclose(last.position, icub.initial_posture, atol=0.02)
        while not wrenches:
            executor.spin_once(timeout_sec=0.05)
            assert time.monotonic() < deadline, "no ft/left_foot message"
        wrench = max(wrenches, key=_stamp)
        assert wrench.header.frame_id == "l_foot_ft_sensor"
        # About half of iCub's weight, child-on-parent, sensor z pointing down (see the
        # standing test): between 40 % and 60 % of m g.
        weight = icub.total_mass * 9.81
        assert 0.4 * weight < -wrench.wrench.force.z < 0.6 * weight
    finally:
        executor.shutdown()
        if node is not None:
            node.stop()
            node.destroy_node()
        if client is not None:
            client.destroy_node()
        rclpy.shutdown(context=context)


def _stamp(message) -> float:
    return message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
