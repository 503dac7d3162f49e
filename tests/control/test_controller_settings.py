import pytest
import yaml
from control_helpers import CONTROLLER_YAML

from wbm_control.controller_settings import ControllerSettings
from wbm_description.exceptions import ConfigError


def params():
    return yaml.safe_load(CONTROLLER_YAML.read_text())["/**"]["ros__parameters"]


def test_the_shipped_params_file_loads():
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML)
    assert settings.mode == "torque" and settings.control_rate == 500.0
    assert list(settings.frame_tasks) == [
        "left_hand", "right_hand", "left_foot", "right_foot"
    ]  # fmt: skip
    assert settings.frame_tasks["left_hand"].frame == "l_hand"
    assert settings.control_period == pytest.approx(0.002)


def test_every_value_of_the_params_file_has_a_comment():
    """Every value has a comment, except in the frame task blocks after the first (same keys)."""
    block = None
    for number, line in enumerate(CONTROLLER_YAML.read_text().splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = stripped.partition(":")
        if indent == 6 and not value.split("#")[0].strip():
            block = key  # a frame task block
        elif indent <= 6:
            block = None
        repeated = block is not None and block != "left_hand" and indent == 8
        if value.split("#")[0].strip() and not repeated:
            assert "#" in value, f"line {number} has no comment: {line}"


@pytest.mark.parametrize(
    "change, key",
    [
        ({"mode": "position"}, "mode"),
        ({"control_rate": 0.0}, "control_rate"),
        ({"unknown_key": 1}, "unknown_key"),
        ({"com": {"kp": -1.0}}, "com.kp"),
        ({"estimator": {"load_threshold": 10.0, "unload_threshold": 20.0}}, "unload_threshold"),
        ({"frame_tasks": {"names": ["x"], "x": {"position_weight": 1.0}}}, "frame_tasks.x.frame"),
        ({"torque": {"servo_references": "yes"}}, "servo_references"),
    ],
)
def test_wrong_values_name_their_key(change, key):
    values = params()
    values.update(change)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        ControllerSettings.from_mapping(values, source="controller.yaml")


def test_the_settings_mirror_the_file_section_by_section():
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML)
    values = params()
    # Every key of the file is a field of the same section, with the file's value.
    assert settings.com.dcm_gain == values["com"]["dcm_gain"] == 3.0
    assert settings.torque.wrench_weight == values["torque"]["wrench_weight"] == 1.0e-5
    assert settings.base_orientation.frame == values["base_orientation"]["frame"]
    assert settings.estimator.velocity_cutoff == values["estimator"]["velocity_cutoff"]
    # Back to a mapping and read again: the same settings (the ROS form of frame_tasks and the
    # plain {name: section} form give the same tasks).
    again = ControllerSettings.from_mapping(settings.to_mapping(), source="round trip")
    assert again == settings
    mapping = settings.to_mapping()
    for section, keys in mapping.items():
        if isinstance(keys, dict) and section != "frame_tasks":
            assert set(keys) == set(values[section]), section
    assert set(mapping["frame_tasks"]) == set(values["frame_tasks"]["names"])


def test_a_partial_section_keeps_that_sections_defaults():
    # posture's own defaults (ik_gain 2 /s, kp 25 /s^2), not another task's.
    settings = ControllerSettings.from_mapping({"posture": {"weight": 0.5}})
    assert (settings.posture.weight, settings.posture.ik_gain, settings.posture.kp) == (
        0.5, 2.0, 25.0
    )  # fmt: skip
    assert settings.contact.weight == 1000.0 and settings.com.kd == 14.0
    # A velocity cut-off of 0 switches the filter off (None; ROS parameters cannot be null).
    off = ControllerSettings.from_mapping({"estimator": {"velocity_cutoff": 0.0}})
    assert off.estimator.velocity_cutoff is None
