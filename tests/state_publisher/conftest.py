"""Fixtures of the state publisher and viewer tests: DDS domain, a test node, node processes."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARAMS_FILE = ROOT / "config" / "icub" / "state_publisher.yaml"


@pytest.fixture(scope="session", autouse=True)
def ros_environment() -> Iterator[None]:
    """A DDS domain of our own (unless tools/test.sh chose one), on this machine only."""
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(100, 199)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    yield


@pytest.fixture(scope="module")
def rclpy_node(ros_environment):
    """An rclpy context and node for the test process, with an executor to spin it."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(f"test_state_publisher_{os.getpid()}", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    node.executor_for_tests = executor
    try:
        yield node
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


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

    def __init__(self, module: str, ros_args: list[str], log_dir: Path):
        self.stdout_path = log_dir / f"{module.rsplit('.', 1)[-1]}.stdout"
        self.stderr_path = log_dir / f"{module.rsplit('.', 1)[-1]}.stderr"
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

    def wait_exit(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self) -> int | None:
        """SIGINT, then SIGKILL if it has not exited after 5 s; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5.0)
        self._stdout.close()
        self._stderr.close()
        return self.process.returncode


@pytest.fixture(scope="module")
def start_node(tmp_path_factory):
    """Start node processes; every one is stopped at module teardown."""
    started: list[NodeProcess] = []
    log_dir = tmp_path_factory.mktemp("node_logs")

    def start(module: str, ros_args: list[str]) -> NodeProcess:
        process = NodeProcess(module, ros_args, log_dir)
        started.append(process)
        return process

    try:
        yield start
    finally:
        for process in started:
            process.stop()
