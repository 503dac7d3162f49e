"""The pure cores behind the state publisher and the viewer (no ROS), and the RViz config."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from wbm_description.decimation import Decimator
from wbm_description.exceptions import ConfigError, InputError
from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.markers import MarkerOptions, marker_scene
from wbm_description.registry import load_robot
from wbm_description.state_publisher_settings import StatePublisherSettings
from wbm_description.tf_tree import TfTree
from wbm_description.whole_body_model import WholeBodyModel

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "wbm_description" / "wbm_description"


@pytest.fixture(scope="module")
def icub():
    return WholeBodyModel.from_config(load_robot("icub"))


def test_cores_do_not_import_ros():
    for name in ("tf_tree", "markers", "ft_ground_reaction", "state_publisher_settings"):
        tree = ast.parse((PACKAGE / f"{name}.py").read_text())
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        }
        assert not imported & {
            "rclpy",
            "std_msgs",
            "geometry_msgs",
            "tf2_msgs",
            "visualization_msgs",
        }, name


def test_fixed_base_tree_has_a_static_world_edge():
    panda = WholeBodyModel.from_config(load_robot("panda"))
    tree = TfTree(panda, world_frame="world")
    assert tree.static_edges[0].parent == "world" and tree.static_edges[0].child == tree.base_link
    # One moving edge per actuated joint, none for the base.
    assert len(tree.moving_edges) == panda.ndof
    identity = tree.static_transforms()[0]
    np.testing.assert_allclose(identity.translation, 0.0, atol=1e-12)
    np.testing.assert_allclose(identity.rotation_xyzw, [0, 0, 0, 1], atol=1e-12)


def test_tree_covers_every_urdf_link_once(icub):
    tree = TfTree(icub, frame_prefix="p/")
    links = {link.get("name") for link in ET.parse(icub.urdf_path).getroot().iter("link")}
    children = tree.frame_names
    assert len(children) == len(set(children))
    tools = {f"p/{tool.name}" for tool in icub.config.tools}
    assert set(children) == {f"p/{name}" for name in links if name != tree.base_link} | tools | {
        "p/base_link"
    }


def test_child_side_of_the_ankle_sensor_is_the_foot(icub):
    sensors = FootForceSensors(icub)
    assert sensors.sensor("left_foot").sole_names == ("left_foot",)
    assert sensors.sensor("right_foot").sole_names == ("right_foot",)
    q = icub.initial_configuration()
    mass, com = sensors.child_side_inertia(q, "left_foot")
    foot = next(
        e for e in ET.parse(icub.urdf_path).getroot().iter("link") if e.get("name") == "l_foot"
    )
    urdf_mass = float(foot.find("inertial/mass").get("value"))
    offset = np.array([float(x) for x in foot.find("inertial/origin").get("xyz").split()])
    # The URDF's own numbers: exact up to round-off.
    assert mass == pytest.approx(urdf_mass, abs=1e-12)
    np.testing.assert_allclose(com, icub.frame_placement(q, "l_foot").act(offset), atol=1e-12)


def test_reading_of_a_free_foot_is_no_ground_reaction(icub):
    sensors = FootForceSensors(icub)
    q = icub.initial_configuration()
    mass, com = sensors.child_side_inertia(q, "left_foot")
    gravity = mass * np.array([0, 0, -9.81])
    # A hanging foot pulls the leg with its weight: the sensor reads the gravity wrench.
    reading = icub.frame_placement(q, "l_foot_ft_sensor").actInv(
        pin.Force(gravity, np.cross(com, gravity))
    )
    ground = sensors.ground_reaction(q, "left_foot", reading.vector)
    np.testing.assert_allclose(ground, 0.0, atol=1e-12)  # round-off of two rigid motions
    scene = marker_scene(sensors, q, {"left_foot": reading.vector})
    assert scene.cop is None and len(scene.support_polygon) == 0
    assert [m.visible for m in scene.markers if m.namespace in ("cop", "support_polygon")] == [
        False,
        False,
    ]


def test_bad_values_are_named():
    with pytest.raises(ConfigError, match="marker_rate"):
        StatePublisherSettings.from_mapping({"marker_rate": -1.0})
    with pytest.raises(ConfigError, match="force_scale.*a number"):
        StatePublisherSettings.from_mapping({"force_scale": "big"})
    with pytest.raises(ConfigError, match="one of"):
        StatePublisherSettings.from_mapping({"no_such_parameter": 1})
    with pytest.raises(InputError, match="sphere_diameter"):
        MarkerOptions(sphere_diameter=0.0)
    with pytest.raises(InputError, match="q"):
        FootForceSensors(WholeBodyModel.from_config(load_robot("icub"))).ground_reaction(
            np.zeros(3), "left_foot", np.zeros(6)
        )


def test_params_file_holds_every_setting_with_its_default_type():
    text = (ROOT / "config" / "icub" / "state_publisher.yaml").read_text()
    parameters = yaml.safe_load(text)["/**"]["ros__parameters"]
    settings = StatePublisherSettings.from_mapping(parameters, source="state_publisher.yaml")
    assert set(parameters) == set(StatePublisherSettings.__dataclass_fields__)
    assert settings.robot == "icub"
    # Every value line carries a comment.
    value_lines = [line for line in text.splitlines() if line.startswith("    ") and ":" in line]
    assert value_lines and all("#" in line for line in value_lines)


def test_rviz_config_shows_model_tf_and_markers():
    config = yaml.safe_load((ROOT / "src" / "wbm_bringup" / "rviz" / "wbm.rviz").read_text())
    manager = config["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == "world"
    displays = {d["Class"]: d for d in manager["Displays"]}
    marker_displays = {
        d["Topic"]["Value"]: d
        for d in manager["Displays"]
        if d["Class"] == "rviz_default_plugins/MarkerArray"
    }
    model = displays["rviz_default_plugins/RobotModel"]
    assert model["Description Topic"]["Value"] == "/robot_description"
    assert model["Description Topic"]["Durability Policy"] == "Transient Local"
    assert "rviz_default_plugins/TF" in displays
    assert set(marker_displays) == {"/markers", "/walking/markers"}
    markers = marker_displays["/markers"]
    sensors = FootForceSensors(WholeBodyModel.from_config(load_robot("icub")))
    scene = marker_scene(sensors, sensors.model.initial_configuration(), {}, MarkerOptions())
    assert set(markers["Namespaces"]) == {m.namespace for m in scene.markers}


def test_decimator_lets_the_first_sample_of_each_slot_through():
    # 500 Hz stamps (2 ms) decimated to 50 Hz: every 10th sample, starting with the first;
    # integer nanoseconds, so the count is exact.
    decimator = Decimator(50.0)
    stamps = [7_000_000_000 + 2_000_000 * k for k in range(100)]
    passed = [s for s in stamps if decimator.due(s)]
    assert passed == stamps[::10]
    # Time going back (a reset) lets the sample through and restarts from it.
    assert decimator.due(1_000_000_000) and not decimator.due(1_010_000_000)
    assert decimator.due(1_020_000_000)
    # Irregular stamps (gaps 1-9 ms, less than a period): one sample per 20 ms slot of the grid
    # started by the first, so exactly one per slot up to the last stamp (the rate asked for);
    # each the first sample at or after its slot.
    rng = np.random.default_rng(3)
    irregular = np.cumsum(rng.integers(1_000_000, 9_000_000, 300))
    decimator = Decimator(50.0)
    passed = np.array([s for s in irregular if decimator.due(int(s))])
    slots = np.arange(irregular[0], irregular[-1] + 1, 20_000_000)
    assert len(passed) == len(slots)
    assert np.array_equal(passed, irregular[np.searchsorted(irregular, slots)])
    # Sampled at 100 Hz with wake-ups a little over 10 ms apart (the state publisher's inputs):
    # the period rule "20 ms since the last" needed three wake-ups whenever two came under
    # 20 ms; the grid keeps 50 per second. Late samples never come closer than half a period.
    wakes = np.cumsum(rng.uniform(9_500_000, 10_800_000, 1000)).astype(np.int64)
    decimator = Decimator(50.0)
    passed = np.array([s for s in wakes if decimator.due(int(s))])
    seconds = (wakes[-1] - wakes[0]) * 1e-9
    assert abs(len(passed) - 50.0 * seconds) <= 1.0, (len(passed), seconds)
    assert np.diff(passed).min() >= 10_000_000
    # A gap in the stream longer than a period starts the grid again from the next sample.
    decimator = Decimator(50.0)
    assert decimator.due(0) and decimator.due(75_000_000) and not decimator.due(90_000_000)
    assert decimator.due(95_000_000)
    # Rate 0: every sample; a bad rate is refused with its name.
    every = Decimator(0.0)
    assert all(every.due(1) for _ in range(3))
    with pytest.raises(ValueError, match="rate"):
        Decimator(-1.0)


def test_marker_messages_refilled_in_place_equal_fresh_ones(icub):
    # The state publisher's reused MarkerArray against one built anew, over scenes whose slots
    # go from shown to hidden and back (a foot lifted: its CoP arrow deleted, then drawn).
    from builtin_interfaces.msg import Time

    from wbm_description.ros.marker_messages import MarkerArrayMessages, marker_array_message

    sensors = FootForceSensors(icub)
    q = icub.neutral_configuration()
    q[2] = 0.6
    loaded = {
        # The sensors' z axes point down: a ground push reads as a negative z force.
        "left_foot": np.array([0, 0, -150.0, 1, -2, 0]),
        "right_foot": np.array([0, 0, -130.0, 0, 1, 0]),
    }
    one_foot = {"left_foot": loaded["left_foot"]}  # the right one without a reading: unloaded
    reused = MarkerArrayMessages("world")
    deleted = []
    for k, readings in enumerate((loaded, one_foot, {}, loaded, one_foot)):
        scene = marker_scene(sensors, q, readings)
        stamp = Time(sec=10 + k, nanosec=1000 * k)
        message = reused.fill(scene, stamp)
        fresh = marker_array_message(scene, frame_id="world", stamp=stamp)
        # Field by field (rclpy's serialized bytes differ in their uninitialized padding).
        assert message == fresh
        deleted.append(sum(m.action == m.DELETE for m in message.markers))
    # Slots hidden and shown again along the way (the same object refilled every time).
    assert deleted[0] == 0 and deleted[2] > deleted[1] > 0 and deleted[3] == 0
