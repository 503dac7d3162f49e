"""A bad value of every argument of every shipped launch file is refused before anything starts.

Each case plans the launch file with one bad argument and runs the pre-flight checks (nothing is
started): the error must name that argument, with the value given, and say what was expected.
``test_every_argument_of_every_launch_file_has_a_case`` keeps the table complete.

Cases that only the controller or the robot-interface node can judge (a negative
``target_duration`` or ``control_rate``) are refused by those node modules' ``check_parameters``
hooks; a value no pre-flight can see is refused by the node at start, which ends the launch
(tests/bringup/test_launch_failures.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from wbm_bringup.launching import LaunchArgumentError, check_plan, plan_launch
from wbm_bringup.launching.preflight import find_node_module

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "launch"
ICUB_CONFIG = str(ROOT / "config" / "icub")


def test_the_controller_and_robot_interface_have_hooks():
    for package, executable in (
        ("wbm_control", "wbm_controller"),
        ("wbm_dynamics", "wbm_robot_interface"),
    ):
        module = find_node_module(package, executable)
        assert module is not None and module.check is not None, executable


def case(file: str, argument: str, value: str, **extra):
    """One bad value of one argument (``extra``: other arguments given with it)."""
    name = f"{file.split('.')[0]}-{argument}:={value}" + "".join(f"+{k}" for k in extra)
    return pytest.param(file, argument, value, extra, id=name)


LOCKSTEP_PRIORITY = {"pacing": "lockstep", "lockstep_priority": "true"}

CASES = [
    # sim.launch.yaml
    case("sim.launch.yaml", "robot", "nonexistent"),
    case("sim.launch.yaml", "robot", "nonexistent", config_directory=ICUB_CONFIG),
    case("sim.launch.yaml", "robot", "panda"),  # registered, but no config/panda files
    case("sim.launch.yaml", "robot_side", "bogus"),
    case("sim.launch.yaml", "controller_mode", "x"),
    case("sim.launch.yaml", "contact_model", "x"),
    case("sim.launch.yaml", "pacing", "x"),
    case("sim.launch.yaml", "control_rate", "0"),
    case("sim.launch.yaml", "control_rate", "abc"),
    case("sim.launch.yaml", "control_rate", ""),
    case("sim.launch.yaml", "control_rate", "-5"),
    case("sim.launch.yaml", "publish_rate", "0"),
    case("sim.launch.yaml", "publish_rate", "abc"),
    case("sim.launch.yaml", "publish_rate", "-5"),
    case("sim.launch.yaml", "target_duration", "-1"),
    # A string after the double of controller.yaml: rcl would give the node the double.
    case("sim.launch.yaml", "target_duration", "abc"),
    case("sim.launch.yaml", "realtime_priority", "100"),  # SCHED_FIFO priorities are 1..99
    case("sim.launch.yaml", "realtime_priority", "-1"),
    case("sim.launch.yaml", "realtime_priority", "high"),
    # Used in lockstep with lockstep_priority; clamped below realtime_priority there (a larger
    # value gets realtime_priority - 1), so only values below 0 or not numbers are refused.
    case("sim.launch.yaml", "watcher_priority", "-1", **LOCKSTEP_PRIORITY),
    case("sim.launch.yaml", "watcher_priority", "high", **LOCKSTEP_PRIORITY),
    case("sim.launch.yaml", "lockstep_priority", "maybe"),
    case("sim.launch.yaml", "loop_cpus", "fast"),
    case("sim.launch.yaml", "cpu_dma_latency", "-2"),
    case("sim.launch.yaml", "cpu_dma_latency", "low"),
    case("sim.launch.yaml", "viewer", "maybe"),
    case("sim.launch.yaml", "record", "/etc/passwd/bag"),  # under a file: cannot be created
    case("sim.launch.yaml", "record", "<existing>"),  # exists: rosbag2 needs a new directory
    case("sim.launch.yaml", "namespace", "bad/name!"),
    case("sim.launch.yaml", "namespace", "1robot"),
    case("sim.launch.yaml", "use_sim_time", "banana"),
    case("sim.launch.yaml", "command_delay", "-0.002"),
    case("sim.launch.yaml", "command_delay", "0.003", pacing="lockstep"),  # not whole periods
    case("sim.launch.yaml", "command_delay", "0.02", pacing="lockstep"),  # the watchdog's
    case("sim.launch.yaml", "use_sim_time", "2"),
    case("sim.launch.yaml", "config_directory", "/nonexistent"),
    # robot.launch.yaml
    case("robot.launch.yaml", "robot", "nonexistent"),
    case("robot.launch.yaml", "robot", "nonexistent", config_directory=ICUB_CONFIG),
    case("robot.launch.yaml", "controller_mode", "x"),
    case("robot.launch.yaml", "control_rate", "0"),
    case("robot.launch.yaml", "control_rate", "abc"),  # ignored by rcl: see target_duration
    case("robot.launch.yaml", "control_rate", "-5"),
    case("robot.launch.yaml", "target_duration", "-1"),
    case("robot.launch.yaml", "trigger", "x"),
    case("robot.launch.yaml", "realtime_priority", "100"),
    case("robot.launch.yaml", "realtime_threads", "some"),
    case("robot.launch.yaml", "cpu_affinity", "fast"),
    case("robot.launch.yaml", "cpu_affinity", "0.5"),
    case("robot.launch.yaml", "cpu_dma_latency", "-5"),
    case("robot.launch.yaml", "watcher_priority", "-1"),
    case("robot.launch.yaml", "namespace", "bad/name!"),
    case("robot.launch.yaml", "use_sim_time", "banana"),
    case("robot.launch.yaml", "base_pose_topic", "bad topic"),
    case("robot.launch.yaml", "base_pose_topic", ""),
    case("robot.launch.yaml", "config_directory", "/nonexistent"),
    # demo.launch.yaml
    case("demo.launch.yaml", "robot", "nonexistent"),
    case("demo.launch.yaml", "controller_mode", "x"),
    case("demo.launch.yaml", "contact_model", "x"),
    case("demo.launch.yaml", "pacing", "x"),
    case("demo.launch.yaml", "control_rate", "0"),
    case("demo.launch.yaml", "command_delay", "0.001"),  # lockstep: half a period at 500 Hz
    case("demo.launch.yaml", "control_rate", "-5"),
    case("demo.launch.yaml", "realtime_priority", "-1"),
    case("demo.launch.yaml", "watcher_priority", "-1"),
    case("demo.launch.yaml", "lockstep_priority", "yes"),
    case("demo.launch.yaml", "viewer", "maybe"),
    case("demo.launch.yaml", "record", "/etc/passwd/bag"),
    case("demo.launch.yaml", "hand_duration", "-1"),
    case("demo.launch.yaml", "hand_duration", "5"),  # ends after the push: the timeline's order
    case("demo.launch.yaml", "end_time", "-1"),
    case("demo.launch.yaml", "end_time", "3"),  # before the push
]


def declared_arguments(file: str) -> list[str]:
    entities = yaml.safe_load((LAUNCH / file).read_text())["launch"]
    return [entity["arg"]["name"] for entity in entities if "arg" in entity]


def test_every_argument_of_every_launch_file_has_a_case():
    covered = {(p.values[0], p.values[1]) for p in CASES}
    for file in ("sim.launch.yaml", "robot.launch.yaml", "demo.launch.yaml"):
        missing = [name for name in declared_arguments(file) if (file, name) not in covered]
        assert missing == [], f"{file}: no bad-value case for {missing}"


@pytest.mark.parametrize(("file", "argument", "value", "extra"), CASES)
def test_a_bad_argument_is_refused_before_anything_starts(tmp_path, file, argument, value, extra):
    if value == "<existing>":
        value = str(tmp_path)
    arguments = {argument: value, **extra}
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan_launch(LAUNCH / file, arguments))
    error = info.value
    given = [a for a in error.arguments if a.given]
    # The argument is named with its value (with the others given that the value went
    # through, e.g. the pacing that makes a launch file use it).
    assert any(a.name == argument and a.value == value for a in given), str(error)
    message = str(error)
    assert message.startswith("launch argument"), message
    assert f"{argument}:={value!r}" in message
    assert "expected" in message, message


@pytest.mark.parametrize(
    ("file", "arguments"),
    [
        ("sim.launch.yaml", {}),
        ("sim.launch.yaml", {"robot_side": "mujoco", "viewer": "true", "record": "<new>"}),
        ("sim.launch.yaml", {"namespace": "robot/left", "use_sim_time": "false"}),
        ("sim.launch.yaml", {"realtime_priority": "50"}),
        ("sim.launch.yaml", {"pacing": "lockstep", "command_delay": "0.004"}),
        ("robot.launch.yaml", {"base_pose_topic": "ground_truth/odom", "trigger": "inputs"}),
        ("demo.launch.yaml", {"viewer": "true", "record": "<new>", "hand_duration": "1.5"}),
        ("demo.launch.yaml", {"controller_mode": "ik", "end_time": "6.0"}),
    ],
)
def test_good_arguments_pass(tmp_path, file, arguments):
    arguments = {
        name: str(tmp_path / "bag") if value == "<new>" else value
        for name, value in arguments.items()
    }
    plan = plan_launch(LAUNCH / file, arguments)
    checks = check_plan(plan)
    assert [check.label for check in checks] == [process.label for process in plan.processes]


def wbm_launch(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "wbm_bringup.cli", "launch", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("file", "argument"),
    [
        ("sim.launch.yaml", "control_rate:=0"),
        ("sim.launch.yaml", "control_rate:=abc"),
        ("robot.launch.yaml", "use_sim_time:=banana"),
    ],
)
def test_wbm_launch_says_which_argument_and_starts_nothing(file, argument):
    result = wbm_launch(str(LAUNCH / file), argument)
    assert result.returncode == 2, result.stdout + result.stderr
    name, _, value = argument.partition(":=")
    assert result.stderr.startswith(f"wbm: error: launch argument {name}:={value!r}: ")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # nothing started


def test_wbm_launch_print_checks_too():
    result = wbm_launch("--print", str(LAUNCH / "sim.launch.yaml"), "viewer:=maybe")
    assert result.returncode == 2 and "launch argument viewer:='maybe'" in result.stderr
    result = wbm_launch(
        "--print", "--no-check", str(LAUNCH / "robot.launch.yaml"), "base_pose_topic:=bad topic"
    )
    assert result.returncode == 0, result.stderr
    assert "checked " not in result.stdout
