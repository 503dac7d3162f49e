"""``wbm launch``: run ROS 2 YAML launch files where the ``launch`` package is not installed."""

from wbm_description.launching.description import LaunchPlan, ProcessSpec, plan_launch
from wbm_description.launching.runner import LaunchRunner, run_launch
from wbm_description.launching.substitutions import LaunchFileError

__all__ = [
    "LaunchFileError",
    "LaunchPlan",
    "LaunchRunner",
    "ProcessSpec",
    "plan_launch",
    "run_launch",
]
