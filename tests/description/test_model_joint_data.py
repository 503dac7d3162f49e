"""Per-joint data of the whole-body model in model order, and the frames below a frame."""

from __future__ import annotations

import numpy as np
import pytest

from wbm_description import WholeBodyModel, load_robot
from wbm_description.exceptions import InputError, NameNotFound


@pytest.fixture(scope="module")
def icub():
    return WholeBodyModel.from_config(load_robot("icub"))


def test_servo_gains_and_limits_follow_the_model_order(icub):
    config = icub.config
    for i, name in enumerate(icub.joint_names):
        j = config.joints.index(name)  # the reference: look each joint up by name
        assert icub.servo_kp[i] == config.servo_kp[j]
        assert icub.servo_kd[i] == config.servo_kd[j]
        assert icub.torque_limits[i] == config.torque_limits[j]
        assert icub.config_order[i] == j


def test_config_order_round_trip(icub):
    values = np.arange(icub.ndof, dtype=float) * 1.5
    np.testing.assert_array_equal(icub.to_config_order(icub.from_config_order(values)), values)
    lower = icub.from_config_order(icub.config.position_limits[0])  # NaN entries kept
    assert lower.shape == (icub.ndof,)
    with pytest.raises(InputError):
        icub.from_config_order(np.zeros(icub.ndof + 1))


def test_frames_below_an_ankle_sensor_hold_the_sole_and_not_the_leg(icub):
    below = {icub.frame_names[i] for i in icub.frames_below("l_foot_ft_sensor")}
    assert "l_foot_ft_sensor" in below
    assert "l_sole" in below
    assert "r_sole" not in below
    assert "l_knee" not in below and "root_link" not in below
    everything = icub.frames_below(icub.frame_names[0])
    assert len(everything) == len(icub.frame_names)
    with pytest.raises(NameNotFound):
        icub.frames_below("no_such_frame")
