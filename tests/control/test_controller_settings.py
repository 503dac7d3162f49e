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
