"""The one settings reader (wbm_description.settings): types, ranges, nesting, errors."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from wbm_description.exceptions import ConfigError
from wbm_description.settings import (
    Settings,
    nest,
    parameter_specs,
    read_yaml_section,
    setting,
)


@dataclass(frozen=True)
class Box(Settings):
    name: str = setting("", doc="box name")
    size: tuple[float, float, float] = setting((1.0, 1.0, 1.0), gt=0.0, doc="extents", unit="m")
    friction: float = setting(0.8, ge=0.0, doc="friction")


@dataclass(frozen=True)
class Contact(Settings):
    stiffness: float = setting(5.0e6, gt=0.0, unit="N/m^1.5", doc="normal stiffness")
    tangential: float | None = setting(None, gt=0.0, null=0.0, doc="tangential stiffness")


@dataclass(frozen=True)
class Node(Settings):
    rate: float = setting(500.0, gt=0.0, le=10000.0, unit="Hz", doc="control rate")
    steps: int = setting(3, ge=1, doc="steps")
    mode: str = setting("torque", choices=("torque", "ik"), doc="mode")
    robot: str = setting("icub", nonempty=True, doc="robot")
    enabled: bool = setting(False, doc="switch")
    soles: tuple[str, ...] = setting(("left_foot", "right_foot"), doc="held soles")
    contact: Contact = setting(default_factory=Contact)
    boxes: dict[str, Box] = setting(default_factory=dict)
    ignored_keys = ("use_sim_time",)

    def check(self) -> None:
        if self.steps > 10 and self.mode == "ik":
            raise ConfigError(None, "steps", "<= 10 in mode ik", self.steps)


def test_defaults_and_conversions():
    settings = Node.from_mapping(
        {"rate": 1000, "steps": 4.0, "soles": ["left_foot"], "contact": {"tangential": 0.0}}
    )
    assert settings.rate == 1000.0 and isinstance(settings.rate, float)
    assert settings.steps == 4 and isinstance(settings.steps, int)
    assert settings.soles == ("left_foot",)
    assert settings.contact.tangential is None  # the null encoding of ROS parameters
    assert settings.contact.stiffness == 5.0e6


def test_named_sections_in_both_encodings():
    plain = Node.from_mapping({"boxes": {"step": {"size": [0.2, 0.6, 0.05]}}})
    ros = Node.from_mapping({"boxes": {"names": ["step"], "step": {"size": [0.2, 0.6, 0.05]}}})
    assert plain == ros
    assert plain.boxes["step"] == Box(name="step", size=(0.2, 0.6, 0.05))


@pytest.mark.parametrize(
    ("values", "key", "expected"),
    [
        ({"rate": 0}, "rate", "> 0 and <= 10000"),
        ({"rate": "fast"}, "rate", "a number"),
        ({"rate": float("nan")}, "rate", "a finite number"),
        ({"rate": float("inf")}, "rate", "a finite number"),
        ({"steps": 1.5}, "steps", "an integer"),
        ({"steps": 0}, "steps", ">= 1"),
        ({"mode": "position"}, "mode", "one of ['torque', 'ik']"),
        ({"robot": ""}, "robot", "a non-empty string"),
        ({"enabled": "yes"}, "enabled", "true or false"),
        ({"soles": "left_foot"}, "soles", "a list"),
        ({"contact": {"stiffness": -1}}, "contact.stiffness", "> 0"),
        ({"contact": {"damping": 1}}, "contact.damping", "one of the known keys"),
        ({"contact": 3}, "contact", "a mapping"),
        ({"boxes": {"step": {"size": [1, 2]}}}, "boxes.step.size", "a list of 3 values"),
        ({"boxes": {"names": ["a"], "b": {}}}, "boxes.a", "a section for 'a'"),
        ({"boxes": {"names": ["a"], "a": {}, "b": {}}}, "boxes.b", "a name listed"),
        ({"unknown": 1}, "unknown", "one of the known keys"),
        ({"mode": "ik", "steps": 11}, "steps", "<= 10 in mode ik"),
    ],
)
def test_errors_name_source_key_and_expectation(values, key, expected):
    with pytest.raises(ConfigError) as caught:
        Node.from_mapping(values, source="config/robot/node.yaml")
    error = caught.value
    assert error.path == "config/robot/node.yaml"
    assert error.key == key
    assert expected in error.expected
    assert f"config/robot/node.yaml: key '{key}'" in str(error)


def test_ignored_keys_are_accepted():
    assert Node.from_mapping({"use_sim_time": True}) == Node()


def test_construction_in_code_is_checked_too():
    with pytest.raises(ConfigError) as caught:
        Contact(stiffness=0.0)
    assert caught.value.key == "stiffness"
    with pytest.raises(ConfigError):
        Node().replace(rate=-1.0)


def test_round_trip_through_a_mapping():
    settings = Node.from_mapping(
        {"rate": 250, "contact": {"tangential": 3.0}, "boxes": {"b": {"friction": 0.5}}}
    )
    assert Node.from_mapping(settings.to_mapping()) == settings


def test_parameter_specs_flatten_with_descriptions():
    specs = {spec.name: spec for spec in parameter_specs(Node)}
    assert specs["rate"].default == 500.0
    assert specs["rate"].kind == "float"
    assert specs["rate"].description == "control rate [Hz] (> 0 and <= 10000)"
    assert specs["contact.stiffness"].kind == "float"
    assert specs["contact.tangential"].default == 0.0  # None, written as its null value
    assert specs["soles"].kind == "str[]" and specs["soles"].default == ["left_foot", "right_foot"]
    assert "boxes" not in specs and not any(name.startswith("boxes.") for name in specs)


def test_nest_round_trips_flat_parameter_names():
    flat = {"rate": 1.0, "contact.stiffness": 2.0, "boxes.names": ["a"], "boxes.a.friction": 0.1}
    nested = nest(flat)
    assert nested == {
        "rate": 1.0,
        "contact": {"stiffness": 2.0},
        "boxes": {"names": ["a"], "a": {"friction": 0.1}},
    }
    assert Node.from_mapping(nested).boxes["a"].friction == 0.1


def test_yaml_files_plain_and_ros_parameters(tmp_path):
    plain = tmp_path / "plain.yaml"
    plain.write_text("rate: 100\ncontact:\n  stiffness: 1.0\n")
    ros = tmp_path / "ros.yaml"
    ros.write_text("/**:\n  ros__parameters:\n    rate: 100\n    contact:\n      stiffness: 1.0\n")
    assert Node.from_yaml(plain) == Node.from_yaml(ros) == Node(rate=100.0, contact=Contact(1.0))
    bad = tmp_path / "bad.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    rate: -3\n")
    with pytest.raises(ConfigError) as caught:
        Node.from_yaml(bad)
    assert caught.value.path == str(bad) and caught.value.key == "rate"
    with pytest.raises(ConfigError) as caught:
        read_yaml_section(tmp_path / "missing.yaml")
    assert "a readable YAML file" in caught.value.expected
