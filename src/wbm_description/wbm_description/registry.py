"""The robot registry: robot names to their config files.

The robots wbm ships are the YAML files in ``wbm_description/robots/``; iCub is the default.
Anything else is used by giving the path of its config file wherever a robot name is accepted.
"""

from __future__ import annotations

from pathlib import Path

from wbm_description.exceptions import ConfigError
from wbm_description.robot_config import RobotConfig, load_robot_config

DEFAULT_ROBOT = "icub"
ROBOTS_DIRECTORY = Path(__file__).resolve().parent / "robots"


def available_robots() -> list[str]:
    """Names of the robots wbm ships a config for."""
    return sorted(path.stem for path in ROBOTS_DIRECTORY.glob("*.yaml"))


def robot_config_path(robot: str | Path = DEFAULT_ROBOT) -> Path:
    """Config file of a registered robot name, or the given path of a config file.

    Raises:
        ConfigError: Neither a registered robot nor an existing file.
    """
    text = str(robot)
    if text.endswith((".yaml", ".yml")) or "/" in text:
        path = Path(text)
        if not path.is_file():
            raise ConfigError(path, "", "an existing robot config file")
        return path
    path = ROBOTS_DIRECTORY / f"{text}.yaml"
    if not path.is_file():
        raise ConfigError(
            None, "robot", f"a registered robot {available_robots()} or a config file path", text
        )
    return path


def load_robot(robot: str | Path = DEFAULT_ROBOT) -> RobotConfig:
    """Load the config of a registered robot name or of a config file path."""
    return load_robot_config(robot_config_path(robot))
