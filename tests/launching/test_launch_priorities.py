"""The SCHED_FIFO priorities the shipped launch files give each node, per pacing and arguments:
the loop's nodes (robot interface, controller) get realtime_priority in realtime and lockstep
pacing, not as fast as possible; the watchers (state publisher, recorder, scenario) get
watcher_priority, clamped below the loop's, and normal scheduling where the loop has it."""

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
    ("arguments", "loop", "watchers"),
    [
        ({}, 50, 10),  # the defaults, realtime
        ({"pacing": "lockstep"}, 50, 10),
        # A loop that never waits: the controller and the watchers normal; the robot interface
        # is given the priority and keeps normal scheduling itself (it knows its pacing).
        ({"pacing": "as_fast_as_possible"}, 0, 0),
        ({"realtime_priority": "0"}, 0, 0),  # the loop normal: the watchers too
        ({"watcher_priority": "80"}, 50, 49),  # clamped below the loop's
        ({"realtime_priority": "1"}, 1, 0),  # nothing below 1
        ({"watcher_priority": "0", "pacing": "lockstep"}, 50, 0),
    ],
)
def test_demo_priorities(tmp_path, arguments, loop, watchers):
    found = priorities("demo.launch.yaml", tmp_path, **arguments)
    given = int(arguments.get("realtime_priority", "50"))
    assert found == {
        "robot_interface": given,
        "controller": loop,
        "state_publisher": watchers,
        "recorder": watchers,
        "scenario": watchers,
    }


def test_robot_launch_clamps_the_state_publisher_below_the_controller(tmp_path):
    plan = plan_launch(
        launch_file("robot.launch.yaml"), {"realtime_priority": "30", "watcher_priority": "40"}
    )
    commands = {process.label: " ".join(process.command) for process in plan.processes}
    assert "realtime_priority:=30" in commands["controller"]
    assert "realtime_priority:=29" in commands["state_publisher"]
