"""Files wbm_bringup installs: launch files and node parameter files, by name.

They are found in the package's share directory (``share/wbm_bringup``: a colcon install, or the
links ``tools/setup.sh`` makes into the virtual environment), never relative to a module's own
path, so the same code works installed, in a workspace or in an editable checkout.
"""

from __future__ import annotations

from pathlib import Path

from wbm_description.exceptions import ConfigError
from wbm_description.package_paths import candidate_prefixes, find_package_share

PACKAGE = "wbm_bringup"


def share_directory() -> Path:
    """``share/wbm_bringup``.

    Raises:
        ConfigError: The package is not installed where ROS 2 looks (AMENT_PREFIX_PATH, the
            Python prefix).
    """
    share = find_package_share(PACKAGE)
    if share is None:
        searched = ", ".join(str(prefix / "share") for prefix in candidate_prefixes())
        expected = f"an installed share/{PACKAGE} (run tools/setup.sh); searched {searched}"
        raise ConfigError(None, PACKAGE, expected)
    return share


def launch_file(name: str) -> Path:
    """An installed launch file of wbm_bringup (``"sim.launch.yaml"``)."""
    return share_directory() / "launch" / name


def config_directory(robot: str) -> Path:
    """The node parameter files of a robot (``config/<robot>``)."""
    return share_directory() / "config" / robot
