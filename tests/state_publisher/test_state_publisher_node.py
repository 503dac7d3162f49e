"""The state publisher as its own process over real DDS: TF, robot_description, markers, input.

References are independent of the node's code: Pinocchio models built here from the URDF file
(the full model, locked joints at 0), the URDF's own inertial values, and hand-computed CoP.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from tests.state_publisher.conftest import PARAMS_FILE, spin_until
from wbm_description.registry import load_robot

pytestmark = pytest.mark.process

PREFIX = "wbm/"
LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


@pytest.fixture(scope="module")
def config():
    return load_robot("icub")


@pytest.fixture(scope="module")
def full_model(config):
    """Pinocchio model of the whole URDF, built here (not through WholeBodyModel)."""
    return pin.buildModelFromUrdf(str(config.urdf_path), pin.JointModelFreeFlyer())


@pytest.fixture(scope="module")
def publisher_process(start_node):
    process = start_node(
        "wbm_description.ros.state_publisher_node",
        [
            "--params-file",
            str(PARAMS_FILE),
            "-p",
            f"frame_prefix:={PREFIX}",
            "-p",
            "marker_rate:=50.0",
            "-p",
            "invalid_input_log_period:=0.0",
            # TF for every joint_states: these tests check each message's transforms (some
            # stamps 1 ns apart); the decimated rate has its own test (test_tf_rate.py).
            "-p",
            "publish_frequency:=0.0",
            # Every message taken as it arrives (the sampled inputs, input_rate > 0, have their
            # own test in test_tf_rate.py).
            "-p",
            "input_rate:=0.0",
        ],
    )
    yield process
    assert process.process.poll() is None, f"node died: {process.stderr()}"


class Io:
    """The test's side of the topics, with everything received kept."""

    def __init__(self, node):
        self.node = node
        self.joint_states = node.create_publisher(JointState, "joint_states", 10)
        self.odom = node.create_publisher(Odometry, "ground_truth/odom", 10)
        self.wrenches = {
            name: node.create_publisher(WrenchStamped, f"ft/{name}", 10)
            for name in ("left_foot", "right_foot")
        }
        self.tf: list[TFMessage] = []
        self.tf_static: list[TFMessage] = []
        self.markers: list[MarkerArray] = []
        node.create_subscription(TFMessage, "tf", self.tf.append, 100)
        node.create_subscription(TFMessage, "tf_static", self.tf_static.append, LATCHED)
        node.create_subscription(MarkerArray, "markers", self.markers.append, 10)

    def wait_connected(self) -> None:
        ok = spin_until(
            self.node,
            lambda: (
                self.joint_states.get_subscription_count() >= 1
                and self.odom.get_subscription_count() >= 1
                and all(p.get_subscription_count() >= 1 for p in self.wrenches.values())
                and len(self.tf_static) >= 1
            ),
            timeout=30.0,
        )
        assert ok, "the state publisher did not come up (subscriptions or tf_static missing)"

    def send_state(self, q: np.ndarray, joint_names, stamp_ns: int, *, full_model) -> None:
        odom = Odometry()
        odom.header.frame_id = "world"
        odom.child_frame_id = "base_link"
        p, o = odom.pose.pose.position, odom.pose.pose.orientation
        p.x, p.y, p.z = (float(x) for x in q[:3])
        o.x, o.y, o.z, o.w = (float(x) for x in q[3:7])
        self.odom.publish(odom)
        # Let the base pose arrive first (another topic: no ordering across topics).
        spin_until(self.node, lambda: False, 0.15)
        message = JointState()
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 10**9)
        message.name = list(joint_names)
        message.position = [
            float(q[full_model.idx_qs[full_model.getJointId(n)]]) for n in joint_names
        ]
        self.joint_states.publish(message)

    def tf_with_stamp(self, stamp_ns: int) -> TFMessage | None:
        for message in reversed(self.tf):
            stamp = message.transforms[0].header.stamp
            if stamp.sec * 10**9 + stamp.nanosec == stamp_ns:
                return message
        return None


@pytest.fixture(scope="module")
def io(rclpy_node, publisher_process):
    io = Io(rclpy_node)
    io.wait_connected()
    return io


def se3_of(transform) -> pin.SE3:
    t, r = transform.translation, transform.rotation
    quaternion = pin.Quaternion(r.w, r.x, r.y, r.z)
    return pin.SE3(quaternion.toRotationMatrix(), np.array([t.x, t.y, t.z]))


def random_configuration(full_model, config, rng) -> np.ndarray:
    """Random base pose and random positions of the config's joints (others stay at 0)."""
    q = pin.neutral(full_model)
    q[:3] = rng.uniform(-1.0, 1.0, 3)
    quaternion = rng.normal(size=4)
    q[3:7] = quaternion / np.linalg.norm(quaternion)
    for name in config.joints:
        i = full_model.idx_qs[full_model.getJointId(name)]
        q[i] = rng.uniform(full_model.lowerPositionLimit[i], full_model.upperPositionLimit[i])
    return q


def expected_placement(full_model, data, config, name: str) -> pin.SE3:
    """World placement of a link or tool frame by the test's own FK (run before)."""
    if full_model.existFrame(name):
        return data.oMf[full_model.getFrameId(name)]
    tool = next(t for t in config.tools if t.name == name)
    link = data.oMf[full_model.getFrameId(tool.link)]
    return link * pin.SE3(pin.rpy.rpyToMatrix(np.array(tool.rpy)), np.array(tool.position))


def test_every_transform_matches_forward_kinematics(io, full_model, config):
    rng = np.random.default_rng(4)
    data = full_model.createData()
    static = {t.child_frame_id: t for m in io.tf_static for t in m.transforms}
    urdf_links = {link.get("name") for link in ET.parse(config.urdf_path).getroot().iter("link")}
    for k in range(5):
        q = random_configuration(full_model, config, rng)
        stamp_ns = 1_000_000_000 * (k + 1) + 123
        io.send_state(q, config.joints, stamp_ns, full_model=full_model)
        assert spin_until(io.node, lambda s=stamp_ns: io.tf_with_stamp(s) is not None, 10.0)
        moving = {t.child_frame_id: t for t in io.tf_with_stamp(stamp_ns).transforms}
        assert len(moving) == len(config.joints) + 1  # one per actuated joint + world -> base
        pin.framesForwardKinematics(full_model, data, q)
        tree = {**static, **moving}
        # Every URDF link is in the tree, under its URDF name with the prefix.
        assert {PREFIX + name for name in urdf_links} <= set(tree)
        for child, message in tree.items():
            got = se3_of(message.transform)
            parent = message.header.frame_id
            child_name = child.removeprefix(PREFIX)
            world_T_child = expected_placement(full_model, data, config, child_name)
            if parent == "world":
                expected = world_T_child
            else:
                assert parent.startswith(PREFIX)
                world_T_parent = expected_placement(
                    full_model, data, config, parent[len(PREFIX) :]
                )
                expected = world_T_parent.actInv(world_T_child)
            # 1e-9 m / 1e-9 rad: doubles through the wire; both sides are the same FK up to
            # round-off (~1e-15), so anything larger is a wrong transform.
            np.testing.assert_allclose(
                got.translation, expected.translation, atol=1e-9, err_msg=child
            )
            angle = np.linalg.norm(pin.log3(expected.rotation.T @ got.rotation))
            assert angle < 1e-9, (child, angle)
            assert message.header.stamp.sec * 10**9 + message.header.stamp.nanosec == stamp_ns or (
                child in static
            )
        # Chained from the world, every link lands where FK puts it.
        for child in tree:
            chain, frame = pin.SE3.Identity(), child
            while frame != "world":
                chain = se3_of(tree[frame].transform) * chain
                frame = tree[frame].header.frame_id
            expected = expected_placement(full_model, data, config, child.removeprefix(PREFIX))
            np.testing.assert_allclose(
                chain.translation, expected.translation, atol=1e-9, err_msg=child
            )


def test_late_subscriber_receives_robot_description(io, config):
    received: list[String] = []
    io.node.create_subscription(String, "robot_description", received.append, LATCHED)
    assert spin_until(io.node, lambda: len(received) == 1, 10.0)
    root = ET.fromstring(received[0].data)
    original = ET.parse(config.urdf_path).getroot()
    assert root.get("name") == original.get("name")
    assert [j.get("name") for j in root.iter("joint")] == [
        j.get("name") for j in original.iter("joint")
    ]
    # package:// URIs resolved to existing files (resolve_package_uris: true in the params file).
    meshes = [m.get("filename") for m in root.iter("mesh")]
    assert meshes and all(m.startswith("file://") for m in meshes)


def urdf_link_inertial(urdf_root, link: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, CoM offset and rotation of the inertial frame, from the URDF XML."""
    element = next(e for e in urdf_root.iter("link") if e.get("name") == link).find("inertial")
    mass = float(element.find("mass").get("value"))
    origin = element.find("origin")
    xyz = (
        np.array([float(x) for x in origin.get("xyz", "0 0 0").split()])
        if origin is not None
        else np.zeros(3)
    )
    return mass, xyz, np.eye(3)


FEET = {
    "left_foot": ("l_sole", "l_foot_ft_sensor", "l_foot"),
    "right_foot": ("r_sole", "r_foot_ft_sensor", "r_foot"),
}


def sensor_reading(full_model, data, urdf, name: str, ground: pin.Force) -> WrenchStamped:
    """What an ankle sensor reads for a ground-on-foot wrench (world origin, world axes).

    foot-on-leg = ground-on-foot + gravity-on-foot (static foot), moved to the sensor origin in
    sensor axes. Foot mass and CoM from the URDF XML. ``data`` holds the FK of the state.
    """
    _, sensor, foot = FEET[name]
    mass, com_offset, _ = urdf_link_inertial(urdf, foot)
    foot_com = data.oMf[full_model.getFrameId(foot)].act(com_offset)
    gravity_force = mass * np.array([0, 0, -9.81])
    gravity = pin.Force(gravity_force, np.cross(foot_com, gravity_force))
    measured = data.oMf[full_model.getFrameId(sensor)].actInv(ground + gravity)
    message = WrenchStamped()
    message.header.frame_id = PREFIX + sensor
    f, t = message.wrench.force, message.wrench.torque
    f.x, f.y, f.z = (float(x) for x in measured.linear)
    t.x, t.y, t.z = (float(x) for x in measured.angular)
    return message


def marker(message: MarkerArray, namespace: str, marker_id: int = 0) -> Marker:
    return next(m for m in message.markers if m.ns == namespace and m.id == marker_id)


def test_markers_match_independent_com_and_cop(io, full_model, config):
    data = full_model.createData()
    urdf = ET.parse(config.urdf_path).getroot()
    # Standing robot: the config's initial posture, left sole at the world origin.
    q = pin.neutral(full_model)
    for name, value in zip(config.joints, config.initial_posture, strict=True):
        q[full_model.idx_qs[full_model.getJointId(name)]] = value
    pin.framesForwardKinematics(full_model, data, q)
    world_T_base = data.oMf[full_model.getFrameId("l_sole")].actInv(pin.SE3.Identity())
    q[:7] = pin.SE3ToXYZQUAT(world_T_base)
    pin.framesForwardKinematics(full_model, data, q)
    com = pin.centerOfMass(full_model, data, q)

    # Ground reactions chosen by hand: 150 N at a point of the left sole, 128 N at one of the
    # right sole; the CoP is their force-weighted mean.
    sole_points = {
        "left_foot": np.array([0.03, 0.01, 0.0]),
        "right_foot": np.array([0.0, -0.02, 0.0]),
    }
    forces = {"left_foot": 150.0, "right_foot": 128.0}
    points_world = {}
    for name, (sole, _, _) in FEET.items():
        point = data.oMf[full_model.getFrameId(sole)].act(sole_points[name])
        points_world[name] = point
        ground = pin.Force(np.array([0, 0, forces[name]]), np.cross(point, [0, 0, forces[name]]))
        io.wrenches[name].publish(sensor_reading(full_model, data, urdf, name, ground))
    cop_expected = (
        forces["left_foot"] * points_world["left_foot"]
        + forces["right_foot"] * points_world["right_foot"]
    ) / (forces["left_foot"] + forces["right_foot"])
    # Vertical forces: the CoP on the plane z = 0 is below their weighted mean, whatever the
    # points' heights (the right sole sits 7e-7 m below the ground in this posture).
    cop_expected[2] = 0.0
    io.markers.clear()
    io.send_state(q, config.joints, 77_000_000_000, full_model=full_model)

    def ready() -> bool:
        return any(
            m.markers
            and m.markers[0].header.stamp.sec == 77
            and marker(m, "cop").action == Marker.ADD
            for m in io.markers
        )

    assert spin_until(io.node, ready, 10.0), "no marker array with a CoP for the standing state"
    message = next(m for m in reversed(io.markers) if m.markers[0].header.stamp.sec == 77)
    assert all(m.header.frame_id == "world" for m in message.markers)
    position = marker(message, "com").pose.position
    # 1e-9 m: the same CoM formula on the same inertias, round-off only.
    np.testing.assert_allclose([position.x, position.y, position.z], com, atol=1e-9)
    ground = marker(message, "com_ground").pose.position
    np.testing.assert_allclose([ground.x, ground.y, ground.z], [com[0], com[1], 0.0], atol=1e-9)
    cop = marker(message, "cop").pose.position
    # 1e-9 m: exact static equations on both sides (the foot weight is compensated exactly).
    np.testing.assert_allclose([cop.x, cop.y, cop.z], cop_expected, atol=1e-9)
    # Support polygon: both soles loaded -> hull of their 8 corners, closed ring at z = 0.
    ring = np.array([[p.x, p.y, p.z] for p in marker(message, "support_polygon").points])
    corners = np.array(
        [
            data.oMf[full_model.getFrameId(s)].act(c)
            for s in ("l_sole", "r_sole")
            for c in config.soles[0].corners()
        ]
    )
    np.testing.assert_allclose(ring[0], ring[-1])
    np.testing.assert_allclose(ring[:, 2], 0.0, atol=1e-12)
    assert ring[:, 0].min() == pytest.approx(corners[:, 0].min(), abs=1e-9)
    assert ring[:, 1].max() == pytest.approx(corners[:, 1].max(), abs=1e-9)
    assert ring[:, 1].min() == pytest.approx(corners[:, 1].min(), abs=1e-9)
    # Force arrows: from each foot's CoP, length force_scale * |f| (0.002 m/N in the params file).
    for index, name in enumerate(("left_foot", "right_foot")):
        start, end = (
            np.array([p.x, p.y, p.z]) for p in marker(message, "contact_force", index).points
        )
        on_ground = points_world[name] * [1.0, 1.0, 0.0]  # vertical force: same x, y at z = 0
        np.testing.assert_allclose(start, on_ground, atol=1e-9)
        np.testing.assert_allclose(end - start, [0, 0, 0.002 * forces[name]], atol=1e-9)


def test_cop_hidden_when_no_foot_is_loaded(io, full_model, config):
    # Both feet in the air: the sensors read only the feet's weight.
    q = pin.neutral(full_model)
    q[2] = 1.0
    data = full_model.createData()
    pin.framesForwardKinematics(full_model, data, q)
    urdf = ET.parse(config.urdf_path).getroot()
    for name, publisher in io.wrenches.items():
        publisher.publish(sensor_reading(full_model, data, urdf, name, pin.Force.Zero()))
    io.markers.clear()
    io.send_state(q, config.joints, 78_000_000_000, full_model=full_model)

    def hidden() -> bool:
        return any(
            m.markers
            and m.markers[0].header.stamp.sec == 78
            and marker(m, "cop").action == Marker.DELETE
            for m in io.markers
        )

    assert spin_until(io.node, hidden, 10.0)
    message = next(m for m in reversed(io.markers) if m.markers[0].header.stamp.sec == 78)
    assert marker(message, "support_polygon").action == Marker.DELETE
    assert marker(message, "contact_force", 0).action == Marker.DELETE


@pytest.mark.parametrize(
    ("names", "positions", "reason"),
    [
        (["not_a_joint"], [0.0], "not_a_joint"),
        ("missing", None, "expected every joint of the model, got missing"),
        ("nan", None, "'position': expected finite values"),
        ("short", None, "values (one per name)"),
    ],
)
def test_bad_joint_states_are_dropped_and_reported(
    io, publisher_process, full_model, config, names, positions, reason
):
    good_stamp = 90_000_000_000
    q = random_configuration(full_model, config, np.random.default_rng(9))
    io.send_state(q, config.joints, good_stamp, full_model=full_model)
    assert spin_until(io.node, lambda: io.tf_with_stamp(good_stamp) is not None, 10.0)
    message = JointState()
    message.header.stamp.sec = 91
    if names == "missing":
        message.name = list(config.joints[:-1])
        message.position = [0.0] * (len(config.joints) - 1)
    elif names == "nan":
        message.name = list(config.joints)
        message.position = [float("nan")] + [0.0] * (len(config.joints) - 1)
    elif names == "short":
        message.name = list(config.joints)
        message.position = [0.0] * 3
    else:
        message.name = list(config.joints[:-1]) + names
        message.position = [0.0] * (len(config.joints) - 1) + positions
    io.joint_states.publish(message)
    assert spin_until(io.node, lambda: reason in publisher_process.stderr(), 10.0), (
        publisher_process.stderr()
    )
    assert io.tf_with_stamp(91_000_000_000) is None  # dropped: no transforms for it
    assert publisher_process.process.poll() is None  # and the node lives on
    io.send_state(q, config.joints, good_stamp + 1, full_model=full_model)
    assert spin_until(io.node, lambda: io.tf_with_stamp(good_stamp + 1) is not None, 10.0)


@pytest.mark.parametrize(
    ("quaternion", "reason"),
    [
        ([0.0, 0.0, 0.0, 2.0], "'odometry.pose.orientation': expected a unit quaternion"),
        ([float("nan"), 0.0, 0.0, 1.0], "'odometry': expected finite values"),
    ],
)
def test_bad_base_pose_keeps_the_last_good_base(
    io, publisher_process, full_model, config, quaternion, reason
):
    q = random_configuration(full_model, config, np.random.default_rng(11))
    good_stamp = 95_000_000_000
    io.send_state(q, config.joints, good_stamp, full_model=full_model)
    assert spin_until(io.node, lambda: io.tf_with_stamp(good_stamp) is not None, 10.0)
    bad = Odometry()
    bad.child_frame_id = "base_link"
    o = bad.pose.pose.orientation
    o.x, o.y, o.z, o.w = quaternion
    io.odom.publish(bad)
    assert spin_until(io.node, lambda: reason in publisher_process.stderr(), 10.0)
    message = JointState()
    message.header.stamp.sec = 96
    message.name = list(config.joints)
    message.position = [
        float(q[full_model.idx_qs[full_model.getJointId(n)]]) for n in config.joints
    ]
    io.joint_states.publish(message)
    assert spin_until(io.node, lambda: io.tf_with_stamp(96_000_000_000) is not None, 10.0)
    base = next(
        t for t in io.tf_with_stamp(96_000_000_000).transforms if t.header.frame_id == "world"
    )
    # The base of the last good odometry, exactly (doubles through the wire).
    np.testing.assert_allclose(se3_of(base.transform).translation, q[:3], atol=1e-12)
