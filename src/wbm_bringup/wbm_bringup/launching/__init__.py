"""``wbm launch``: run ROS 2 YAML launch files where the ``launch`` package is not installed."""

from wbm_bringup.launching.description import (
    InlineParameter,
    LaunchPlan,
    NodeSpec,
    ParameterFile,
    ProcessSpec,
    plan_launch,
)
from wbm_bringup.launching.errors import ArgumentValue, LaunchArgumentError, LaunchFileError
from wbm_bringup.launching.runner import LaunchRunner, run_launch

__all__ = [
    "ArgumentValue",
    "InlineParameter",
    "LaunchArgumentError",
    "LaunchFileError",
    "LaunchPlan",
    "LaunchRunner",
    "NodeSpec",
    "ParameterFile",
    "ProcessSpec",
    "plan_launch",
    "run_launch",
]
