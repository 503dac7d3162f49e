"""Which launch arguments made each value: a value refused while planning names them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wbm_bringup.launching import (
    InlineParameter,
    LaunchArgumentError,
    LaunchFileError,
    ParameterFile,
    plan_launch,
)


def write(directory: Path, name: str, entities: list) -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump({"launch": entities}, sort_keys=False))
    return path


def node(**attributes) -> dict:
    return {"node": {"pkg": "wbm_bringup", "exec": "wbm", **attributes}}


def argument_names(error: LaunchArgumentError) -> list[str]:
    return [argument.name for argument in error.arguments]


def test_parameters_keep_the_arguments_they_were_made_from(tmp_path):
    params = tmp_path / "config" / "icub" / "p.yaml"
    params.parent.mkdir(parents=True)
    params.write_text("/**:\n  ros__parameters: {}\n")
    inner = write(
        tmp_path,
        "inner.launch.yaml",
        [
            {"arg": {"name": "rate", "default": "1.0"}},
            {"arg": {"name": "mode", "default": "x"}},
            {"arg": {"name": "directory", "default": "$(dirname)/config/icub"}},
            node(
                name="n",
                param=[
                    {"from": "$(var directory)/p.yaml"},
                    {"name": "rate", "value": "$(var rate)"},
                    {"name": "mode", "value": "$(var mode)"},
                    {"name": "fixed", "value": "3"},
                ],
            ),
        ],
    )
    outer = write(
        tmp_path,
        "outer.launch.yaml",
        [
            {"arg": {"name": "robot", "default": "icub"}},
            {"arg": {"name": "period", "default": "0.5"}},
            {"arg": {"name": "config", "default": "$(dirname)/config/$(var robot)"}},
            {"let": {"name": "double", "value": "$(eval '2 * $(var period)')"}},
            {
                "include": {
                    "file": str(inner),
                    "arg": [
                        {"name": "rate", "value": "$(var double)"},
                        {"name": "mode", "value": "literal"},
                        {"name": "directory", "value": "$(var config)"},
                    ],
                }
            },
        ],
    )
    plan = plan_launch(outer, {"period": "0.25"})
    assert plan.given == {"period"}
    (process,) = plan.processes
    sources = {
        source.name if isinstance(source, InlineParameter) else "from": source
        for source in process.node.parameters
    }
    assert isinstance(sources["from"], ParameterFile)
    assert sources["from"].origins == {"config", "robot"}
    assert sources["rate"].text == "0.5" and sources["rate"].origins == {"period"}
    assert sources["mode"].origins == set()  # a literal of the outer file
    assert sources["fixed"].origins == set()
    assert process.node.fully_qualified_name == "/n"
    values = plan.argument_values(sources["from"].origins)
    assert [(a.name, a.given) for a in values] == [("config", False), ("robot", False)]


def test_a_failing_eval_names_the_argument_it_was_made_from(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"arg": {"name": "control_rate", "default": "500.0"}},
            node(name="n", param=[{"name": "p", "value": "$(eval '1.0 / $(var control_rate)')"}]),
        ],
    )
    for value in ("0", "abc", "", "1e999 *"):
        with pytest.raises(LaunchArgumentError) as info:
            plan_launch(path, {"control_rate": value})
        assert argument_names(info.value) == ["control_rate"]
        message = str(info.value)
        assert message.startswith(f"launch argument control_rate:={value!r}: $(eval): expected")
        assert "Traceback" not in message
    (process,) = plan_launch(path).processes
    assert "p:=0.002" in process.command


def test_a_failing_eval_of_the_file_itself_names_the_file(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [node(name="$(eval '1 / 0')")])
    with pytest.raises(LaunchFileError) as info:
        plan_launch(path)
    assert not isinstance(info.value, LaunchArgumentError)
    assert str(path) in str(info.value) and "ZeroDivisionError" in str(info.value)


def test_choices_refused_through_an_include_name_the_outer_argument(tmp_path):
    inner = write(
        tmp_path,
        "inner.launch.yaml",
        [{"arg": {"name": "side", "default": "sim", "choices": ["sim", "mujoco"]}}],
    )
    outer = write(
        tmp_path,
        "outer.launch.yaml",
        [
            {"arg": {"name": "robot_side", "default": "sim"}},
            {
                "include": {
                    "file": str(inner),
                    "arg": [{"name": "side", "value": "$(var robot_side)"}],
                }
            },
        ],
    )
    with pytest.raises(LaunchArgumentError) as info:
        plan_launch(outer, {"robot_side": "bogus"})
    assert argument_names(info.value) == ["robot_side"]
    assert "expected one of ['sim', 'mujoco'], got 'bogus'" in str(info.value)
    assert str(inner) in str(info.value)


def test_a_condition_that_is_not_a_boolean_names_its_argument(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"arg": {"name": "viewer", "default": "false"}},
            {"let": {"name": "show", "value": "$(var viewer)"}},
            node(name="n", unless="$(var show)"),
        ],
    )
    with pytest.raises(LaunchArgumentError) as info:
        plan_launch(path, {"viewer": "maybe"})
    assert argument_names(info.value) == ["viewer"]
    assert "expected a boolean ('true' or 'false'), got 'maybe'" in str(info.value)


def test_an_invalid_namespace_or_node_name_names_its_argument(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"arg": {"name": "namespace", "default": ""}},
            {"arg": {"name": "label", "default": "n"}},
            {"group": [{"push_ros_namespace": {"namespace": "$(var namespace)"}}, node(name="n")]},
            node(name="$(var label)", namespace="$(var namespace)"),
        ],
    )
    assert plan_launch(path, {"namespace": "robot/left"}).processes[1].node.namespace == (
        "/robot/left"
    )
    for value in ("bad/name!", "1robot", "a//b"):
        with pytest.raises(LaunchArgumentError) as info:
            plan_launch(path, {"namespace": value})
        assert argument_names(info.value) == ["namespace"], value
        assert "namespace" in info.value.where
    with pytest.raises(LaunchArgumentError) as info:
        plan_launch(path, {"label": "my-node"})
    assert argument_names(info.value) == ["label"]


def test_a_missing_parameters_file_names_the_arguments_that_chose_it(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"arg": {"name": "robot", "default": "icub"}},
            {"arg": {"name": "config_directory", "default": "$(dirname)/config/$(var robot)"}},
            node(name="n", param=[{"from": "$(var config_directory)/n.yaml"}]),
        ],
    )
    with pytest.raises(LaunchArgumentError) as info:
        plan_launch(path, {"robot": "nonexistent"})
    assert [(a.name, a.given) for a in info.value.arguments] == [
        ("robot", True),
        ("config_directory", False),
    ]
    message = str(info.value)
    assert message.startswith("launch arguments robot:='nonexistent', config_directory (default")
    assert "no file" in message and "expected an existing parameters file" in message


def test_an_empty_inline_value_is_passed_as_the_empty_string(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [node(name="n", param=[{"name": "p", "value": ""}])])
    (process,) = plan_launch(path).processes
    assert "p:=''" in process.command
