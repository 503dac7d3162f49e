"""Shared scenarios for the cross-checks and the benchmark: iCub standing still on its servos.

With the robot config's servo gains alone (kp = 100 N m/rad on the legs) iCub does not stand:
its ankles are softer than the inverted pendulum they carry (m g h ~ 28 kg * 9.81 * 0.48 m
~ 133 N m/rad per ankle pair share), and both our simulator and MuJoCo see it fall forward within
2 s. Standing still here therefore means: position references at the initial posture, servo
gains :data:`STANDING_GAIN_SCALE` times the config's, and as feed-forward the joint torques that
hold the initial posture on both soles (``WholeBodyModel.static_contact_torques``), so that the
initial configuration is an equilibrium and the servos only correct deviations from it.
"""

from __future__ import annotations

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand
from wbm_description.whole_body_model import WholeBodyModel

STANDING_GAIN_SCALE = 10.0
"""Factor on the config's servo gains for standing still (see the module docstring)."""


def standing_servo_gains(model: WholeBodyModel) -> tuple[np.ndarray, np.ndarray]:
    """Servo (kp [N m/rad], kd [N m s/rad]) for standing, model joint order.

    Raises:
        InputError: The model has no robot config.
    """
    config = model.config
    if config is None:
        raise InputError("model", "a WholeBodyModel built with from_config")
    return STANDING_GAIN_SCALE * model.servo_kp, STANDING_GAIN_SCALE * model.servo_kd


def standing_command(model: WholeBodyModel) -> JointCommand:
    """Hold the initial posture: position references plus the static feed-forward torques.

    Raises:
        InputError: The model has no robot config or no soles.
    """
    config = model.config
    if config is None or not config.soles:
        raise InputError("model", "a floating-base model with soles in its robot config")
    q0 = model.initial_configuration()
    torques, _ = model.static_contact_torques(q0, [sole.frame for sole in config.soles])
    return JointCommand(position=model.initial_posture.copy(), effort=torques)
