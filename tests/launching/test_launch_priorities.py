"""The SCHED_FIFO priorities the shipped launch files give each node, per pacing and arguments:
the loop's nodes (robot interface, controller) get realtime_priority in realtime pacing (every
thread, realtime_threads all) and in lockstep with lockstep_priority (loop: their hand-over and
receive threads only, realtime_threads loop; true, the demo's default: every thread), never as
fast as possible, nor in lockstep with a command_delay (both sides of that loop run at once and
keep both CPUs busy: in SCHED_FIFO it starved the demo's recorder and scenario); the watchers
(state publisher, recorder, scenario) get watcher_priority, clamped below the loop's, in lockstep
with lockstep_priority true (a loop whose every thread never waits), and normal scheduling
otherwise."""

from __future__ import annotations

import re

import pytest

from wbm_bringup.launching import plan_launch
from wbm_bringup.share import launch_file

NODES = ("robot_interface", "controller", "state_publisher", "recorder", "scenario")


def scheduling(file: str, tmp_path, **arguments: str) -> dict[str, tuple[int, str | None]]:
    """Node name to (realtime_priority, realtime_threads or None) of its command line."""
    plan = plan_launch(launch_file(file), {"record": str(tmp_path / "bag"), **arguments})
    found = {}
    for process in plan.processes:
        command = " ".join(process.command)
        match = re.search(r"realtime_priority:=(-?\d+)", command)
        threads = re.search(r"realtime_threads:=(\w+)", command)
        if process.label in NODES:
            assert match, f"{process.label}: no realtime_priority in {process.command}"
            found[process.label] = (int(match.group(1)), threads and threads.group(1))
    return found


@pytest.mark.parametrize(
    ("file", "arguments", "loop", "threads", "watchers"),
    [
        # lockstep with lockstep_priority true (the demo's default)
        ("demo.launch.yaml", {}, 50, "all", 10),
        ("demo.launch.yaml", {"lockstep_priority": "false"}, 0, "all", 0),
        ("demo.launch.yaml", {"lockstep_priority": "loop"}, 50, "loop", 0),
        # the loop waits for its period: every thread, watchers normal
        ("demo.launch.yaml", {"pacing": "realtime"}, 50, "all", 0),
        ("demo.launch.yaml", {"pacing": "as_fast_as_possible"}, 0, "all", 0),  # never waits
        ("demo.launch.yaml", {"realtime_priority": "0"}, 0, "all", 0),  # the loop normal: all
        ("demo.launch.yaml", {"watcher_priority": "80"}, 50, "all", 49),  # below the loop's
        ("demo.launch.yaml", {"realtime_priority": "1"}, 1, "all", 0),  # nothing below 1
        ("demo.launch.yaml", {"watcher_priority": "0"}, 50, "all", 0),
        # a lockstep loop with a command delay keeps both CPUs busy: normal scheduling
        ("demo.launch.yaml", {"command_delay": "0.002"}, 0, "all", 0),
        ("demo.launch.yaml", {"command_delay": "0.0"}, 50, "all", 10),
        ("demo.launch.yaml", {"pacing": "realtime", "command_delay": "0.004"}, 50, "all", 0),
        ("sim.launch.yaml", {}, 50, "all", 0),  # realtime
        ("sim.launch.yaml", {"pacing": "lockstep"}, 0, "all", 0),  # sim.launch.yaml: opt-in
        # the hand-over and receive threads, watchers normal
        ("sim.launch.yaml", {"pacing": "lockstep", "lockstep_priority": "loop"}, 50, "loop", 0),
        ("sim.launch.yaml", {"pacing": "lockstep", "lockstep_priority": "true"}, 50, "all", 10),
        (
            "sim.launch.yaml",
            {"pacing": "lockstep", "lockstep_priority": "loop", "realtime_priority": "0"},
            0,
            "loop",
            0,
        ),
        (
            "sim.launch.yaml",
            {"pacing": "lockstep", "lockstep_priority": "true", "command_delay": "0.002"},
            0,
            "all",
            0,
        ),
        (
            "sim.launch.yaml",
            {"pacing": "lockstep", "lockstep_priority": "loop", "command_delay": "0.004"},
            0,
            "loop",
            0,
        ),
        (
            "sim.launch.yaml",
            {"pacing": "as_fast_as_possible", "lockstep_priority": "true"},
            0,
            "all",
            0,
        ),
    ],
)
def test_node_priorities(tmp_path, file, arguments, loop, threads, watchers):
    found = scheduling(file, tmp_path, **arguments)
    expected = {
        "robot_interface": (loop, threads),
        "controller": (loop, threads),
        "state_publisher": (watchers, None),
        "recorder": (watchers, None),
    }
    if file == "demo.launch.yaml":
        expected["scenario"] = (watchers, None)
    assert found == expected


def test_robot_launch_clamps_the_state_publisher_below_the_controller(tmp_path):
    plan = plan_launch(
        launch_file("robot.launch.yaml"), {"realtime_priority": "30", "watcher_priority": "40"}
    )
    commands = {process.label: " ".join(process.command) for process in plan.processes}
    assert "realtime_priority:=30" in commands["controller"]
    assert "realtime_threads:=all" in commands["controller"]  # a driver's loop: every thread
    assert "realtime_priority:=29" in commands["state_publisher"]
