"""Fixtures of the browser-viewer tests: DDS domain, a test node, node processes."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest

from tests.viewer.viewer_helpers import NodeProcess


@pytest.fixture(scope="session", autouse=True)
def ros_environment() -> Iterator[None]:
    """A DDS domain of our own (unless tools/test.sh chose one), on this machine only."""
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(120, 230)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    yield


@pytest.fixture(scope="module")
def rclpy_node(ros_environment):
    """An rclpy context and node for the test process, with an executor to spin it."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(f"test_viewer_{os.getpid()}", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    node.executor_for_tests = executor
    try:
        yield node
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


@pytest.fixture(scope="module")
def start_node(tmp_path_factory):
    """Start node processes; every one is stopped at module teardown."""
    started: list[NodeProcess] = []
    log_dir = tmp_path_factory.mktemp("viewer_logs")

    def start(module: str, ros_args: list[str]) -> NodeProcess:
        process = NodeProcess(module, ros_args, log_dir / f"{len(started)}")
        started.append(process)
        return process

    try:
        yield start
    finally:
        for process in started:
            process.stop()
