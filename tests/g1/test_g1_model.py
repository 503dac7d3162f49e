"""The G1 robot config and model against the installed files themselves.

References: the URDF read here as XML (link masses, joint names, effort and position limits,
fixed-joint origins, the foot collision spheres), the foot's STL mesh loaded by coal, SciPy's
convex hull, and Pinocchio on the URDF for the variant with its floating joint enabled.
"""

from __future__ import annotations

import subprocess

import coal
import numpy as np
import pinocchio as pin
import pytest
from g1_helpers import FEET, urdf_element, urdf_root, write_floating_variant
from scipy.spatial import ConvexHull

from wbm_description import WholeBodyModel, load_robot_config
from wbm_description.package_paths import resolve_package_uri


def test_mass_is_the_sum_of_the_urdf_link_masses(g1: WholeBodyModel):
    robot = urdf_root(g1.config.urdf_path)
    masses = [float(m.get("value")) for m in robot.iter("mass")]
    # 12 significant digits: Pinocchio adds the same numbers in another order.
    assert g1.total_mass == pytest.approx(sum(masses), rel=1e-12)
    assert 30.0 < g1.total_mass < 36.0  # Unitree: "about 35 kg" with the battery


def test_dimensions_and_joints_are_the_urdfs(g1: WholeBodyModel):
    robot = urdf_root(g1.config.urdf_path)
    revolute = [j.get("name") for j in robot.findall("joint") if j.get("type") == "revolute"]
    assert len(revolute) == 29
    # Every revolute joint is actuated (none locked), plus the free-flyer's 7/6.
    assert (g1.ndof, g1.nq, g1.nv) == (29, 36, 35)
    assert set(g1.joint_names) == set(revolute)
    # The config lists them in the URDF's (= Unitree's SDK motor) order.
    assert g1.config.joints == tuple(revolute)
    assert g1.floating_base and g1.config.base_link == "pelvis"
    assert g1.urdf_floating_root is None  # the installed URDF comments its own out


def test_limits_are_the_urdfs(g1: WholeBodyModel):
    robot = urdf_root(g1.config.urdf_path)
    lower, upper = g1.joint_position_limits
    for joint in robot.findall("joint"):
        if joint.get("type") != "revolute":
            continue
        limit = joint.find("limit")
        i = g1.joint_index(joint.get("name"))
        assert g1.torque_limits[i] == float(limit.get("effort"))
        assert (lower[i], upper[i]) == (float(limit.get("lower")), float(limit.get("upper")))


def test_initial_posture_is_inside_the_limits_knees_bent(g1: WholeBodyModel):
    q = g1.initial_configuration()
    assert g1.check_joint_limits(q) == []
    for side in ("left", "right"):
        assert g1.initial_posture[g1.joint_index(f"{side}_knee_joint")] >= 0.2


def test_every_frame_the_config_names_exists(g1: WholeBodyModel):
    config = g1.config
    names = [sole.frame for sole in config.soles]
    names += [point.frame for point in config.contact_points]
    names += [tool.name for tool in config.tools] + [tool.link for tool in config.tools]
    names += [config.imu_frame, config.world_reference_link, config.base_link]
    for name in names:
        g1.frame_id(name)  # raises NameNotFound otherwise
    assert config.ft_sensors == ()


def test_imu_frame_is_where_the_urdf_puts_it(g1: WholeBodyModel):
    joint = urdf_element(g1.config.urdf_path, "joint", "imu_in_pelvis_joint")
    assert joint.find("parent").get("link") == "pelvis"
    xyz = [float(x) for x in joint.find("origin").get("xyz").split()]
    q = g1.initial_configuration()
    pelvis_T_imu = g1.frame_placement(q, "pelvis").actInv(g1.frame_placement(q, "imu_in_pelvis"))
    np.testing.assert_allclose(pelvis_T_imu.translation, xyz, atol=1e-12)
    np.testing.assert_allclose(pelvis_T_imu.rotation, np.eye(3), atol=1e-12)


def test_initial_configuration_puts_both_soles_flat_on_the_ground(g1: WholeBodyModel):
    q = g1.initial_configuration()
    left, right = (g1.frame_placement(q, frame) for frame in FEET)
    # World at the left sole; the right sole flat (z up, x forward), on z = 0, beside it.
    np.testing.assert_allclose(left.homogeneous, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(right.rotation, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(right.translation[[0, 2]], 0.0, atol=1e-12)
    # Feet apart by the URDF's hip spacing plus the legs' lateral offsets (mirror images).
    assert -0.30 < right.translation[1] < -0.15
    # The pelvis upright and above the knees (0.3 rad bent).
    np.testing.assert_allclose(g1.frame_placement(q, "pelvis").rotation, np.eye(3), atol=1e-12)
    assert 0.6 < q[2] < 0.8


def test_com_is_above_the_support_polygon(g1: WholeBodyModel):
    q = g1.initial_configuration()
    corners = np.array(
        [
            g1.frame_placement(q, sole.frame).act(corner)[:2]
            for sole in g1.config.soles
            for corner in sole.corners()
        ]
    )
    hull = ConvexHull(corners)
    com = g1.com_position(q)
    # hull.equations: a x + b y + c <= 0 inside, (a, b) unit: -(...) is the distance inside.
    distances = -(hull.equations[:, :2] @ com[:2] + hull.equations[:, 2])
    # Well inside: 8 cm from the heel and toe lines, 11 cm from the outer edges (measured);
    # 2 cm is what a servo-held stance needs against small sways.
    assert distances.min() > 0.02, distances
    assert com[2] > 0.6


def foot_mesh_vertices(g1: WholeBodyModel) -> np.ndarray:
    """Vertices of the left foot's visual mesh (the ankle roll link's STL), link frame [m]."""
    link = urdf_element(g1.config.urdf_path, "link", "left_ankle_roll_link")
    path = resolve_package_uri(link.find("visual/geometry/mesh").get("filename"))
    assert link.find("visual/origin").get("xyz").split() == ["0", "0", "0"]
    return np.asarray(coal.MeshLoader().load(str(path), np.ones(3)).vertices())


def test_soles_lie_on_the_bottom_of_the_feet(g1: WholeBodyModel):
    link = urdf_element(g1.config.urdf_path, "link", "left_ankle_roll_link")
    spheres = [
        (
            np.array([float(x) for x in c.find("origin").get("xyz").split()]),
            float(c.find("geometry/sphere").get("radius")),
        )
        for c in link.findall("collision")
    ]
    assert len(spheres) == 4
    q = g1.initial_configuration()
    foot_T_sole = g1.frame_placement(q, "left_ankle_roll_link").actInv(
        g1.frame_placement(q, "left_sole")
    )
    # Sole frame: axes of the ankle roll link (x forward, z up), on the spheres' underside.
    np.testing.assert_allclose(foot_T_sole.rotation, np.eye(3), atol=1e-12)
    bottom = {round(center[2] - radius, 12) for center, radius in spheres}
    assert bottom == {foot_T_sole.translation[2]}
    # The mesh's lowest point is within 1 mm of it (measured 0.4 mm below).
    vertices = foot_mesh_vertices(g1)
    assert abs(vertices[:, 2].min() - foot_T_sole.translation[2]) < 1e-3
    # The rectangle runs from the heel spheres to the toe spheres, as wide as the heel's pair
    # (the toe's pair is 5 mm wider on each side) ...
    sole = g1.config.sole("left_foot")
    corners = np.array([foot_T_sole.act(c) for c in sole.corners()])
    centers = np.array([center for center, _ in spheres])
    np.testing.assert_allclose(corners[:, 0].min(), centers[:, 0].min(), atol=1e-12)
    np.testing.assert_allclose(corners[:, 0].max(), centers[:, 0].max(), atol=1e-12)
    heel = centers[centers[:, 0] == centers[:, 0].min()]
    np.testing.assert_allclose(sole.width / 2, np.abs(heel[:, 1]), atol=1e-12)
    # ... and lies inside the outline of the mesh's underside (the vertices within 2 mm of the
    # lowest; measured margin 1 mm at the rounded heel).
    underside = vertices[vertices[:, 2] < vertices[:, 2].min() + 2e-3][:, :2]
    outline = ConvexHull(underside)
    inside = -(outline.equations[:, :2] @ corners[:, :2].T + outline.equations[:, 2:3])
    assert inside.min() > 0.0, inside.min()
    # Both feet alike: the right sole is the left one mirrored.
    assert g1.config.sole("right_foot").corners().tolist() == sole.corners().tolist()


def test_wbm_info_describes_g1(g1):
    result = subprocess.run(
        ["wbm", "info", "g1"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "29 actuated joints (nq = 36, nv = 35)" in out
    assert "floating (pelvis)" in out and "world frame at   left_sole" in out
    assert "F/T" not in out  # no sensors to list
    assert "IMU              frame imu_in_pelvis" in out
    # Columns padded for the longest joint name (26 characters): every row has its 7 fields and
    # the header's length (the numbers are right-aligned: each ends where its header does).
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("joint "))
    rows = lines[header + 1 : header + 30]
    assert [row.split()[0] for row in rows] == list(g1.joint_names)
    for row in rows:
        assert len(row.split()) == 7, row
    assert len({len(row) for row in rows}) == 1 and len(rows[0]) == len(lines[header]), rows
    robots = subprocess.run(["wbm", "robots"], capture_output=True, text=True, timeout=60)
    assert "g1" in robots.stdout.split()


def test_urdf_with_its_floating_joint_enabled_gives_the_same_model(g1, tmp_path, rng):
    """The installed URDF's "uncomment when convert to mujoco" block, enabled."""
    urdf, config_path = write_floating_variant(g1.config.urdf_path, tmp_path)
    # Pinocchio alone would build two free-flyers from it (nv 41) with wbm's root joint.
    assert pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer()).nv == 41
    variant = WholeBodyModel.from_config(load_robot_config(config_path))
    assert variant.urdf_floating_root.joint == "floating_base_joint"
    assert (variant.nq, variant.nv, variant.joint_names) == (g1.nq, g1.nv, g1.joint_names)
    assert [f.name for f in variant.model.frames] == [f.name for f in g1.model.frames]
    lower, upper = g1.joint_position_limits
    for _ in range(3):
        q = g1.configuration(pin.SE3.Random(), rng.uniform(lower, upper))
        np.testing.assert_allclose(variant.mass_matrix(q), g1.mass_matrix(q), atol=1e-14)
        np.testing.assert_allclose(variant.gravity_forces(q), g1.gravity_forces(q), atol=1e-12)
    np.testing.assert_allclose(variant.initial_configuration(), g1.initial_configuration())
