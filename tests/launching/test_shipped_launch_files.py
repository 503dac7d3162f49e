"""The launch files wbm_bringup ships: every branch plans, every node is found in its package,
and the parameters given inline are known to the nodes' settings classes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from wbm_bringup.demo.scenario import ScenarioNodeSettings
from wbm_bringup.launching import plan_launch
from wbm_bringup.recorder_settings import RecorderSettings
from wbm_bringup.share import launch_file
from wbm_bringup.viewer.settings import ViewerSettings
from wbm_description.settings import nest
from wbm_description.state_publisher_settings import StatePublisherSettings

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "launch"

# Where each node's executable lives (lib/<package>/<executable>, as ros2 run finds it).
PACKAGE_OF = {
    "robot_interface": "wbm_dynamics",
    "controller": "wbm_control",
    "state_publisher": "wbm_description",
    "viewer": "wbm_bringup",
    "recorder": "wbm_bringup",
    "scenario": "wbm_bringup",
}

# Settings classes of the nodes this package owns, for their inline parameters.
SETTINGS_OF = {
    "state_publisher": StatePublisherSettings,
    "viewer": ViewerSettings,
    "recorder": RecorderSettings,
    "scenario": ScenarioNodeSettings,
}

CASES = [
    ("sim.launch.yaml", {}, ["robot_interface", "controller", "state_publisher"]),
    (
        "sim.launch.yaml",
        {"viewer": "true", "record": "/tmp/wbm_bag", "robot_side": "mujoco"},
        ["robot_interface", "controller", "state_publisher", "viewer", "recorder"],
    ),
    ("robot.launch.yaml", {}, ["controller", "state_publisher"]),
    (
        "demo.launch.yaml",
        {},
        ["robot_interface", "controller", "state_publisher", "scenario"],
    ),
    (
        "demo.launch.yaml",
        {"viewer": "true", "record": "/tmp/wbm_bag"},
        ["robot_interface", "controller", "state_publisher", "viewer", "recorder", "scenario"],
    ),
]


def inline_parameters(command: tuple[str, ...]) -> dict[str, str]:
    return dict(command[i + 1].split(":=", 1) for i, item in enumerate(command) if item == "-p")


def typed(value: str):
    """A ROS parameter given as text, as rclpy's YAML reading of ``-p`` types it."""
    return yaml.safe_load(value) if value else value


@pytest.mark.parametrize(("name", "arguments", "labels"), CASES)
def test_every_branch_plans_with_nodes_in_their_packages(name, arguments, labels):
    plan = plan_launch(LAUNCH / name, {**arguments, "control_rate": "250.0"})
    assert [process.label for process in plan.processes] == labels
    for process in plan.processes:
        executable = Path(process.command[1])
        assert executable.parts[-2] == PACKAGE_OF[process.label], process.command
        assert executable.is_file()
        parameters = inline_parameters(process.command)
        settings_class = SETTINGS_OF.get(process.label)
        if settings_class is not None:
            values = {k: typed(v) for k, v in parameters.items() if k != "use_sim_time"}
            settings_class.from_mapping(nest(values), source=f"{name}: {process.label}")
        if "--params-file" in process.command:
            assert Path(process.command[process.command.index("--params-file") + 1]).is_file()
    controller = next(p for p in plan.processes if p.label == "controller")
    assert inline_parameters(controller.command)["control_rate"] == "250.0"


def test_launch_files_are_the_installed_ones_and_documented():
    for name in ("sim.launch.yaml", "robot.launch.yaml", "demo.launch.yaml"):
        assert launch_file(name).resolve() == (LAUNCH / name).resolve()
        entities = yaml.safe_load((LAUNCH / name).read_text())["launch"]
        arguments = [entity["arg"] for entity in entities if "arg" in entity]
        assert arguments and all(argument.get("description") for argument in arguments), name


def test_wbm_launch_print_shows_the_processes():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "wbm_bringup.cli",
            "launch",
            "--print",
            str(LAUNCH / "sim.launch.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    processes = [line for line in result.stdout.splitlines() if line.startswith("process ")]
    assert [line.split()[1].rstrip(":") for line in processes] == [
        "robot_interface",
        "controller",
        "state_publisher",
    ]
    assert "arg control_rate = '500.0'" in result.stdout


@pytest.mark.parametrize(("name", "arguments", "labels"), CASES)
def test_every_node_ends_the_launch_when_it_fails(name, arguments, labels):
    """on_exit: shutdown everywhere, except the demo's scenario when the viewer keeps running."""
    plan = plan_launch(LAUNCH / name, arguments)
    not_required = [process.label for process in plan.processes if not process.required]
    if name == "demo.launch.yaml" and arguments.get("viewer") == "true":
        assert not_required == ["scenario"]
    else:
        assert not_required == []
