"""Checks of a URDF file that Pinocchio's parser lets through, with errors that name the element.

Pinocchio accepts a URDF with a negative mass or a lower joint limit above the upper one and
produces a model that later gives nonsense; these checks refuse such files up front.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from wbm_description.exceptions import UrdfError


def _float(path: Path, element: str, text: str | None) -> float:
    try:
        return float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UrdfError(path, element, "a number", text) from None


def read_urdf_text(path: str | Path) -> str:
    """Read a URDF file, raising UrdfError when it is missing or unreadable."""
    path = Path(path)
    try:
        return path.read_text()
    except OSError as error:
        raise UrdfError(path, "file", "a readable URDF file", str(error)) from None


def check_urdf(path: str | Path, text: str | None = None) -> ET.Element:
    """Parse and check a URDF.

    Checks: well-formed XML with a <robot> root; every <inertial> has a mass >= 0 (0 only with
    zero inertia, for a frame link) and a positive semi-definite inertia; every <limit> of a
    revolute or prismatic joint has lower <= upper and a non-negative effort and velocity.

    Args:
        path: The URDF file (named in errors).
        text: Its content, when already read.

    Returns:
        The parsed <robot> element.

    Raises:
        UrdfError: Naming the file, the element and what was expected.
    """
    path = Path(path)
    if text is None:
        text = read_urdf_text(path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise UrdfError(path, "XML", "well-formed XML", str(error)) from None
    if root.tag != "robot":
        raise UrdfError(path, "root element", "<robot>", f"<{root.tag}>")

    for link in root.iter("link"):
        name = link.get("name")
        inertial = link.find("inertial")
        if inertial is None:
            continue
        mass_element = inertial.find("mass")
        if mass_element is None:
            raise UrdfError(path, f"link '{name}' inertial", "a <mass> element")
        mass = _float(path, f"link '{name}' inertial mass", mass_element.get("value"))
        if not mass >= 0.0:
            raise UrdfError(path, f"link '{name}' inertial mass", "a mass >= 0 [kg]", mass)
        inertia_element = inertial.find("inertia")
        if inertia_element is None:
            raise UrdfError(path, f"link '{name}' inertial", "an <inertia> element")
        values = {
            key: _float(path, f"link '{name}' inertia {key}", inertia_element.get(key))
            for key in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
        }
        inertia = np.array(
            [
                [values["ixx"], values["ixy"], values["ixz"]],
                [values["ixy"], values["iyy"], values["iyz"]],
                [values["ixz"], values["iyz"], values["izz"]],
            ]
        )
        # A massless link (a frame) must have zero inertia; a massive one a positive
        # semi-definite inertia (point masses are allowed) with non-negative diagonal.
        tolerance = 1e-12  # [kg m^2], round-off of URDF exporters (values like -5e-20)
        if mass == 0.0 and np.abs(inertia).max() > tolerance:
            raise UrdfError(path, f"link '{name}' inertia", "zero inertia for a zero mass", values)
        if np.diag(inertia).min() < -tolerance or np.linalg.eigvalsh(inertia).min() < -tolerance:
            raise UrdfError(
                path,
                f"link '{name}' inertia",
                "a positive semi-definite rotational inertia [kg m^2]",
                values,
            )

    for joint in root.iter("joint"):
        name = joint.get("name")
        if joint.get("type") not in ("revolute", "prismatic"):
            continue
        limit = joint.find("limit")
        if limit is None:
            raise UrdfError(path, f"joint '{name}'", "a <limit> element (revolute/prismatic)")
        lower = _float(path, f"joint '{name}' limit lower", limit.get("lower", "0"))
        upper = _float(path, f"joint '{name}' limit upper", limit.get("upper", "0"))
        if lower > upper:
            raise UrdfError(
                path, f"joint '{name}' limit", "lower <= upper", {"lower": lower, "upper": upper}
            )
        for key in ("effort", "velocity"):
            value = _float(path, f"joint '{name}' limit {key}", limit.get(key, "0"))
            if value < 0.0:
                raise UrdfError(path, f"joint '{name}' limit {key}", "a value >= 0", value)
    return root
