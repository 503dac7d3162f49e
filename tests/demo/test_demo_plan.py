"""What ``wbm_demo`` launches: its options reach demo.launch.yaml's arguments.

``--command-delay``: the robot interface gets the delay, the controller the trigger that answers
every sample, and neither SCHED_FIFO (a lockstep loop with a delay keeps both CPUs busy: in
SCHED_FIFO it starved the demo's recorder and scenario, which then heard a seventh of
joint_states and sent the push 1.2 s of sim time late); without it the demo's loop keeps its
SCHED_FIFO (lockstep_priority true) and the controller its ``inputs`` trigger. A delay the
robot interface refuses is refused before anything starts, naming the argument.
"""

from __future__ import annotations

import re

import pytest

from wbm_bringup.demo.run import _plan, build_parser
from wbm_bringup.demo.scenario import DemoScenario
from wbm_bringup.launching import LaunchArgumentError
from wbm_bringup.share import launch_file


def demo_commands(tmp_path, *options: str) -> dict[str, str]:
    """Process label to its command line, as ``wbm_demo <options>`` launches it."""
    args = build_parser().parse_args(list(options))
    args.launch_file = launch_file("demo.launch.yaml")
    plan = _plan(args, tmp_path / "recording", DemoScenario())
    return {process.label: " ".join(process.command) for process in plan.processes}


def parameter(command: str, name: str) -> str:
    match = re.search(rf"{name}:=(\S+)", command)
    assert match, f"no {name} in {command}"
    return match.group(1)


def test_the_command_delay_reaches_the_loop_in_normal_scheduling(tmp_path):
    commands = demo_commands(tmp_path, "--command-delay", "0.002")
    assert float(parameter(commands["robot_interface"], "command_delay")) == 0.002
    assert parameter(commands["controller"], "trigger") == "every_sample"
    for label in ("robot_interface", "controller", "state_publisher", "recorder", "scenario"):
        assert parameter(commands[label], "realtime_priority") == "0", label


def test_without_it_the_demo_loop_is_strict_and_in_sched_fifo(tmp_path):
    commands = demo_commands(tmp_path)
    assert float(parameter(commands["robot_interface"], "command_delay")) == 0.0
    assert parameter(commands["controller"], "trigger") == "inputs"
    assert parameter(commands["robot_interface"], "realtime_priority") == "50"
    assert parameter(commands["controller"], "realtime_priority") == "50"
    assert parameter(commands["recorder"], "realtime_priority") == "10"


@pytest.mark.parametrize(
    ("delay", "expected"),
    [("0.003", "whole number of control periods"), ("0.1", "less than command_timeout")],
)
def test_a_delay_the_robot_interface_refuses_is_refused_before_the_launch(
    tmp_path, delay, expected
):
    with pytest.raises(LaunchArgumentError, match=f"command_delay:='{delay}'.*{expected}"):
        demo_commands(tmp_path, "--command-delay", delay)
