"""``wbm launch``'s reading of YAML launch files: the ROS 2 launch format's meaning."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from wbm_bringup.launching import LaunchFileError, plan_launch


def write(directory: Path, name: str, entities: list) -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump({"launch": entities}, sort_keys=False))
    return path


def node(**attributes) -> dict:
    return {"node": {"pkg": "wbm_bringup", "exec": "wbm", **attributes}}


def test_arguments_defaults_and_overrides(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"arg": {"name": "robot", "default": "icub", "description": "which robot"}},
            {"arg": {"name": "rate", "default": "500"}},
            node(name="$(var robot)_node", param=[{"name": "rate", "value": "$(var rate)"}]),
        ],
    )
    plan = plan_launch(path, {"rate": "1000"})
    assert plan.arguments == {"robot": "icub", "rate": "1000"}
    assert plan.descriptions["robot"] == "which robot"
    (process,) = plan.processes
    assert process.label == "icub_node"
    command = list(process.command)
    ros_args = command[command.index("--ros-args") + 1 :]
    assert ros_args == ["-r", "__node:=icub_node", "-p", "rate:=1000"]
    # The executable is the console entry point in <prefix>/lib/<pkg>/, as ros2 run finds it.
    assert Path(command[1]).parts[-2:] == ("wbm_bringup", "wbm")


def test_unknown_argument_is_an_error(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [{"arg": {"name": "robot", "default": "icub"}}])
    with pytest.raises(LaunchFileError, match=r"unknown launch argument\(s\) \['robto'\]"):
        plan_launch(path, {"robto": "x"})


def test_argument_without_default_must_be_given(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [{"arg": {"name": "robot"}}])
    with pytest.raises(LaunchFileError, match="has no default"):
        plan_launch(path)
    assert plan_launch(path, {"robot": "talos"}).arguments["robot"] == "talos"


def test_choices_are_enforced(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [{"arg": {"name": "mode", "default": "ik", "choices": ["ik", "torque"]}}],
    )
    with pytest.raises(LaunchFileError, match="expected one of"):
        plan_launch(path, {"mode": "position"})


def test_conditions(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"arg": {"name": "viewer", "default": "true"}},
            node(name="always"),
            node(name="viewer", **{"if": "$(var viewer)"}),
            node(name="no_viewer", unless="$(var viewer)"),
            node(name="never", **{"if": "$(and $(var viewer) $(not $(var viewer)))"}),
        ],
    )
    assert [p.label for p in plan_launch(path).processes] == ["always", "viewer"]
    assert [p.label for p in plan_launch(path, {"viewer": "false"}).processes] == [
        "always",
        "no_viewer",
    ]
    bad = write(tmp_path, "b.launch.yaml", [node(name="x", **{"if": "maybe"})])
    with pytest.raises(LaunchFileError, match="expected a boolean"):
        plan_launch(bad)


def test_substitutions(tmp_path, monkeypatch):
    monkeypatch.setenv("WBM_TEST_VALUE", "42")
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"let": {"name": "which", "value": "side"}},
            {"let": {"name": "side", "value": "sim"}},
            node(
                name="n",
                param=[
                    {"name": "nested", "value": "$(var $(var which))"},
                    {"name": "env", "value": "$(env WBM_TEST_VALUE)"},
                    {"name": "env_default", "value": "$(env WBM_NO_SUCH_VARIABLE fallback)"},
                    {"name": "here", "value": "$(dirname)"},
                    {"name": "equal", "value": "$(equals $(var side) sim)"},
                    {"name": "sum", "value": "$(eval '2 * 3 + 1')"},
                    {"name": "share", "value": "$(find-pkg-share example-robot-data)"},
                ],
            ),
        ],
    )
    command = list(plan_launch(path).processes[0].command)
    params = dict(command[i + 1].split(":=", 1) for i, item in enumerate(command) if item == "-p")
    assert params["nested"] == "sim"
    assert params["env"] == "42"
    assert params["env_default"] == "fallback"
    assert params["here"] == str(tmp_path.resolve())
    assert params["equal"] == "true"
    assert params["sum"] == "7"
    assert params["share"].endswith(os.path.join("share", "example-robot-data"))


def test_unsupported_tag_names_the_file_and_tag(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [{"timer": {"period": 1.0}}])
    with pytest.raises(LaunchFileError) as info:
        plan_launch(path)
    assert str(path) in str(info.value) and "tag 'timer'" in str(info.value)


def test_unsupported_attribute_names_the_tag(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [node(name="n", respawn="true")])
    with pytest.raises(LaunchFileError, match="tag 'node' attribute 'respawn'"):
        plan_launch(path)


def test_unsupported_substitution(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [node(name="$(command ls)")])
    with pytest.raises(LaunchFileError, match="unsupported substitution"):
        plan_launch(path)


def test_eval_refuses_names(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [node(name="$(eval '__import__(\"os\")')")])
    with pytest.raises(LaunchFileError, match="only literals"):
        plan_launch(path)


def test_missing_executable_and_param_file(tmp_path):
    path = write(tmp_path, "a.launch.yaml", [{"node": {"pkg": "wbm_description", "exec": "nope"}}])
    with pytest.raises(LaunchFileError, match="executable not found"):
        plan_launch(path)
    path = write(tmp_path, "b.launch.yaml", [node(name="n", param=[{"from": "missing.yaml"}])])
    with pytest.raises(LaunchFileError, match="no file missing.yaml"):
        plan_launch(path)


def test_include_group_namespace_and_remap(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    a: 1\n")
    write(
        tmp_path,
        "inner.launch.yaml",
        [
            {"arg": {"name": "label", "default": "inner"}},
            node(
                name="$(var label)",
                namespace="sub",
                param=[{"from": "$(dirname)/params.yaml"}],
                remap=[{"from": "joint_states", "to": "/robot/joint_states"}],
                on_exit="shutdown",
            ),
        ],
    )
    outer = write(
        tmp_path,
        "outer.launch.yaml",
        [
            {"arg": {"name": "ns", "default": "wbm"}},
            {
                "group": [
                    {"push_ros_namespace": {"namespace": "$(var ns)"}},
                    {"let": {"name": "scoped_only", "value": "x"}},
                    {
                        "include": {
                            "file": "$(dirname)/inner.launch.yaml",
                            "arg": [{"name": "label", "value": "included"}],
                        }
                    },
                ]
            },
            node(name="outside"),
        ],
    )
    plan = plan_launch(outer)
    included, outside = plan.processes
    assert included.label == "included" and included.required
    command = list(included.command)
    assert "__ns:=/wbm/sub" in command
    assert command[command.index("--params-file") + 1] == str(params)
    assert "joint_states:=/robot/joint_states" in command
    # The group's namespace does not leak to what follows it.
    assert not any(item.startswith("__ns:=") for item in outside.command)


def test_executable_entity(tmp_path):
    path = write(
        tmp_path,
        "a.launch.yaml",
        [
            {"set_env": {"name": "WBM_A", "value": "1"}},
            {
                "executable": {
                    "cmd": f"{sys.executable} -c 'print(1)'",
                    "name": "printer",
                    "env": [{"name": "WBM_B", "value": "2"}],
                }
            },
        ],
    )
    (process,) = plan_launch(path).processes
    assert process.command == (sys.executable, "-c", "print(1)")
    assert process.environment == {"WBM_A": "1", "WBM_B": "2"}


def test_xml_files_are_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "a.launch.xml"
    path.write_text("<launch/>")
    with pytest.raises(LaunchFileError, match="YAML launch files"):
        plan_launch(path)
