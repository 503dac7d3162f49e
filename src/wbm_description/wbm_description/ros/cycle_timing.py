"""Per-cycle timestamps of a node on the control loop, published in batches (instrumentation).

A node on the loop (robot interface, controller) notes a few CLOCK_MONOTONIC instants per cycle
(:func:`time.monotonic`, the same clock in every process of the machine) beside the cycle's
sample stamp, and publishes them every :data:`BATCH` cycles on ``~/cycle_timing``
(std_msgs/Float64MultiArray, one row per cycle, the column names in ``layout.dim[1].label``,
comma-separated). ``wbm_benchmark_bringup`` matches the rows of both nodes and its own arrival
times by sample stamp to split a cycle into simulator step, publish, transit, controller compute
and command back. The cost on the loop is one list append per cycle and one small message per
batch.
"""

from __future__ import annotations

import array

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

BATCH = 50
"""Cycles per published batch."""

TOPIC = "~/cycle_timing"

_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)


class CycleTiming:
    """Rows of per-cycle instants, published in batches on ``~/cycle_timing``.

    Args:
        node: The node publishing them.
        columns: The column names; the first is the sample stamp [ns of robot time], the others
            instants of :func:`time.monotonic` [s] (or durations, as their names say).
    """

    def __init__(self, node: Node, columns: tuple[str, ...]):
        self.columns = columns
        self._rows = array.array("d")
        self._publisher = node.create_publisher(Float64MultiArray, TOPIC, _QOS)
        self._label = ",".join(columns)

    def add(self, *row: float) -> None:
        """One cycle's row (as many values as columns); publishes a full batch."""
        self._rows.extend(row)
        if len(self._rows) >= BATCH * len(self.columns):
            self.flush()

    def flush(self) -> None:
        """Publish the rows noted so far (if any)."""
        rows, self._rows = self._rows, array.array("d")
        if not rows:
            return
        message = Float64MultiArray()
        width = len(self.columns)
        message.layout.dim = [
            MultiArrayDimension(label="cycles", size=len(rows) // width, stride=len(rows)),
            MultiArrayDimension(label=self._label, size=width, stride=width),
        ]
        message.data = rows
        self._publisher.publish(message)


def timing_rows(message: Float64MultiArray) -> tuple[list[str], list[list[float]]]:
    """The column names and rows of a ``~/cycle_timing`` message."""
    columns = message.layout.dim[1].label.split(",")
    width = len(columns)
    data = list(message.data)
    return columns, [data[i : i + width] for i in range(0, len(data), width)]


__all__ = ["BATCH", "TOPIC", "CycleTiming", "timing_rows"]
