"""A controller that computes nothing: the transport floor of the closed loop.

``python -m wbm_bringup.ros.null_controller`` is a node that does what the controller node
does with its messages and nothing else: the robot topics (``joint_states``, ``imu``,
``ft/<sensor>`` for the sensors named on the command line) taken on an input thread
(:class:`~wbm_description.ros.input_thread.InputThread`, the values decoders of
:mod:`wbm_description.ros.cdr`, as the controller's callbacks), and, once every topic of a
sample has arrived, one ``joint_commands`` (the sample's joint positions, zero velocities and
efforts) written serialized (:class:`~wbm_description.ros.cdr_writer.JointStateWriter`) and
published with the sample's stamp, reliable, as the controller answers in trigger ``inputs``.

``wbm_benchmark_bringup --controller-loop`` runs it beside the controller in the same loop: the
difference of the two rows is the controller's own compute; this row is what no controller can
go below with these processes, topics and middleware on the machine.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

from wbm_description.ros import cdr
from wbm_description.ros.cdr_writer import JointStateWriter
from wbm_description.ros.input_thread import InputThread
from wbm_description.ros.node_runtime import SPIN_WAKE_PERIOD


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``--ft NAME ...`` the F/T sensors of the robot (topics ``ft/<NAME>``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ft", nargs="*", default=[], help="F/T sensor names")
    args, _ = parser.parse_known_args(argv)
    rclpy.init(args=sys.argv if argv is None else argv)
    node = rclpy.create_node("null_controller")
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    publisher = node.create_publisher(JointState, "joint_commands", reliable)
    inputs = InputThread(node)
    topics = ["joint_states", "imu"] + [f"ft/{name}" for name in args.ft]
    pending: dict[int, set[str]] = {}
    latest: dict[str, object] = {}
    writer: list[JointStateWriter] = []

    def arrived(topic: str, stamp: int) -> None:
        seen = pending.setdefault(stamp, set())
        seen.add(topic)
        if len(seen) < len(topics):
            return
        del pending[stamp]
        for old in [s for s in pending if s < stamp]:
            del pending[old]  # a sample that never completed
        _, _, names, position, _, _ = latest["joint_states"]
        if not writer:
            writer.append(JointStateWriter(list(names)))
        zeros = np.zeros(len(position))
        publisher.publish(writer[0].write(stamp, np.array(position), zeros, zeros))

    def on_joint_states(values) -> None:
        latest["joint_states"] = values
        arrived("joint_states", values[0])

    inputs.subscribe(
        JointState,
        "joint_states",
        on_joint_states,
        reliable,
        decode=cdr.values_decoder(JointState),
    )
    inputs.subscribe(
        Imu,
        "imu",
        lambda values: arrived("imu", values[0]),
        reliable,
        decode=cdr.values_decoder(Imu),
    )
    for name in args.ft:
        inputs.subscribe(
            WrenchStamped,
            f"ft/{name}",
            lambda values, topic=f"ft/{name}": arrived(topic, values[0]),
            reliable,
            decode=cdr.values_decoder(WrenchStamped),
        )
    inputs.start()
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        while rclpy.ok():  # a bounded wait (node_runtime.SPIN_WAKE_PERIOD): no timer here
            executor.spin_once(timeout_sec=SPIN_WAKE_PERIOD)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        inputs.stop()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
