"""Node names and namespaces: the launcher's rules against rclpy's validation (rmw's rules)."""

from __future__ import annotations

import pytest
from rclpy.exceptions import InvalidNamespaceException, InvalidNodeNameException
from rclpy.validate_namespace import validate_namespace
from rclpy.validate_node_name import validate_node_name

from wbm_bringup.launching.ros_names import namespace_problem, node_name_problem

NAMESPACES = [
    "/", "/robot", "/a/b_c/d1", "/_x", "/a__b", "robot", "", "/bad/name!", "/a//b", "/a/",
    "/1robot", "/a/2b", "/a b", "/a-b", "/ä", "/" + "a" * 244, "/" + "a" * 245, "/" + "a" * 300,
]  # fmt: skip
NODE_NAMES = ["controller", "_x", "a1", "", "1a", "a/b", "a-b", "a b", "ä", "a" * 256, "a__b"]


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_namespaces_as_rclpy_validates_them(namespace):
    try:
        validate_namespace(namespace)
        valid = True
    except InvalidNamespaceException:
        valid = False
    assert (namespace_problem(namespace) is None) == valid, namespace


@pytest.mark.parametrize("name", NODE_NAMES)
def test_node_names_as_rclpy_validates_them(name):
    try:
        validate_node_name(name)
        valid = True
    except InvalidNodeNameException:
        valid = False
    assert (node_name_problem(name) is None) == valid, name
