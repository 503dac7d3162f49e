"""The robot-interface node hosts the MuJoCo backend and publishes the robot contract.

The node is run in-process (lockstep pacing, its own namespace and rclpy context) with the
``mujoco`` backend (built in: ``wbm_dynamics.backends.BACKENDS``); a client node answers each
joint state with the standing command. The node's core, the pacing loop, holds iCub's posture at
start on MuJoCo as it does on our simulator.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from wbm_dynamics.backends import BACKENDS
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.mujoco.backend import MujocoBackend
from wbm_dynamics.mujoco.scenarios import standing_command
from wbm_dynamics.pacing import PacingLoop
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
                Parameter("control_rate", value=100.0),
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


class _NoWait:
    """A wall clock that never waits (as fast as possible does not sleep anyway)."""

    def now(self) -> float:
        return 0.0

    def sleep(self, seconds: float) -> None:
        pass


def _stand(model, hold: bool, seconds: float) -> list:
    """The robot-interface core on MuJoCo, no controller: the base states it publishes."""
    published, logs = [], []
    loop = PacingLoop(
        MujocoBackend(model),
        RobotInterfaceSettings(pacing="as_fast_as_possible", hold_posture_at_start=hold),
        publish=published.append,
        log=lambda level, text: logs.append(text),
        clock=_NoWait(),
    )
    loop.start(thread=False)
    while loop.backend.time < seconds - 1e-9:
        loop.run_once()
    assert not logs  # no divergence, no watchdog (nothing was ever commanded)
    return published


def test_hold_posture_at_start_keeps_icub_standing_on_mujoco(icub):
    """2 s with no controller. Held by its servos at the config's gains (100 N m/rad on the
    legs) plus the static standing torques, iCub stays up: the base within 5 mm of its initial
    height and 3 cm horizontally, every joint within 0.03 rad of the initial posture. (It leans
    forward slowly, as on our simulator: 1.3 cm at 2 s, 6 cm at 5 s, measured; the hold is a
    start-up aid, not a balance controller.) Limp, iCub collapses: its base is more than 0.3 m
    lower within 0.5 s."""
    start = icub.initial_configuration()
    held = _stand(icub, True, 2.0)
    assert held[-1].time == pytest.approx(2.0, abs=1e-9)
    for outputs in held:
        base = outputs.base.configuration
        assert abs(base[2] - start[2]) < 5e-3, outputs.time
        assert np.linalg.norm(base[:2] - start[:2]) < 0.03, outputs.time
    np.testing.assert_allclose(
        held[-1].readings.joint_positions, icub.initial_posture, rtol=0.0, atol=0.03
    )
    limp = _stand(icub, False, 0.5)
    assert limp[-1].base.configuration[2] < start[2] - 0.3
