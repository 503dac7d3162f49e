"""Fixtures of the G1 tests: the model of the registered G1 config; for the node tests those of
the state publisher tests (a DDS domain of our own, a test node, node processes)."""

from __future__ import annotations

import pytest

from tests.state_publisher.conftest import (  # noqa: F401 (fixtures)
    rclpy_node,
    ros_environment,
    start_node,
)
from wbm_description import WholeBodyModel, load_robot


@pytest.fixture(scope="session")
def g1() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("g1"))
