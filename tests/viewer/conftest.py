"""Fixtures of the viewer tests: those of the state publisher tests (the viewer reads the same
topics and parameters file): a DDS domain of our own, a test node, node processes."""

from tests.state_publisher.conftest import (  # noqa: F401 (fixtures)
    rclpy_node,
    ros_environment,
    start_node,
)
