"""``wbm launch``: run ROS 2 YAML launch files where the ``launch`` package is not installed."""

from wbm_bringup.launching.description import LaunchPlan, ProcessSpec, plan_launch
from wbm_bringup.launching.runner import LaunchRunner, run_launch
from wbm_bringup.launching.substitutions import LaunchFileError

__all__ = [
    "LaunchFileError",
    "LaunchPlan",
    "LaunchRunner",
    "ProcessSpec",
    "plan_launch",
    "run_launch",
]
