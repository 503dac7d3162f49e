"""The robot-interface node hosting the template driver against the emulated robot.

Three processes: the device emulator (our simulator behind the UDP protocol), the node (the
``wbm_robot_interface`` executable with ``backend:=template_udp``, a driver found through a
``wbm.robot_backends`` entry point of a dist-info on PYTHONPATH) and this test's rclpy probe.
The node must publish joint_states stamped with device time, carrying exactly the
emulator's readings, and pass joint_commands on to the device.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from driver_helpers import TEMPLATE, state_at, write_dist_info
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.settings import SimulatorSettings

TIMEOUT = 30.0  # [s] of wall time, start-up and DDS discovery included
CHUNK = (
    0.004  # what the node advances per publication (publish_rate 250 Hz): 2 x the 2 ms cycle [s]
)

pytestmark = pytest.mark.process


@pytest.fixture()
def ros_environment(monkeypatch):
    """A DDS domain of our own unless the environment sets one; discovery on localhost only."""
    if "ROS_DOMAIN_ID" not in os.environ:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(random.randint(100, 199)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def _stamp(message) -> float:
    return message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec


def test_node_publishes_the_driver_readings(ros_environment, emulator, icub, tmp_path):
    site = tmp_path / "site"
    write_dist_info(site, {"template_udp": TEMPLATE})
    config = tmp_path / "driver.yaml"
    # state_timeout 1 s: a loaded test machine can stall a process for a few 100 ms.
    config.write_text(f"port: {emulator.port}\nstate_timeout: 1.0\n")
    namespace = f"/wbm_driver_test_{os.getpid()}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    log_path = tmp_path / "node.log"
    command = [
        sys.executable,
        "-m",
        "wbm_dynamics.ros.robot_interface_node",
        "--ros-args",
        "-r",
        f"__ns:={namespace}",
        "-p",
        "backend:=template_udp",
        "-p",
        f"backend_config:={config}",
        # The robot paces a non-steppable backend: realtime pacing adds no sleeps of its own.
        "-p",
        "pacing:=realtime",
        "-p",
        "publish_rate:=250.0",
        # The node's watchdog under test here: damping 0.5 s after the last command (the
        # defaults: the posture hold 20 ms after it).
        "-p",
        "command_timeout_action:=damping",
        "-p",
        "command_timeout:=0.5",
    ]
    posture = SimulatorBackend(icub, SimulatorSettings()).hold_posture_command()
    context = rclpy.Context()
    rclpy.init(context=context)
    with open(log_path, "w") as log:
        node_process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    probe = None
    executor = SingleThreadedExecutor(context=context)
    try:
        probe = rclpy.create_node("driver_probe", namespace=namespace, context=context)
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        states: list[JointState] = []
        imus: list[Imu] = []
        probe.create_subscription(JointState, "joint_states", states.append, qos)
        probe.create_subscription(Imu, "imu", imus.append, qos)
        commands = probe.create_publisher(JointState, "joint_commands", qos)
        executor.add_node(probe)

        def spin_until(predicate, what: str) -> None:
            deadline = time.monotonic() + TIMEOUT
            while not predicate():
                assert node_process.poll() is None, f"node exited:\n{log_path.read_text()}"
                assert time.monotonic() < deadline, f"no {what}:\n{log_path.read_text()}"
                executor.spin_once(timeout_sec=0.05)

        spin_until(lambda: len(states) >= 50 and imus, "joint_states and imu")
        spin_until(lambda: commands.get_subscription_count() > 0, "joint_commands reader")
        commands.publish(
            JointState(
                name=list(icub.joint_names),
                position=posture.position.tolist(),
                effort=posture.effort.tolist(),
            )
        )
        sent = max(_stamp(s) for s in states)
        # Past the node's command watchdog (command_timeout 0.5 s): back to damping.
        spin_until(lambda: _stamp(states[-1]) > sent + 0.8, "states after the command")
    finally:
        node_process.terminate()
        try:
            node_process.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            node_process.kill()
            node_process.wait()
        executor.shutdown()
        if probe is not None:
            probe.destroy_node()
        rclpy.shutdown(context=context)
    dump = emulator.stop()

    log = log_path.read_text()
    assert "template_udp backend" in log, log
    assert "ERROR" not in log and "Traceback" not in log, log
    assert imus[-1].header.frame_id == "imu_frame"
    stamps = np.array([_stamp(s) for s in states])
    intervals = np.diff(stamps[1:])  # the first is the initial state, published at start
    # One publication per advance of CHUNK device time, in whole 2 ms cycles, each with a new
    # state; a late wake-up of the node's thread makes one interval longer and the next
    # shorter (the driver keeps one schedule), so the median is CHUNK exactly.
    np.testing.assert_allclose(intervals / 0.002, np.round(intervals / 0.002), atol=1e-6)
    assert intervals.min() >= 0.002 - 1e-9, intervals
    assert abs(np.median(intervals) - CHUNK) < 1e-9, intervals
    for message in states[1:]:
        assert list(message.name) == list(icub.joint_names)
        i = state_at(dump, _stamp(message))
        np.testing.assert_allclose(message.position, dump["joint_positions"][i], atol=1e-6)
        np.testing.assert_allclose(message.effort, dump["joint_efforts"][i], rtol=2e-7, atol=1e-5)
    # joint_commands went through the node and the driver to the device, in degrees; the
    # node's watchdog then put the joints in damping 0.5 s after it.
    times = dump["command_time"]
    after = (times > sent + 0.1) & (times < sent + 0.4)
    assert after.sum() >= 20
    assert (dump["command_mask"][after] == (1 | 4)).all()
    assert (dump["command_mask"][times > sent + 0.75] == 2).all()
    assert "joints in damping mode" in log
    sent_positions = dump["command_values"][after][:, 0]
    expected = np.broadcast_to(np.rad2deg(posture.position), sent_positions.shape)
    np.testing.assert_allclose(sent_positions, expected, atol=1e-4)
