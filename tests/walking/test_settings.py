import math

import pytest

from wbm_control.walking import WalkingSettings
from wbm_description.exceptions import ConfigError


def test_defaults_are_valid_and_derived_values_follow_their_definitions():
    settings = WalkingSettings()
    assert settings.step_duration == pytest.approx(0.8, abs=1e-15)  # 0.6 single + 0.2 double
    # preview: ceil(1.6 s horizon / 0.8 s step) + 2 steps
    assert settings.preview_steps == 4
    resolved = settings.with_robot(nominal_foot_spacing=0.136, com_height=0.48)
    assert resolved.omega == pytest.approx(math.sqrt(9.81 / 0.48), rel=1e-15)
    # The default velocity limits are realisable by the default step limits.
    assert settings.max_forward_velocity * settings.step_duration <= settings.max_step_length
    assert 2 * settings.max_lateral_velocity * settings.step_duration <= settings.max_step_width


def test_with_robot_fills_only_the_fields_left_to_the_model():
    filled = WalkingSettings().with_robot(nominal_foot_spacing=0.136, com_height=0.48)
    assert (filled.nominal_foot_spacing, filled.com_height) == (0.136, 0.48)
    kept = WalkingSettings(com_height=0.5).with_robot(nominal_foot_spacing=0.136, com_height=0.48)
    assert kept.com_height == 0.5


def test_unresolved_robot_fields_raise_when_needed():
    settings = WalkingSettings()
    with pytest.raises(ConfigError, match="com_height"):
        settings.require_com_height()
    with pytest.raises(ConfigError, match="nominal_foot_spacing"):
        settings.require_foot_spacing()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("single_support_duration", 0.0),
        ("double_support_duration", -0.1),
        ("max_step_length", float("nan")),
        ("max_step_length", float("inf")),
        ("max_step_width", -0.01),
        ("max_step_yaw", math.pi / 2),
        ("min_foot_spacing", 0.0),
        ("nominal_foot_spacing", 0.05),  # below min_foot_spacing (0.10)
        ("com_height", -0.4),
        ("swing_height", 0.0),
        ("zmp_margin", -0.001),
        ("zmp_inward_offset", -0.001),
        ("mpc_horizon", 0.5),  # shorter than one step (0.8 s)
        ("replan_period", 0.001),  # shorter than time_step (0.002 s)
        ("min_touchdown_phase", 0.0),
        ("min_touchdown_phase", 1.5),
        ("stabilizer_gain", 1.0),
        ("max_forward_velocity", 0.4),  # 0.4 * 0.8 s = 0.32 m > 0.25 m max step
        ("max_lateral_velocity", 0.07),  # 2 * 0.07 * 0.8 = 0.112 m > 0.10 m max width
        ("max_yaw_rate", 0.5),  # 0.5 * 0.8 = 0.4 rad > 0.35 rad
        ("touchdown_force", True),  # a bool is not a number
        ("replan_from_measured_state", 1),
    ],
)
def test_bad_values_raise_a_config_error_naming_the_key(key, value):
    with pytest.raises(ConfigError) as error:
        WalkingSettings(**{key: value})
    assert error.value.key == key
    assert error.value.expected
    assert error.value.path == "<no file>"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("min_single_support_duration", 0.7),  # longer than the swing (0.6 s)
        ("min_single_support_duration", 0.05),  # not longer than step_adjustment_freeze (0.1 s)
        ("max_single_support_duration", 0.5),  # shorter than the swing (0.6 s)
        ("step_timing_threshold", -0.01),
        ("dcm_offset_weight", -1.0),
    ],
)
def test_bad_step_timing_values_raise_a_config_error_naming_the_key(key, value):
    with pytest.raises(ConfigError) as error:
        WalkingSettings(step_timing_weight=0.1, **{key: value})
    assert error.value.key == key
    assert error.value.expected
    # Step timing off (weight 0): its durations are not checked against the swing.
    if key.endswith("single_support_duration"):
        WalkingSettings(**{key: value})


def test_mode_ik_inward_offset_is_the_shared_one_unless_given():
    # None (the default, or -1.0 in a file, where null cannot be written): mode ik takes
    # zmp_inward_offset; a number >= 0 replaces it in mode ik (config/g1: 0.0).
    assert WalkingSettings().ik_zmp_inward_offset is None
    read = WalkingSettings.from_mapping({"zmp_inward_offset": 0.015, "ik_zmp_inward_offset": -1.0})
    assert (read.zmp_inward_offset, read.ik_zmp_inward_offset) == (0.015, None)
    assert WalkingSettings.from_mapping({"ik_zmp_inward_offset": 0.0}).ik_zmp_inward_offset == 0.0
    with pytest.raises(ConfigError, match="ik_zmp_inward_offset"):
        WalkingSettings(ik_zmp_inward_offset=-0.5)
