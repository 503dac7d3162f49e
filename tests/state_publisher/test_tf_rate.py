"""The state publisher's TF rate (``publish_frequency``) over real DDS, and its clean shutdown.

Reference: the decimation rule stated in robot time (the joint_states stamps), not the node's
code: at 50 Hz of 500 Hz samples, one TF per 20 ms of stamps, each the transform of the sample
it is stamped with (the newest state, checked against the test's own Pinocchio FK).
"""

from __future__ import annotations

import signal

import numpy as np
import pinocchio as pin
import pytest
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from tests.state_publisher.conftest import PARAMS_FILE, spin_until
from wbm_description.registry import load_robot

pytestmark = pytest.mark.process

RATE = 50.0  # [Hz] TF
SAMPLE_NS = 2_000_000  # 500 Hz joint_states
SAMPLES = 150  # 0.3 s of robot time: 15 TF periods


@pytest.fixture(scope="module")
def config():
    return load_robot("icub")


def test_tf_follows_publish_frequency_with_the_newest_state(start_node, rclpy_node, config):
    process = start_node(
        "wbm_description.ros.state_publisher_node",
        ["--params-file", str(PARAMS_FILE), "-p", f"publish_frequency:={RATE}"],
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
    joint = config.joints[0]
    start_ns = 50_000_000_000
    for k in range(SAMPLES):
        message = JointState()
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(
            start_ns + k * SAMPLE_NS, 10**9
        )
        message.name = list(config.joints)
        message.position = [0.0] * len(config.joints)
        message.position[0] = 0.001 * k  # the sample's own signature
        publisher.publish(message)
        spin_until(node, lambda: False, 0.002)  # about the sample rate, no burst to drop
    spin_until(node, lambda: False, 1.0)
    firsts = [message.transforms[0].header.stamp for message in received]
    stamps = np.array([stamp.sec * 10**9 + stamp.nanosec for stamp in firsts])
    samples = (stamps - start_ns) // SAMPLE_NS
    assert np.all((stamps - start_ns) % SAMPLE_NS == 0) and np.all(samples >= 0)
    # 15 periods of 20 ms in 0.3 s: 15 TF with no loss (samples 0, 10, ..., 140); best-effort
    # input may drop a sample under load, which delays the next TF by one sample (2 ms): at
    # least 12, never two within a period and never a period skipped by more than 3 samples.
    assert 12 <= len(stamps) <= 15, samples
    gaps = np.diff(stamps)
    assert gaps.min() >= 1e9 / RATE and gaps.max() <= 1e9 / RATE + 3 * SAMPLE_NS, samples
    # Each TF carries the state of the sample it is stamped with: the first joint's angle.
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
    # SIGTERM: a clean exit, no traceback.
    process.process.send_signal(signal.SIGTERM)
    assert process.wait_exit(10.0) == 0, process.stderr()
    assert "Traceback" not in process.stderr()
