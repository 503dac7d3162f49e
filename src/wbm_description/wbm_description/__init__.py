"""wbm_description: what the robot is.

The robot registry and validated robot configs, the whole-body model (the WBM-Library's API on
Pinocchio), the state conventions and their converters. Nodes live in ``wbm_description.ros``.
"""

from wbm_description.conventions import Representation
from wbm_description.exceptions import (
    ConfigError,
    InputError,
    NameNotFound,
    SingularConstraintError,
    UrdfError,
    WbmError,
)
from wbm_description.registry import available_robots, load_robot, robot_config_path
from wbm_description.robot_config import RobotConfig, load_robot_config
from wbm_description.state import WbmState
from wbm_description.whole_body_model import ConstrainedDynamics, WholeBodyModel

__all__ = [
    "ConfigError",
    "ConstrainedDynamics",
    "InputError",
    "NameNotFound",
    "Representation",
    "RobotConfig",
    "SingularConstraintError",
    "UrdfError",
    "WbmError",
    "WbmState",
    "WholeBodyModel",
    "available_robots",
    "load_robot",
    "load_robot_config",
    "robot_config_path",
]
