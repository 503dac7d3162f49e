"""Pre-flight checks: every node's parameters as it will receive them, checked before starting.

These plans use wbm's real nodes (their executables are only planned, never started) and the
node modules' own ``check_parameters`` hooks, found through the console entry points.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wbm_bringup.launching import (
    LaunchArgumentError,
    LaunchFileError,
    check_plan,
    plan_launch,
)
from wbm_bringup.launching.preflight import NodeModule, find_node_module, node_parameters
from wbm_description.exceptions import ConfigError
from wbm_description.registry import robot_config_path

ROOT = Path(__file__).resolve().parents[2]
STATE_PUBLISHER_YAML = ROOT / "config" / "icub" / "state_publisher.yaml"


def write(directory: Path, name: str, entities: list) -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump({"launch": entities}, sort_keys=False))
    return path


def state_publisher_launch(directory: Path, params_file: Path, *inline: dict) -> Path:
    return write(
        directory,
        "a.launch.yaml",
        [
            {"arg": {"name": "rate", "default": "30.0"}},
            {"arg": {"name": "sim", "default": "false"}},
            {"arg": {"name": "robot", "default": "icub"}},
            {"arg": {"name": "config", "default": str(params_file.parent)}},
            {
                "node": {
                    "pkg": "wbm_description",
                    "exec": "wbm_state_publisher",
                    "name": "state_publisher",
                    "param": [
                        {"from": f"$(var config)/{params_file.name}"},
                        {"name": "marker_rate", "value": "$(var rate)"},
                        {"name": "use_sim_time", "value": "$(var sim)"},
                        {"name": "robot", "value": "$(var robot)"},
                        *inline,
                    ],
                }
            },
        ],
    )


def test_the_hook_is_found_from_the_console_entry_point():
    module = find_node_module("wbm_description", "wbm_state_publisher")
    assert module.module == "wbm_description.ros.state_publisher_node"
    assert module.check.__name__ == "check_parameters"
    # The `wbm` command is an entry point of wbm_bringup without a hook.
    assert find_node_module("wbm_bringup", "wbm") == NodeModule("wbm_bringup.cli", None)
    # An executable of another package is not this one.
    assert find_node_module("wbm_control", "wbm_state_publisher") is None


def test_good_parameters_pass_and_say_what_checked_them(tmp_path):
    plan = plan_launch(state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML))
    (check,) = check_plan(plan)
    assert check.checked_by == "wbm_description.ros.state_publisher_node.check_parameters"


def test_the_node_receives_file_values_then_inline_ones_typed_by_rcl(tmp_path):
    plan = plan_launch(
        state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML), {"rate": "10", "sim": "y"}
    )
    parameters = node_parameters(plan.processes[0].node, plan)
    assert parameters["marker_rate"].value == 10 and parameters["use_sim_time"].value is True
    assert parameters["force_scale"].value == 0.002  # from the file
    assert parameters["force_scale"].source.path.endswith("state_publisher.yaml")


def test_a_bad_inline_value_names_the_launch_argument(tmp_path):
    path = state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML)
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan_launch(path, {"rate": "-1"}))
    message = str(info.value)
    assert message.startswith("launch argument rate:='-1': node state_publisher parameter ")
    assert "'marker_rate': expected a number >= 0 and <= 1000, got -1" in message


def test_ros_own_parameters_must_be_booleans(tmp_path):
    path = state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML)
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan_launch(path, {"sim": "banana"}))
    assert "launch argument sim:='banana'" in str(info.value)
    assert "'use_sim_time': expected true or false, got 'banana'" in str(info.value)


def test_a_value_rcl_cannot_read_names_the_launch_argument(tmp_path):
    path = state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML)
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan_launch(path, {"rate": "a: b"}))
    assert "launch argument rate:='a: b'" in str(info.value)
    assert "rcl cannot read 'a: b'" in str(info.value)


def test_a_value_rcl_would_ignore_is_refused_naming_the_launch_argument(tmp_path):
    # state_publisher.yaml gives marker_rate as a double: rcl would give the node that double
    # and ignore a later string (or a later double after an integer).
    path = state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML)
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan_launch(path, {"rate": "fast"}))
    message = str(info.value)
    assert message.startswith("launch argument rate:='fast': node state_publisher parameter ")
    assert "'marker_rate': expected a double value: the parameters file" in message
    assert "ignoring the later string 'fast'" in message
    # An integer after the double is what the node receives: accepted.
    check_plan(plan_launch(path, {"rate": "20"}))


def test_a_bad_value_in_a_parameters_file_names_the_file_and_parameter(tmp_path):
    directory = tmp_path / "config"
    directory.mkdir()
    params = directory / "state_publisher.yaml"
    params.write_text(
        STATE_PUBLISHER_YAML.read_text().replace("force_scale: 0.002", "force_scale: -1.0")
    )
    path = state_publisher_launch(tmp_path, params)
    with pytest.raises(LaunchFileError) as info:
        check_plan(plan_launch(path))
    assert not isinstance(info.value, LaunchArgumentError)
    assert str(info.value).startswith(f"{params}: node state_publisher parameter 'force_scale'")
    # When a launch argument chose the file, the message says so.
    with pytest.raises(LaunchFileError) as info:
        check_plan(plan_launch(path, {"config": str(directory)}))
    assert f"chosen by launch argument config:={str(directory)!r}" in str(info.value)
    # A later inline value wins over the file's, as in rcl.
    fixed = state_publisher_launch(tmp_path, params, {"name": "force_scale", "value": "0.001"})
    check_plan(plan_launch(fixed))


def test_a_bad_literal_of_the_launch_file_names_the_file_and_parameter(tmp_path):
    path = state_publisher_launch(
        tmp_path, STATE_PUBLISHER_YAML, {"name": "base_pose_topic", "value": "bad topic"}
    )
    with pytest.raises(LaunchFileError) as info:
        check_plan(plan_launch(path))
    assert not isinstance(info.value, LaunchArgumentError)
    message = str(info.value)
    assert message.startswith(f"{path}: node state_publisher parameter 'base_pose_topic'")
    assert "expected a valid ROS topic name" in message


def test_a_robot_config_file_that_does_not_load_names_the_robot_argument(tmp_path):
    path = state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML)
    missing = tmp_path / "nothing.yaml"
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan_launch(path, {"robot": str(missing)}))
    assert f"launch argument robot:={str(missing)!r}" in str(info.value)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: broken\nurdf: robot.urdf\n")
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan_launch(path, {"robot": str(broken)}))
    assert f"launch argument robot:={str(broken)!r}" in str(info.value)
    assert str(broken) in str(info.value)  # the robot config's own error follows


def test_hook_errors_on_sections_and_rules_between_fields(tmp_path):
    path = state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML)
    plan = plan_launch(path, {"rate": "20"})

    def refuse(key: str):
        def check(parameters):
            raise ConfigError(None, key, "something else", None)

        return lambda package, executable: NodeModule("fake", check)

    with pytest.raises(LaunchArgumentError, match="launch argument rate:='20'"):
        check_plan(plan, find_module=refuse("marker_rate"))
    # A section whose parameters came from the file and from a launch argument: the argument.
    sectioned = state_publisher_launch(
        tmp_path,
        STATE_PUBLISHER_YAML,
        {"name": "section.a", "value": "1"},
        {"name": "section.b", "value": "$(var rate)"},
    )
    with pytest.raises(LaunchArgumentError, match="launch argument rate:='20'"):
        check_plan(plan_launch(sectioned, {"rate": "20"}), find_module=refuse("section"))
    # A default refused because of the values given around it: the arguments that gave them.
    with pytest.raises(LaunchArgumentError) as info:
        check_plan(plan, find_module=refuse("not_given"))
    assert "rate:='20'" in str(info.value) and "(not given: its default)" in str(info.value)


def test_a_urdf_the_check_cannot_read_names_the_node_and_the_arguments_given_to_it(tmp_path):
    # The scenario's check builds the model (it checks frames): a URDF that is not XML is not
    # a parameter's fault, the message names the node and the arguments it was given.
    config = yaml.safe_load(robot_config_path("icub").read_text())
    config["urdf"] = "broken.urdf"
    (tmp_path / "broken.urdf").write_text("<robot name='broken'>")
    robot = tmp_path / "broken.yaml"
    robot.write_text(yaml.safe_dump(config))
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"arg": {"name": "robot", "default": "icub"}},
            {
                "node": {
                    "pkg": "wbm_bringup",
                    "exec": "wbm_scenario",
                    "name": "scenario",
                    "param": [{"name": "robot", "value": "$(var robot)"}],
                }
            },
        ],
    )
    with pytest.raises(LaunchFileError) as info:
        check_plan(plan_launch(path, {"robot": str(robot)}))
    message = str(info.value)
    assert message.startswith(f"{path}: node scenario: would not start: ")
    assert "broken.urdf: XML: expected well-formed XML" in message
    assert message.endswith(f"(its parameters come from launch arguments robot:={str(robot)!r})")


def test_a_node_module_that_cannot_be_imported_is_reported(tmp_path):
    plan = plan_launch(state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML))

    def broken(package, executable):
        raise ImportError("no module named 'missing_dependency'")

    with pytest.raises(LaunchFileError, match="cannot be imported: ImportError"):
        check_plan(plan, find_module=broken)


def test_a_node_without_hook_gets_the_ros_checks_only(tmp_path):
    path = state_publisher_launch(tmp_path, STATE_PUBLISHER_YAML)
    plan = plan_launch(path, {"rate": "-1"})
    (check,) = check_plan(plan, find_module=lambda package, executable: None)
    assert check.checked_by is None
    with pytest.raises(LaunchArgumentError, match="use_sim_time"):
        check_plan(plan_launch(path, {"sim": "2"}), find_module=lambda package, executable: None)


def test_the_kind_of_an_expected_value_takes_its_article():
    # "expected an integer value", not "a integer" (the parameter kinds rcl reads)
    from wbm_bringup.launching.preflight import _article

    assert [f"{_article(kind)} {kind}" for kind in ("integer", "double", "string", "bool")] == [
        "an integer",
        "a double",
        "a string",
        "a bool",
    ]
