"""The four packages build with colcon, as on a machine with a full ROS 2 install.

colcon (colcon-common-extensions) is in the set-up; the build runs in a temporary workspace so
the checkout stays clean.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_colcon_build(tmp_path):
    colcon = shutil.which("colcon")
    assert colcon is not None, "colcon is installed by tools/setup.sh"
    shutil.copytree(
        ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__")
    )
    result = subprocess.run(
        [colcon, "build", "--event-handlers", "console_direct-"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    install = tmp_path / "install"
    for package in ("wbm_description", "wbm_dynamics", "wbm_control", "wbm_bringup"):
        share = install / package / "share"
        assert (share / package / "package.xml").is_file()
        assert (share / "ament_index" / "resource_index" / "packages" / package).is_file()
    # Console entry points land in lib/<package>/, where `ros2 run` looks for them.
    assert (install / "wbm_bringup" / "lib" / "wbm_bringup" / "wbm").is_file()
    bringup_share = install / "wbm_bringup" / "share" / "wbm_bringup"
    assert (bringup_share / "launch" / "sim.launch.yaml").is_file()
    assert (bringup_share / "config" / "icub" / "controller.yaml").is_file()
    assert (
        install / "wbm_description" / "share" / "wbm_description" / "robots" / "icub.yaml"
    ).is_file()
