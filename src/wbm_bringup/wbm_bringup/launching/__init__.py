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
from wbm_bringup.launching.preflight import NodeCheck, check_plan
from wbm_bringup.launching.runner import LaunchRunner, exit_status, run_launch

__all__ = [
    "ArgumentValue",
    "InlineParameter",
    "LaunchArgumentError",
    "LaunchFileError",
    "LaunchPlan",
    "LaunchRunner",
    "NodeCheck",
    "NodeSpec",
    "ParameterFile",
    "ProcessSpec",
    "check_plan",
    "exit_status",
    "plan_launch",
    "run_launch",
]
