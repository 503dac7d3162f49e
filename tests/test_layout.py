"""The architecture's rules, checked on the source tree.

- Cores never import rclpy or message packages: only modules in a ``ros`` subpackage may (every
  node module, ``*_node.py``, lives there).
- wbm_dynamics and wbm_control import wbm_description, never each other; wbm_bringup may import
  all three and nothing imports it.
- No module imports by name at run time (``importlib.import_module``, ``__import__``), which
  would hide a dependency from these checks (the recorder's message-type lookup excepted), and
  none locates files through ``parents[N]`` or ``.parent.parent`` of its own path (it would only
  work in an editable checkout); a module may find data inside its own package directory.
- Each package is a ROS 2 ament_python package: package.xml format 3, resource marker, setup.cfg.
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["wbm_description", "wbm_dynamics", "wbm_control", "wbm_bringup"]
ROS_MODULES = {
    "rclpy",
    "rcl_interfaces",
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
    return "ros" in path.parts


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
        ("wbm_description", "wbm_bringup"),
        ("wbm_dynamics", "wbm_bringup"),
        ("wbm_control", "wbm_bringup"),
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


# Dynamic imports that are not dependencies between wbm packages, with the reason.
DYNAMIC_IMPORTS_ALLOWED = {
    # The recorder records topics of any type: message classes are resolved from type names.
    "src/wbm_bringup/wbm_bringup/ros/recorder_node.py",
    # The walking package's exports, each from a submodule of its own package, imported on
    # first use (PEP 562), so that its settings module alone (a launch's pre-flight checks)
    # does not import the pattern generator and the kernels; no other wbm package.
    "src/wbm_control/wbm_control/walking/__init__.py",
}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_hidden_imports_or_paths_relative_to_modules(package):
    offenders = []
    for path in python_files(package):
        allowed = str(path.relative_to(ROOT)) in DYNAMIC_IMPORTS_ALLOWED
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if (name.endswith("import_module") or name == "__import__") and not allowed:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
            elif isinstance(node, ast.Attribute) and node.attr == "parents":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} .parents")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr == "parent"
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "parent"
                and "__file__" in ast.unparse(node)
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} __file__ .parent.parent")
    assert offenders == []


def test_node_modules_live_in_ros_subpackages():
    misplaced = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in python_files(package)
        if path.name.endswith("_node.py") and "ros" not in path.parts
    ]
    assert misplaced == []


@pytest.mark.parametrize("package", PACKAGES)
def test_console_scripts_point_into_the_package(package):
    """Every entry point of setup.py names a module of its own package that has the function."""
    setup = (ROOT / "src" / package / "setup.py").read_text()
    scripts = re.findall(r'"(\w+) = ([\w.]+):(\w+)"', setup)
    assert scripts, f"{package} declares no console scripts"
    for name, module, function in scripts:
        assert module.split(".")[0] == package, (name, module)
        path = ROOT / "src" / package / Path(*module.split(".")).with_suffix(".py")
        assert path.is_file(), (name, module)
        tree = ast.parse(path.read_text())
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert function in functions, (name, module, function)


@pytest.mark.parametrize("package", PACKAGES)
def test_ros_packages_imported_are_declared(package):
    manifest = ET.parse(ROOT / "src" / package / "package.xml").getroot()
    dependencies = {element.text for element in manifest.iter("exec_depend")}
    imported = set()
    for path in python_files(package):
        imported |= imported_top_modules(path) & ROS_MODULES
    assert imported - dependencies == set()


def test_bringup_declares_the_packages_it_imports():
    manifest = ET.parse(ROOT / "src" / "wbm_bringup" / "package.xml").getroot()
    dependencies = {element.text for element in manifest.iter("exec_depend")}
    imported = set()
    for path in python_files("wbm_bringup"):
        imported |= imported_top_modules(path)
    wbm = {module for module in imported if module.startswith("wbm_")} - {"wbm_bringup"}
    assert wbm <= dependencies
    assert wbm == {"wbm_description", "wbm_dynamics", "wbm_control"}
