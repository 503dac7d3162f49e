"""The architecture's rules, checked on the source tree.

- Cores never import rclpy or message packages: only modules in a ``ros`` subpackage (or named
  ``*_node.py``) may.
- wbm_dynamics and wbm_control import wbm_description, never each other.
- Each package is a ROS 2 ament_python package: package.xml format 3, resource marker, setup.cfg.
"""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["wbm_description", "wbm_dynamics", "wbm_control"]
ROS_MODULES = {
    "rclpy",
    "std_msgs",
    "sensor_msgs",
    "geometry_msgs",
    "nav_msgs",
    "visualization_msgs",
    "tf2_msgs",
    "std_srvs",
    "rosgraph_msgs",
    "builtin_interfaces",
    "diagnostic_msgs",
    "launch",
    "launch_ros",
}


def imported_top_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module.split(".")[0])
    return modules


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / "src" / package / package).rglob("*.py"))


def is_node_module(path: Path) -> bool:
    return "ros" in path.parts or path.name.endswith("_node.py")


@pytest.mark.parametrize("package", PACKAGES)
def test_cores_do_not_import_ros(package):
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_top_modules(path) & ROS_MODULES)
        for path in python_files(package)
        if not is_node_module(path) and imported_top_modules(path) & ROS_MODULES
    }
    assert offenders == {}


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("wbm_dynamics", "wbm_control"),
        ("wbm_control", "wbm_dynamics"),
        ("wbm_description", "wbm_dynamics"),
        ("wbm_description", "wbm_control"),
    ],
)
def test_dependencies_point_one_way(package, forbidden):
    offenders = [
        str(path.relative_to(ROOT))
        for path in python_files(package)
        if forbidden in imported_top_modules(path)
    ]
    assert offenders == []


@pytest.mark.parametrize("package", PACKAGES)
def test_ament_python_package(package):
    directory = ROOT / "src" / package
    manifest = ET.parse(directory / "package.xml").getroot()
    assert manifest.get("format") == "3"
    assert manifest.findtext("name") == package
    assert manifest.find("export/build_type").text == "ament_python"
    assert (directory / "resource" / package).is_file()
    assert (directory / "setup.cfg").is_file()
    assert "share/ament_index/resource_index/packages" in (directory / "setup.py").read_text()
    dependencies = {element.text for element in manifest.iter("exec_depend")}
    assert {"rclpy", "python3-numpy"} <= dependencies
    if package != "wbm_description":
        assert "wbm_description" in dependencies
