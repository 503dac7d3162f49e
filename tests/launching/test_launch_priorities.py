"""The SCHED_FIFO priorities the shipped launch files give each node, per pacing and arguments:
the loop's nodes (robot interface, controller) get realtime_priority in realtime pacing, in
lockstep only with lockstep_priority (the demo's default, not sim.launch.yaml's), never as fast
as possible; the watchers (state publisher, recorder, scenario) get watcher_priority, clamped
below the loop's, in lockstep with lockstep_priority (a loop that never waits), and normal
scheduling otherwise."""

from __future__ import annotations

import re

import pytest

from wbm_bringup.launching import plan_launch
from wbm_bringup.share import launch_file

NODES = ("robot_interface", "controller", "state_publisher", "recorder", "scenario")


def priorities(file: str, tmp_path, **arguments: str) -> dict[str, int]:
    """Node name to the realtime_priority its command line gives it."""
    plan = plan_launch(launch_file(file), {"record": str(tmp_path / "bag"), **arguments})
    found = {}
    for process in plan.processes:
        match = re.search(r"realtime_priority:=(-?\d+)", " ".join(process.command))
        if process.label in NODES:
            assert match, f"{process.label}: no realtime_priority in {process.command}"
            found[process.label] = int(match.group(1))
    return found


@pytest.mark.parametrize(
    ("file", "arguments", "loop", "watchers"),
    [
        ("demo.launch.yaml", {}, 50, 10),  # lockstep with lockstep_priority (the demo's default)
        ("demo.launch.yaml", {"lockstep_priority": "false"}, 0, 0),
        ("demo.launch.yaml", {"pacing": "realtime"}, 50, 0),  # the loop waits: watchers normal
        ("demo.launch.yaml", {"pacing": "as_fast_as_possible"}, 0, 0),  # it never waits
        ("demo.launch.yaml", {"realtime_priority": "0"}, 0, 0),  # the loop normal: all normal
        ("demo.launch.yaml", {"watcher_priority": "80"}, 50, 49),  # below the loop's
        ("demo.launch.yaml", {"realtime_priority": "1"}, 1, 0),  # nothing below 1
        ("demo.launch.yaml", {"watcher_priority": "0"}, 50, 0),
        ("sim.launch.yaml", {}, 50, 0),  # realtime
        ("sim.launch.yaml", {"pacing": "lockstep"}, 0, 0),  # sim.launch.yaml: opt-in
        ("sim.launch.yaml", {"pacing": "lockstep", "lockstep_priority": "true"}, 50, 10),
        ("sim.launch.yaml", {"pacing": "as_fast_as_possible", "lockstep_priority": "true"}, 0, 0),
    ],
)
def test_node_priorities(tmp_path, file, arguments, loop, watchers):
    found = priorities(file, tmp_path, **arguments)
    expected = {
        "robot_interface": loop,
        "controller": loop,
        "state_publisher": watchers,
        "recorder": watchers,
    }
    if file == "demo.launch.yaml":
        expected["scenario"] = watchers
    assert found == expected


def test_robot_launch_clamps_the_state_publisher_below_the_controller(tmp_path):
    plan = plan_launch(
        launch_file("robot.launch.yaml"), {"realtime_priority": "30", "watcher_priority": "40"}
    )
    commands = {process.label: " ".join(process.command) for process in plan.processes}
    assert "realtime_priority:=30" in commands["controller"]
    assert "realtime_priority:=29" in commands["state_publisher"]
