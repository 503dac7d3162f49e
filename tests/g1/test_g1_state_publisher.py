"""The state publisher for G1, as its own process over real DDS, with G1's parameter file.

What the description side gives every other node and tool for a robot with STL meshes and no
F/T sensors: robot_description (the URDF with resolved mesh paths), TF of every link and the
config's sole frames, and the CoM markers. References: the installed URDF read as XML, and
Pinocchio's forward kinematics and CoM on a model built here from the URDF file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from g1_helpers import urdf_root
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from tests.state_publisher.conftest import spin_until
from wbm_description.registry import load_robot

pytestmark = pytest.mark.process

PARAMS_FILE = Path(__file__).resolve().parents[2] / "config" / "g1" / "state_publisher.yaml"
LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
STAMP_NS = 3_000_000_007


@pytest.fixture(scope="module")
def config():
    return load_robot("g1")


@pytest.fixture(scope="module")
def full_model(config):
    """Pinocchio model of the whole URDF, built here (not through WholeBodyModel)."""
    return pin.buildModelFromUrdf(str(config.urdf_path), pin.JointModelFreeFlyer())


@pytest.fixture(scope="module")
def received(rclpy_node, start_node, config, full_model):
    """Start the node, send one state, and collect what comes back."""
    process = start_node(
        "wbm_description.ros.state_publisher_node", ["--params-file", str(PARAMS_FILE)]
    )
    node = rclpy_node
    out = {"description": [], "tf": [], "tf_static": [], "markers": []}
    node.create_subscription(String, "robot_description", out["description"].append, LATCHED)
    node.create_subscription(TFMessage, "tf", out["tf"].append, 100)
    node.create_subscription(TFMessage, "tf_static", out["tf_static"].append, LATCHED)
    node.create_subscription(MarkerArray, "markers", out["markers"].append, 10)
    joint_states = node.create_publisher(JointState, "joint_states", 10)
    odom = node.create_publisher(Odometry, "ground_truth/odom", 10)
    assert spin_until(
        node,
        lambda: (
            joint_states.get_subscription_count() >= 1
            and odom.get_subscription_count() >= 1
            and out["tf_static"]
            and out["description"]
        ),
        60.0,
    ), f"the state publisher did not come up: {process.stderr()}"

    rng = np.random.default_rng(14)
    q = pin.neutral(full_model)
    q[:3] = rng.uniform(-1.0, 1.0, 3)
    q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(rng.uniform(-0.5, 0.5, 3))).coeffs()
    for name in config.joints:
        i = full_model.idx_qs[full_model.getJointId(name)]
        q[i] = rng.uniform(full_model.lowerPositionLimit[i], full_model.upperPositionLimit[i])
    message = Odometry()
    message.header.frame_id = "world"
    message.child_frame_id = config.base_link
    p, o = message.pose.pose.position, message.pose.pose.orientation
    p.x, p.y, p.z = (float(x) for x in q[:3])
    o.x, o.y, o.z, o.w = (float(x) for x in q[3:7])
    odom.publish(message)
    spin_until(node, lambda: False, 0.3)  # the base pose first (no ordering across topics)
    state = JointState()
    state.header.stamp.sec, state.header.stamp.nanosec = divmod(STAMP_NS, 10**9)
    state.name = list(config.joints)
    state.position = [float(q[full_model.idx_qs[full_model.getJointId(n)]]) for n in state.name]
    joint_states.publish(state)

    def stamped(m) -> bool:
        stamp = m.transforms[0].header.stamp if hasattr(m, "transforms") else None
        return stamp is not None and stamp.sec * 10**9 + stamp.nanosec == STAMP_NS

    def has_markers() -> bool:
        return any(m.markers and m.markers[0].header.stamp.sec == 3 for m in out["markers"])

    assert spin_until(node, lambda: any(stamped(m) for m in out["tf"]) and has_markers(), 30.0)
    out["q"] = q
    out["moving"] = next(m for m in out["tf"] if stamped(m))
    out["ft_subscribers"] = node.count_subscribers("ft/left_foot") + node.count_subscribers(
        "ft/right_foot"
    )
    assert process.process.poll() is None, f"node died: {process.stderr()}"
    return out


def test_robot_description_is_the_urdf_with_resolved_stl_paths(received, config):
    description = ET.fromstring(received["description"][0].data)
    original = urdf_root(config.urdf_path)
    assert [j.get("name") for j in description.findall("joint")] == [
        j.get("name") for j in original.findall("joint")
    ]
    meshes = [m.get("filename") for m in description.iter("mesh")]
    assert len(meshes) == len(list(original.iter("mesh")))
    for uri in meshes:
        assert uri.startswith("file://") and uri.endswith(".STL")
        assert Path(uri.removeprefix("file://")).is_file()


def se3_of(transform) -> pin.SE3:
    t, r = transform.translation, transform.rotation
    rotation = pin.Quaternion(r.w, r.x, r.y, r.z).toRotationMatrix()
    return pin.SE3(rotation, np.array([t.x, t.y, t.z]))


def test_every_link_and_sole_frame_is_where_forward_kinematics_puts_it(
    received, config, full_model
):
    tree = {t.child_frame_id: t for m in received["tf_static"] for t in m.transforms}
    tree.update({t.child_frame_id: t for t in received["moving"].transforms})
    links = {link.get("name") for link in urdf_root(config.urdf_path).findall("link")}
    assert links | {"left_sole", "right_sole"} <= set(tree)
    data = full_model.createData()
    pin.framesForwardKinematics(full_model, data, received["q"])

    def expected(name: str) -> pin.SE3:
        if full_model.existFrame(name):
            return data.oMf[full_model.getFrameId(name)]
        tool = next(t for t in config.tools if t.name == name)
        link = data.oMf[full_model.getFrameId(tool.link)]
        return link * pin.SE3(pin.rpy.rpyToMatrix(np.array(tool.rpy)), np.array(tool.position))

    for child in links | {"left_sole", "right_sole"}:
        chain, frame = pin.SE3.Identity(), child
        while frame != "world":
            chain = se3_of(tree[frame].transform) * chain
            frame = tree[frame].header.frame_id
        # 1e-9: the same forward kinematics through the wire in doubles (round-off ~1e-15).
        np.testing.assert_allclose(
            chain.translation, expected(child).translation, atol=1e-9, err_msg=child
        )
        angle = np.linalg.norm(pin.log3(expected(child).rotation.T @ chain.rotation))
        assert angle < 1e-9, (child, angle)


def test_com_markers_and_nothing_from_absent_sensors(received, full_model):
    assert received["ft_subscribers"] == 0  # no F/T topic is read
    message = next(m for m in reversed(received["markers"]) if m.markers[0].header.stamp.sec == 3)
    markers = {(m.ns, m.id): m for m in message.markers}
    com = pin.centerOfMass(full_model, full_model.createData(), received["q"])
    position = markers[("com", 0)].pose.position
    # 1e-9 m: the same CoM formula on the same inertias, round-off only.
    np.testing.assert_allclose([position.x, position.y, position.z], com, atol=1e-9)
    assert markers[("com", 0)].action == Marker.ADD
    # Nothing measured: no "cop"; "cop_estimated" at the CoM's ground projection (the quasi-static
    # ZMP), 1e-9 m as above.
    assert ("cop", 0) not in markers and markers[("cop_estimated", 0)].action == Marker.ADD
    cop = markers[("cop_estimated", 0)].pose.position
    np.testing.assert_allclose([cop.x, cop.y, cop.z], [com[0], com[1], 0.0], atol=1e-9)
