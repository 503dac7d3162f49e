"""The demo scenario: its timeline (pure), and the scenario node as its own process.

The node's hand target is checked against the hand position computed here with Pinocchio
directly from the URDF (not through WholeBodyModel), plus the scenario's offset.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import numpy as np
import pinocchio as pin
import pytest

from wbm_bringup.demo.scenario import DemoScenario, DemoTimeline, ScenarioNodeSettings
from wbm_description import ConfigError, load_robot


def test_timeline_fires_each_event_once_in_order():
    timeline = DemoTimeline(DemoScenario(hand_start=0.5, push_time=4.0, end_time=8.0))
    assert timeline.advance(100.0) == ["start"]  # the clock starts at the first state
    assert timeline.advance(100.4) == []
    assert timeline.advance(100.5) == ["hand"]
    assert timeline.advance(100.6) == []
    # A late tick fires everything that became due, in order, once.
    assert timeline.advance(109.0) == ["push", "end"]
    assert timeline.advance(110.0) == [] and timeline.finished
    assert timeline.elapsed(109.0) == pytest.approx(9.0)


def test_node_settings_nest_the_scenario():
    settings = ScenarioNodeSettings.from_mapping(
        {"robot": "icub", "scenario": {"end_time": 9.0, "hand_duration": 1.5}}
    )
    assert settings.scenario == DemoScenario(end_time=9.0, hand_duration=1.5)
    with pytest.raises(ConfigError) as caught:
        ScenarioNodeSettings.from_mapping({"scenario": {"push_time": 9.0}}, source="launch")
    assert caught.value.key == "scenario.push_time"


@pytest.mark.process
def test_scenario_node_sends_target_and_push_then_exits(monkeypatch):
    import rclpy
    from geometry_msgs.msg import PoseStamped, WrenchStamped
    from nav_msgs.msg import Odometry
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    if "ROS_DOMAIN_ID" not in os.environ:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(random.randint(100, 199)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    config = load_robot("icub")
    # Independent reference: the hand position at the initial posture with the left sole at
    # the world origin, from Pinocchio on the URDF.
    model = pin.buildModelFromUrdf(str(config.urdf_path), pin.JointModelFreeFlyer())
    data = model.createData()
    q = pin.neutral(model)
    for name, value in zip(config.joints, config.initial_posture, strict=True):
        q[model.idx_qs[model.getJointId(name)]] = value
    pin.framesForwardKinematics(model, data, q)
    world_T_base = data.oMf[model.getFrameId("l_sole")].inverse()
    base = pin.SE3ToXYZQUAT(world_T_base)
    hand = (world_T_base * data.oMf[model.getFrameId("l_hand")]).translation

    scenario = {"hand_start": 0.2, "hand_duration": 0.2, "push_time": 0.6, "end_time": 1.0}
    arguments = [f"scenario.{name}:={value}" for name, value in scenario.items()]
    node_process = subprocess.Popen(
        [sys.executable, "-m", "wbm_bringup.ros.scenario_node", "--ros-args"]
        + [item for argument in arguments for item in ("-p", argument)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("scenario_test", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    targets: list[PoseStamped] = []
    pushes: list[WrenchStamped] = []
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(PoseStamped, "targets/left_hand", targets.append, reliable)
    node.create_subscription(WrenchStamped, "apply_wrench", pushes.append, reliable)
    joint_states = node.create_publisher(JointState, "joint_states", 10)
    odom = node.create_publisher(Odometry, "odom", 10)
    state = JointState(
        name=list(config.joints), position=[float(x) for x in config.initial_posture]
    )
    pose = Odometry()
    pose.pose.pose.position.x, pose.pose.pose.position.y, pose.pose.pose.position.z = (
        float(x) for x in base[:3]
    )
    o = pose.pose.pose.orientation
    o.x, o.y, o.z, o.w = (float(x) for x in base[3:])
    try:
        deadline = time.monotonic() + 60.0
        while node_process.poll() is None and time.monotonic() < deadline:
            joint_states.publish(state)
            odom.publish(pose)
            executor.spin_once(timeout_sec=0.02)
        output = node_process.communicate(timeout=20)[0]
        for _ in range(10):
            executor.spin_once(timeout_sec=0.02)
    finally:
        if node_process.poll() is None:
            node_process.kill()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    assert node_process.returncode == 0, output
    assert "Traceback" not in output and "scenario finished" in output, output
    assert len(targets) == 1 and len(pushes) == 1, output
    target = targets[0].pose.position
    # Doubles through the wire; the node's model and this one differ only by round-off.
    np.testing.assert_allclose([target.x, target.y, target.z], hand + [0.03, 0.03, 0.0], atol=1e-9)
    assert targets[0].header.frame_id == "world"
    assert pushes[0].header.frame_id == "chest"
    force = pushes[0].wrench.force
    assert (force.x, force.y, force.z) == (40.0, 0.0, 0.0)


@pytest.mark.process
def test_scenario_node_refuses_an_unknown_frame():
    result = subprocess.run(
        [sys.executable, "-m", "wbm_bringup.ros.scenario_node", "--ros-args"]
        + ["-p", "scenario.push_frame:=chst"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("wbm_scenario: error")]
    assert len(lines) == 1 and "chst" in lines[0], result.stderr
