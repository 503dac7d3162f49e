"""URDFs that declare their own floating root joint (a world link and a ``floating`` joint).

The reference is the same URDF without those two elements: built by Pinocchio directly (with
its free-flyer root joint, or welded for a fixed base), it is the model wbm must build from
either file. A small two-legged test robot keeps the check exact and independent of any robot
package; G1's own URDF with its floating block enabled is checked in ``tests/g1``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from wbm_description import ConfigError, UrdfError, WholeBodyModel, load_robot_config
from wbm_description.urdf_root import remove_floating_root

LINK = """
  <link name="{name}">
    <inertial>
      <origin xyz="{com}" rpy="0 0 0"/>
      <mass value="{mass}"/>
      <inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/>
    </inertial>
  </link>"""

JOINT = """
  <joint name="{name}" type="revolute">
    <parent link="{parent}"/>
    <child link="{child}"/>
    <origin xyz="{xyz}" rpy="0.1 -0.2 0.3"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="40" velocity="10"/>
  </joint>"""

ROBOT_BODY = "".join(
    [
        LINK.format(name="pelvis", com="0.01 0 0.05", mass=3.0, i=0.02),
        LINK.format(name="left_leg", com="0 0 -0.2", mass=1.5, i=0.01),
        LINK.format(name="right_leg", com="0 0 -0.2", mass=1.4, i=0.01),
        '\n  <link name="left_foot"/>',
        JOINT.format(name="left_hip", parent="pelvis", child="left_leg", xyz="0 0.1 -0.05"),
        JOINT.format(name="right_hip", parent="pelvis", child="right_leg", xyz="0 -0.1 -0.05"),
        """
  <joint name="left_foot_joint" type="fixed">
    <parent link="left_leg"/>
    <child link="left_foot"/>
    <origin xyz="0 0 -0.4" rpy="0 0 0"/>
  </joint>""",
    ]
)

FLOATING_BLOCK = """
  <link name="world"/>
  <joint name="floating_base_joint" type="floating">
    <origin xyz="0.3 -0.2 0.8" rpy="0 0 0.5"/>
    <parent link="world"/>
    <child link="pelvis"/>
  </joint>"""


def urdf(*parts: str) -> str:
    return '<?xml version="1.0"?>\n<robot name="biped">' + "".join(parts) + "\n</robot>\n"


@pytest.fixture()
def plain(tmp_path: Path) -> Path:
    path = tmp_path / "plain.urdf"
    path.write_text(urdf(ROBOT_BODY))
    return path


@pytest.fixture()
def floating(tmp_path: Path) -> Path:
    path = tmp_path / "floating.urdf"
    path.write_text(urdf(FLOATING_BLOCK, ROBOT_BODY))
    return path


def robot_config(tmp_path: Path, urdf_path: Path, base_link: str, base_type: str) -> Path:
    path = tmp_path / f"biped_{base_type}_{base_link}.yaml"
    path.write_text(
        f"""
name: biped
urdf: {urdf_path}
base: {{type: {base_type}, link: {base_link}}}
joints: [left_hip, right_hip]
initial_posture: {{left_hip: 0.2}}
joint_limits: {{torque: 30.0}}
servo_gains: {{kp: 100.0, kd: 2.0}}
world_reference_link: left_foot
"""
    )
    return path


def test_pinocchio_alone_builds_the_floating_joint_as_a_second_free_flyer(floating, plain):
    """Why wbm removes the joint: Pinocchio turns it into a free-flyer of its own."""
    text = floating.read_text()
    with_root = pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
    reference = pin.buildModelFromXML(plain.read_text(), pin.JointModelFreeFlyer())
    assert with_root.nv == reference.nv + 6  # two free-flyers
    without_root = pin.buildModelFromXML(text)
    assert without_root.nv == reference.nv
    assert without_root.names[1] == "floating_base_joint"  # not wbm's root_joint
    assert without_root.existFrame("world")


@pytest.mark.parametrize("floating_base", [True, False])
def test_model_equals_the_model_of_the_urdf_without_the_block(floating, plain, floating_base, rng):
    model = WholeBodyModel.from_urdf(floating, floating_base=floating_base)
    # Reference: Pinocchio on the URDF without the world link and the floating joint.
    text = plain.read_text()
    reference = (
        pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
        if floating_base
        else pin.buildModelFromXML(text)
    )
    assert (model.nq, model.nv) == (reference.nq, reference.nv)
    assert list(model.model.names) == list(reference.names)
    assert [f.name for f in model.model.frames] == [f.name for f in reference.frames]
    assert model.joint_names == ("left_hip", "right_hip")
    assert model.total_mass == pytest.approx(3.0 + 1.5 + 1.4, abs=1e-12)
    data = reference.createData()
    for _ in range(3):
        q = pin.randomConfiguration(reference, -np.ones(reference.nq), np.ones(reference.nq))
        # Same tree, same numbers: equal to round-off.
        np.testing.assert_allclose(model.mass_matrix(q), pin.crba(reference, data, q), atol=1e-14)
        np.testing.assert_allclose(
            model.gravity_forces(q),
            pin.computeGeneralizedGravity(reference, data, q),
            atol=1e-13,
        )
        pin.framesForwardKinematics(reference, data, q)
        np.testing.assert_allclose(
            model.frame_placement(q, "left_foot").homogeneous,
            data.oMf[reference.getFrameId("left_foot")].homogeneous,
            atol=1e-14,
        )


def test_urdf_text_of_the_model_has_neither_the_joint_nor_the_world_link(floating):
    model = WholeBodyModel.from_urdf(floating)
    root = model.urdf_floating_root
    assert (root.joint, root.root_link, root.base_link) == (
        "floating_base_joint",
        "world",
        "pelvis",
    )
    robot = ET.fromstring(model.urdf_text)
    assert "world" not in {link.get("name") for link in robot.findall("link")}
    assert [j.get("type") for j in robot.findall("joint")] == ["revolute", "revolute", "fixed"]
    # The text builds the same model by itself (what robot_description consumers do).
    assert pin.buildModelFromXML(model.urdf_text, pin.JointModelFreeFlyer()).nv == model.nv


def test_urdf_without_a_floating_joint_is_left_as_it_is(plain):
    text = plain.read_text()
    same, root = remove_floating_root(plain, text)
    assert same is text and root is None
    assert WholeBodyModel.from_urdf(plain).urdf_floating_root is None


@pytest.mark.parametrize("base_type", ["floating", "fixed"])
def test_config_base_link_is_the_child_of_the_floating_joint(tmp_path, floating, base_type):
    config = load_robot_config(robot_config(tmp_path, floating, "pelvis", base_type))
    model = WholeBodyModel.from_config(config)
    assert model.floating_base is (base_type == "floating")
    assert model.nv == 2 + (6 if base_type == "floating" else 0)
    if model.floating_base:
        # The world reference link still places the world frame (the joint origin is dropped).
        q = model.initial_configuration()
        np.testing.assert_allclose(
            model.frame_placement(q, "left_foot").homogeneous, np.eye(4), atol=1e-12
        )


def test_config_naming_the_world_link_as_base_is_refused(tmp_path, floating):
    config = load_robot_config(robot_config(tmp_path, floating, "world", "floating"))
    with pytest.raises(ConfigError) as error:
        WholeBodyModel.from_config(config)
    assert error.value.key == "base.link"
    message = str(error.value)
    assert "floating_base_joint" in message and "'pelvis'" in message and "'world'" in message


BROKEN = {
    "a floating joint inside the robot": (
        ROBOT_BODY.replace(
            '<joint name="left_foot_joint" type="fixed">',
            '<joint name="left_foot_joint" type="floating">',
        ),
        "joint 'left_foot_joint'",
    ),
    "a root link with a mass": (
        FLOATING_BLOCK.replace(
            '<link name="world"/>', LINK.format(name="world", com="0 0 0", mass=1.0, i=0.1)
        )
        + ROBOT_BODY,
        "link 'world' inertial mass",
    ),
    "a root link with another joint": (
        FLOATING_BLOCK
        + ROBOT_BODY
        + """
  <link name="table"/>
  <joint name="table_joint" type="fixed">
    <parent link="world"/>
    <child link="table"/>
  </joint>""",
        "link 'world'",
    ),
    "two floating joints": (
        FLOATING_BLOCK
        + ROBOT_BODY
        + """
  <link name="box"/>
  <joint name="box_joint" type="floating">
    <parent link="pelvis"/>
    <child link="box"/>
  </joint>""",
        "floating joints",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_floating_joints_elsewhere_are_refused_with_their_name(tmp_path, case):
    body, element = BROKEN[case]
    path = tmp_path / "broken.urdf"
    path.write_text(urdf(body))
    with pytest.raises(UrdfError) as error:
        WholeBodyModel.from_urdf(path)
    assert error.value.element == element
    assert str(path) in str(error.value)
