"""The browser viewer as its own process, looked at by a real headless chromium.

The robot's pixels are found by difference: a screenshot with the robot standing at the world
origin (where the camera looks) against one after the base pose topic moved it 100 m away.
"""

from __future__ import annotations

import re
import shutil
import time

import matplotlib.image
import numpy as np
import pinocchio as pin
import pytest
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

from tests.state_publisher.conftest import PARAMS_FILE, spin_until
from tests.viewer.browser import CHROMIUM, HeadlessBrowser
from wbm_description.registry import load_robot

pytestmark = [pytest.mark.process, pytest.mark.slow]


def odometry(position, quaternion_xyzw) -> Odometry:
    message = Odometry()
    message.header.frame_id = "world"
    message.child_frame_id = "base_link"
    p, o = message.pose.pose.position, message.pose.pose.orientation
    p.x, p.y, p.z = (float(x) for x in position)
    o.x, o.y, o.z, o.w = (float(x) for x in quaternion_xyzw)
    return message


def shoot_until_stable(browser: HeadlessBrowser, path, timeout: float = 30.0) -> np.ndarray:
    """Screenshots every 0.5 s until two in a row are equal (the scene has loaded)."""
    previous = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.5)
        image = matplotlib.image.imread(browser.screenshot(path))[..., :3]
        if previous is not None and np.array_equal(image, previous):
            return image
        previous = image
    return previous


def test_browser_shows_the_robot(rclpy_node, start_node, tmp_path):
    assert shutil.which(CHROMIUM), "chromium missing: run bash tools/install_browser.sh"
    config = load_robot("icub")
    viewer = start_node("wbm_bringup.ros.viewer_node", ["--params-file", str(PARAMS_FILE)])
    assert spin_until(rclpy_node, lambda: "wbm_viewer: open" in viewer.stdout(), 60.0), (
        viewer.stderr()
    )
    url = re.search(r"wbm_viewer: open (\S+)", viewer.stdout()).group(1)
    assert url.startswith("http://127.0.0.1:")

    joint_states = rclpy_node.create_publisher(JointState, "joint_states", 10)
    odom = rclpy_node.create_publisher(Odometry, "ground_truth/odom", 10)
    assert spin_until(
        rclpy_node,
        lambda: joint_states.get_subscription_count() >= 1 and odom.get_subscription_count() >= 1,
        30.0,
    )
    # Standing: the initial posture with the left sole at the world origin (base from FK here).
    model = pin.buildModelFromUrdf(str(config.urdf_path), pin.JointModelFreeFlyer())
    data = model.createData()
    q = pin.neutral(model)
    for name, value in zip(config.joints, config.initial_posture, strict=True):
        q[model.idx_qs[model.getJointId(name)]] = value
    pin.framesForwardKinematics(model, data, q)
    world_T_base = data.oMf[model.getFrameId("l_sole")].inverse()
    standing = pin.SE3ToXYZQUAT(world_T_base)

    def publish(base) -> None:
        odom.publish(odometry(base[:3], base[3:7]))
        message = JointState()
        message.name = list(config.joints)
        message.position = [float(x) for x in config.initial_posture]
        joint_states.publish(message)

    browser = HeadlessBrowser(800, 600)
    try:
        browser.open(url)
        for _ in range(3):
            publish(standing)
            spin_until(rclpy_node, lambda: False, 0.2)
        with_robot = shoot_until_stable(browser, tmp_path / "with_robot.png")
        away = standing.copy()
        away[0] += 100.0
        for _ in range(3):
            publish(away)
            spin_until(rclpy_node, lambda: False, 0.2)
        background = shoot_until_stable(browser, tmp_path / "background.png")
        errors = browser.console_errors()
    finally:
        browser.close()
    assert not errors, errors
    changed = np.abs(with_robot - background).max(axis=2) > 0.08  # 8 % of full scale per channel
    rows, cols = np.nonzero(changed)
    height, width = changed.shape
    # The robot covers a real area (iCub, ~1 m tall seen from ~2 m, covers about 2 % of the
    # image; 1 % is a lower bound that a blank page or a robot with missing parts misses).
    assert changed.sum() > 0.01 * height * width, changed.sum()
    # Where the robot is: around the image centre (the camera looks at the world origin, the
    # left sole), taller than wide (a standing humanoid).
    top, bottom, left, right = rows.min(), rows.max(), cols.min(), cols.max()
    assert left < width / 2 < right and top < height / 2 + 0.1 * height
    assert bottom - top > right - left, (top, bottom, left, right)
    assert viewer.process.poll() is None, viewer.stderr()
