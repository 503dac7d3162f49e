"""The state publisher's TF and marker rates over real DDS, and its clean shutdown.

Reference: the decimation rule stated in robot time (the joint_states stamps), not the node's
code: at 50 Hz of 500 Hz samples, one TF per 20 ms slot of stamps (the first sample of the
slot), each the transform of the sample it is stamped with (the newest state, checked against
the test's own Pinocchio FK).
"""

from __future__ import annotations

import signal
import time

import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from tests.state_publisher.conftest import PARAMS_FILE, spin_until
from wbm_description.registry import load_robot

pytestmark = pytest.mark.process

RATE = 50.0  # [Hz] TF
SAMPLE_NS = 2_000_000  # 500 Hz joint_states
SAMPLES = 150  # 0.3 s of robot time: 15 TF periods


@pytest.fixture(scope="module")
def config():
    return load_robot("icub")


START_NS = 50_000_000_000  # robot time of the first sample


def send_samples(start_node, rclpy_node, config, parameters: list[str]):
    """Start the node, send SAMPLES joint_states at about 500 Hz; (process, TF, wall time)."""
    process = start_node(
        "wbm_description.ros.state_publisher_node",
        ["--params-file", str(PARAMS_FILE)] + parameters,
    )
    node = rclpy_node
    received: list[TFMessage] = []
    publisher = node.create_publisher(JointState, "joint_states", 10)
    node.create_subscription(TFMessage, "tf", received.append, 1000)
    assert spin_until(
        node,
        lambda: publisher.get_subscription_count() >= 1 and node.count_publishers("tf") >= 1,
        90.0,  # start-up only: a loaded 2-core machine takes tens of seconds to import
    ), process.stderr()
    spin_until(node, lambda: False, 0.5)  # discovery both ways
    started = time.monotonic()
    for k in range(SAMPLES):
        message = JointState()
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(
            START_NS + k * SAMPLE_NS, 10**9
        )
        message.name = list(config.joints)
        message.position = [0.0] * len(config.joints)
        message.position[0] = 0.001 * k  # the sample's own signature
        publisher.publish(message)
        spin_until(node, lambda: False, 0.002)  # about the sample rate, no burst to drop
    elapsed = time.monotonic() - started
    spin_until(node, lambda: False, 1.0)
    return process, received, elapsed


def tf_samples(received: list[TFMessage]) -> np.ndarray:
    """The sample index each TF is stamped with."""
    firsts = [message.transforms[0].header.stamp for message in received]
    stamps = np.array([stamp.sec * 10**9 + stamp.nanosec for stamp in firsts])
    assert np.all((stamps - START_NS) % SAMPLE_NS == 0) and np.all(stamps >= START_NS)
    return (stamps - START_NS) // SAMPLE_NS


def check_transforms_of_their_samples(config, received, samples) -> None:
    """Each TF carries the state of the sample it is stamped with: the first joint's angle."""
    joint = config.joints[0]
    full_model = pin.buildModelFromUrdf(str(config.urdf_path), pin.JointModelFreeFlyer())
    child_link = full_model.frames[
        next(
            i
            for i, f in enumerate(full_model.frames)
            if f.parentJoint == full_model.getJointId(joint) and f.type == pin.FrameType.BODY
        )
    ].name
    data = full_model.createData()
    for message, k in zip(received, samples, strict=True):
        q = pin.neutral(full_model)
        q[full_model.idx_qs[full_model.getJointId(joint)]] = 0.001 * k
        pin.framesForwardKinematics(full_model, data, q)
        transform = next(t for t in message.transforms if t.child_frame_id == child_link)
        parent = data.oMf[full_model.getFrameId(transform.header.frame_id)]
        expected = parent.actInv(data.oMf[full_model.getFrameId(child_link)])
        r = transform.transform.rotation
        got = pin.Quaternion(r.w, r.x, r.y, r.z).toRotationMatrix()
        # 1e-9 rad: the same FK up to round-off; a neighbour sample differs by 1e-3 rad.
        assert np.linalg.norm(pin.log3(expected.rotation.T @ got)) < 1e-9, k


def test_tf_follows_publish_frequency_with_the_newest_state(start_node, rclpy_node, config):
    # input_rate 0: every message is taken as it arrives, so the decimation alone sets the rate.
    process, received, _ = send_samples(
        start_node,
        rclpy_node,
        config,
        ["-p", f"publish_frequency:={RATE}", "-p", "input_rate:=0.0"],
    )
    samples = tf_samples(received)
    # 15 slots of 20 ms in 0.3 s: 15 TF with no loss (samples 0, 10, ..., 140); best-effort
    # input may drop a sample under load, which delays that slot's TF by one sample (2 ms), not
    # the grid: at least 12, each within 3 samples after its slot (a multiple of 10 samples).
    assert 12 <= len(samples) <= 15, samples
    assert np.all(samples % 10 <= 3), samples
    assert len(set(samples // 10)) == len(samples), samples  # one per slot
    check_transforms_of_their_samples(config, received, samples)
    # SIGTERM: a clean exit, no traceback.
    process.process.send_signal(signal.SIGTERM)
    assert process.wait_exit(10.0) == 0, process.stderr()
    assert "Traceback" not in process.stderr()


def test_sampled_inputs_take_the_newest_state_at_input_rate(start_node, rclpy_node, config):
    """input_rate 100 Hz and a TF for every joint_states taken (publish_frequency 0).

    Reference: the sampling rule, not the node's code: at most one wake-up per 10 ms of wall
    time, each taking the newest message (queue of depth 1), so at most one TF per 10 ms of the
    sending time (+2: a wake-up at each end), never a sample twice, always the last one.
    """
    process, received, elapsed = send_samples(
        start_node, rclpy_node, config, ["-p", "publish_frequency:=0.0", "-p", "input_rate:=100.0"]
    )
    samples = tf_samples(received)
    print(f"{len(samples)} TF for {SAMPLES} samples sent in {elapsed:.3f} s: {samples}")
    assert len(samples) <= elapsed * 100.0 + 2, (elapsed, samples)
    assert np.all(np.diff(samples) > 0), samples
    assert samples[-1] == SAMPLES - 1, samples  # the newest state is never left behind
    check_transforms_of_their_samples(config, received, samples)
    assert process.process.poll() is None, process.stderr()


def test_markers_come_at_marker_rate_of_wall_time_while_the_sim_clock_stands(
    start_node, rclpy_node, config
):
    """marker_rate is per wall second (a steady timer), whatever the robot's pace.

    Reference: the parameter's definition. Under use_sim_time with one /clock message and one
    state, a timer on the node's (sim) clock would never fire again; 20 Hz of wall time gives
    about 30 arrays in 1.5 s. Bounds 15-45: a loaded machine delays a timer (rcl then skips
    the missed periods instead of bunching them), it never doubles its rate.
    """
    process = start_node(
        "wbm_description.ros.state_publisher_node",
        [
            "--params-file",
            str(PARAMS_FILE),
            "-p",
            "use_sim_time:=true",
            "-p",
            "marker_rate:=20.0",
            "-r",  # a namespace of its own: the module's other nodes still run
            "__ns:=/wall_markers",
        ],
    )
    node = rclpy_node
    clock = node.create_publisher(Clock, "/clock", 10)
    joints = node.create_publisher(JointState, "/wall_markers/joint_states", 10)
    odom = node.create_publisher(Odometry, "/wall_markers/ground_truth/odom", 10)
    markers: list[MarkerArray] = []
    node.create_subscription(MarkerArray, "/wall_markers/markers", markers.append, 100)
    assert spin_until(
        node,
        lambda: (
            joints.get_subscription_count() >= 1
            and odom.get_subscription_count() >= 1
            and clock.get_subscription_count() >= 1
            and node.count_publishers("/wall_markers/markers") >= 1
        ),
        90.0,
    ), process.stderr()
    spin_until(node, lambda: False, 0.5)  # discovery both ways
    stamp = Time(sec=50)
    clock.publish(Clock(clock=stamp))
    base = Odometry()
    base.header.stamp, base.header.frame_id, base.child_frame_id = stamp, "world", "base_link"
    base.pose.pose.position.z, base.pose.pose.orientation.w = 0.6, 1.0
    odom.publish(base)
    state = JointState(name=list(config.joints), position=[0.0] * len(config.joints))
    state.header.stamp = stamp
    spin_until(node, lambda: False, 0.1)  # the base pose first (no order across topics)
    joints.publish(state)
    assert spin_until(node, lambda: bool(markers), 10.0), process.stderr()
    markers.clear()
    spin_until(node, lambda: False, 1.5)
    assert 15 <= len(markers) <= 45, len(markers)
    assert all(m.markers[0].header.stamp == stamp for m in markers)
    assert process.process.poll() is None, process.stderr()
