"""The controller node's parameter checks, without the node (``wbm launch``'s pre-flight).

A module of its own so that checking a launch's parameters imports only the settings, the
robot's model and rclpy's name validation: not the controller, its QP solvers and its compiled
kernels, which the node module imports (about 2 s of a launch's start, before any node starts).
``wbm launch`` finds it through the ``wbm.parameter_checks`` entry point named after the node's
executable (``wbm_controller``); the node module re-exports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rclpy.exceptions import InvalidTopicNameException
from rclpy.validate_topic_name import validate_topic_name

from wbm_control.controller_settings import ControllerSettings
from wbm_description.exceptions import ConfigError, NameNotFound
from wbm_description.registry import load_robot
from wbm_description.ros.node_runtime import ROS_PARAMETERS
from wbm_description.settings import nest
from wbm_description.whole_body_model import WholeBodyModel


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks this node makes of its parameters at start, without starting it.

    ``wbm launch`` calls it for its pre-flight checks: the settings (ranges, choices, sections),
    the robot config, the soles of ``initial_contacts``, the frames of the frame tasks and their
    topics.

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name.
        WbmError: The robot's URDF cannot be read into a model.
    """
    values = {name: value for name, value in parameters.items() if name not in ROS_PARAMETERS}
    settings = ControllerSettings.from_mapping(nest(values))
    model = WholeBodyModel.from_config(load_robot(settings.robot))
    soles = [sole.name for sole in model.config.soles]
    for i, name in enumerate(settings.initial_contacts):
        if name not in soles:
            raise ConfigError(None, f"initial_contacts[{i}]", f"a sole of the robot {soles}", name)
    for task, task_settings in settings.frame_tasks.items():
        try:
            model.frame_id(task_settings.frame)
        except NameNotFound as error:
            key = f"frame_tasks.{task}.frame"
            raise ConfigError(
                None, key, f"a frame of the robot ({error})", task_settings.frame
            ) from None
        try:
            validate_topic_name(f"targets/{task}")
        except InvalidTopicNameException:
            raise ConfigError(
                None, f"frame_tasks.{task}", "a task name that makes a valid topic", task
            ) from None


__all__ = ["check_parameters"]
