"""A URDF's own floating root joint: recognised, and taken out so that wbm's base replaces it.

Some URDFs declare the floating base themselves: a massless root link (usually ``world``) and a
``floating`` joint from it to the robot's base link, e.g. Unitree's G1 URDF with its "uncomment
when convert to mujoco" block enabled:

.. code-block:: xml

    <link name="world"/>
    <joint name="floating_base_joint" type="floating">
      <parent link="world"/>
      <child link="pelvis"/>
    </joint>

Pinocchio builds that joint as a free-flyer. wbm adds its own free-flyer root joint for a
floating base, so the model would have two (nv = ndof + 12) and a base link ``world``; without a
root joint, the URDF's free-flyer would be named after the URDF and sit after ``universe``
where every other robot has wbm's. wbm therefore takes the joint and its root link out of the
URDF text before building anything from it (:func:`remove_floating_root`): the robot's base link
is the joint's child, a floating base gets wbm's free-flyer there and a fixed base welds that
link to the world, exactly as for the same URDF without the two elements. The joint's
``<origin>`` is dropped too: where the base starts is the robot config's business (its world
reference link).

Only a root joint can be floating: a ``floating`` joint anywhere else is refused with an error
naming it, as is a root link that has a mass or other children (it would not be a plain world
link, and removing it would change the robot).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from wbm_description.exceptions import UrdfError

FLOATING = "floating"
"""The URDF joint type of a 6-DoF free joint."""


@dataclass(frozen=True)
class FloatingRootJoint:
    """A URDF's floating joint between its root link and the robot's base link.

    Attributes:
        joint: Name of the ``floating`` joint.
        root_link: The massless link above it (the URDF's root, usually ``world``).
        base_link: The link below it: the robot's base once the two are removed.
    """

    joint: str
    root_link: str
    base_link: str


def _has_mass(link: ET.Element) -> bool:
    mass = link.find("inertial/mass")
    if mass is None:
        return False
    try:
        return float(mass.get("value", "0")) != 0.0
    except ValueError:
        return True  # not a number: check_urdf names it; not a plain world link either way


def _link_of(joint: ET.Element, tag: str) -> str | None:
    element = joint.find(tag)
    return element.get("link") if element is not None else None


def find_floating_root(robot: ET.Element, path: str | Path) -> FloatingRootJoint | None:
    """The floating joint at the root of a parsed URDF, or None when it has none.

    Args:
        robot: The URDF's ``<robot>`` element.
        path: The URDF file, named in errors.

    Returns:
        The joint, its root link and the base link below it; None without a ``floating`` joint.

    Raises:
        UrdfError: A ``floating`` joint that is not the only joint of a massless root link, or
            one without its parent and child links.
    """
    joints = robot.findall("joint")
    floating = [joint for joint in joints if joint.get("type") == FLOATING]
    if not floating:
        return None
    expected = "a floating joint only as the single joint of a massless root link (a world link)"
    if len(floating) > 1:
        names = [joint.get("name") for joint in floating]
        raise UrdfError(path, "floating joints", expected, names)
    joint = floating[0]
    name = joint.get("name")
    parent, child = _link_of(joint, "parent"), _link_of(joint, "child")
    if not parent or not child:
        raise UrdfError(path, f"joint '{name}'", "<parent link=...> and <child link=...>")
    links = {link.get("name"): link for link in robot.findall("link")}
    children = {_link_of(other, "child") for other in joints}
    if parent in children or parent not in links:
        raise UrdfError(path, f"joint '{name}'", expected, f"parent link '{parent}'")
    below_root = [other.get("name") for other in joints if _link_of(other, "parent") == parent]
    if below_root != [name]:
        raise UrdfError(path, f"link '{parent}'", f"{expected}; its joints are", below_root)
    if _has_mass(links[parent]):
        raise UrdfError(path, f"link '{parent}' inertial mass", expected)
    return FloatingRootJoint(joint=name, root_link=parent, base_link=child)


def remove_floating_root(path: str | Path, text: str) -> tuple[str, FloatingRootJoint | None]:
    """The URDF text without its floating root joint and root link.

    A URDF without one is returned unchanged (the same string); one with it is parsed,
    the two elements removed and the rest written back (XML comments are not kept).

    Args:
        path: The URDF file, named in errors.
        text: Its content.

    Returns:
        (the text to build models from, the removed joint or None).

    Raises:
        UrdfError: The text is not XML, or a ``floating`` joint is not at the root
            (:func:`find_floating_root`).
    """
    if FLOATING not in text:
        return text, None
    try:
        robot = ET.fromstring(text)
    except ET.ParseError as error:
        raise UrdfError(path, "XML", "well-formed XML", str(error)) from None
    root = find_floating_root(robot, path)
    if root is None:
        return text, None
    for element in list(robot):
        if (element.tag == "joint" and element.get("name") == root.joint) or (
            element.tag == "link" and element.get("name") == root.root_link
        ):
            robot.remove(element)
    return ET.tostring(robot, encoding="unicode"), root


__all__ = ["FLOATING", "FloatingRootJoint", "find_floating_root", "remove_floating_root"]
