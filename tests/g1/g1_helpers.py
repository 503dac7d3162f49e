"""What the G1 tests read from the installed files themselves (independent of wbm's loader)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from wbm_description.registry import robot_config_path

FEET = ("left_sole", "right_sole")
"""The sole frames (config tools on the ankle roll links)."""

FLOATING_BLOCK_COMMENTED = (
    '<!-- <link name="world"></link>',
    '<child link="pelvis"/>\n  </joint> -->',
)
"""How the installed URDF comments its floating root joint out ("uncomment when convert to
mujoco"): the opening and closing of the comment."""


def urdf_root(path: Path) -> ET.Element:
    """The parsed <robot> element of a URDF file."""
    return ET.parse(path).getroot()


def urdf_element(path: Path, tag: str, name: str) -> ET.Element:
    """The <link> or <joint> (``tag``) called ``name`` of a URDF file."""
    return next(e for e in urdf_root(path).findall(tag) if e.get("name") == name)


def write_floating_variant(urdf_path: Path, directory: Path) -> tuple[Path, Path]:
    """G1's URDF with its floating root joint enabled, and a copy of g1.yaml that uses it.

    Returns:
        (the URDF file, the robot config file), both in ``directory``.
    """
    text = urdf_path.read_text()
    start, end = FLOATING_BLOCK_COMMENTED
    assert text.count(start) == 1 and text.count(end) == 1, "the URDF's block moved"
    text = text.replace(start, '<link name="world"></link>').replace(
        end, '<child link="pelvis"/>\n  </joint>'
    )
    urdf = directory / "g1_floating.urdf"
    urdf.write_text(text)
    config_text = robot_config_path("g1").read_text()
    source = (
        "urdf:\n  package: example-robot-data\n"
        "  path: robots/g1_description/urdf/g1_29dof_rev_1_0.urdf\n"
    )
    assert config_text.count(source) == 1, "g1.yaml's urdf key moved"
    config = directory / "g1_floating.yaml"
    config.write_text(config_text.replace(source, f"urdf: {urdf}\n"))
    return urdf, config
