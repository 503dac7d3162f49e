"""Helpers of the browser-viewer tests: node processes, spinning, robot state messages."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib.image
import numpy as np
import pinocchio as pin
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState


def spin_until(node, predicate: Callable[[], bool], timeout: float) -> bool:
    """Spin the test node until ``predicate()`` holds or ``timeout`` [s] passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        node.executor_for_tests.spin_once(timeout_sec=0.02)
    return predicate()


class NodeProcess:
    """A node started as its own process (``python -m module --ros-args ...``)."""

    def __init__(self, module: str, ros_args: list[str], log_prefix: Path):
        log_prefix.parent.mkdir(parents=True, exist_ok=True)
        self.stdout_path = Path(f"{log_prefix}.stdout")
        self.stderr_path = Path(f"{log_prefix}.stderr")
        self._stdout = open(self.stdout_path, "w")  # noqa: SIM115 - closed in stop()
        self._stderr = open(self.stderr_path, "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", module, "--ros-args", *ros_args],
            stdout=self._stdout,
            stderr=self._stderr,
            env=dict(os.environ),
        )

    def stdout(self) -> str:
        return self.stdout_path.read_text()

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def stop(self) -> int | None:
        """SIGINT, then SIGKILL if it has not exited after 10 s; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5.0)
        self._stdout.close()
        self._stderr.close()
        return self.process.returncode


def odometry(base: pin.SE3, child: str) -> Odometry:
    """nav_msgs/Odometry of a base placement in the world."""
    message = Odometry()
    message.header.frame_id = "world"
    message.child_frame_id = child
    x, y, z, qx, qy, qz, qw = pin.SE3ToXYZQUAT(base)
    p, o = message.pose.pose.position, message.pose.pose.orientation
    p.x, p.y, p.z = float(x), float(y), float(z)
    o.x, o.y, o.z, o.w = float(qx), float(qy), float(qz), float(qw)
    return message


def joint_state(names, positions) -> JointState:
    """sensor_msgs/JointState with positions only."""
    message = JointState()
    message.name = list(names)
    message.position = [float(x) for x in positions]
    return message


def shoot_until_stable(browser, path: Path, timeout: float = 40.0, settle: float = 1.0):
    """Screenshots until two in a row ``settle`` seconds apart are equal; RGB floats in [0, 1]."""
    previous = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(settle)
        image = matplotlib.image.imread(browser.screenshot(path))[..., :3]
        if previous is not None and np.array_equal(image, previous):
            return image
        previous = image
    raise AssertionError(f"the page did not settle within {timeout} s")
