"""A recorder node: every topic (or a chosen list) into a rosbag2 with MCAP storage.

Where ``ros2 bag`` is not installed (the pip-only ROS 2), this node records what the demo and
users need: a rosbag2 directory (``metadata.yaml`` plus one ``.mcap`` file) that ``ros2 bag
info``/``play`` and Foxglove read. Messages are taken serialized (CDR) from DDS and written as is;
message definitions come from rosbags' ROS 2 Kilted type store.

The messages are taken in batches by a thread of their own
(:class:`~wbm_bringup.ros.recording_thread.RecordingThread`, at most one wake-up per
``batch_period``), not one executor wake-up each, and what is still queued when the recorder
stops is written before the bag is closed. Log times: the middleware's receive time of each
message, or under ``use_sim_time`` the sim time at its reception (the newest ``/clock`` received
before it, as ``ros2 bag record --use-sim-time``; :mod:`wbm_bringup.recording_stamps`). Under
``use_sim_time`` the bag's ``metadata.yaml`` also says how fast robot time ran: the receive and
robot times of the first ``/clock`` sample, of the last before robot time advanced and of the
last, in ``custom_data`` (:mod:`wbm_bringup.clock_span`).

Parameters (:class:`RecorderSettings`): ``output`` (the bag directory to create; it must not
exist; required), ``topics`` (empty records every topic discovered), ``discovery_period`` [s of
wall time], ``batch_period`` [s].

Usage: ``wbm_recorder --ros-args -p output:=/tmp/run_bag``; stop it with Ctrl-C (SIGINT) or
SIGTERM, which closes the bag. A bad parameter (or an existing output) stops it at start with
one message (exit code 2); :func:`check_parameters` makes these checks without starting it, and
also that the output can be created (``wbm launch`` runs it before starting anything).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rclpy.clock import Clock, ClockType
from rclpy.exceptions import InvalidTopicNameException
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.validate_topic_name import validate_topic_name
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from rosgraph_msgs.msg import Clock as ClockMessage

from wbm_bringup.recorder_settings import RecorderSettings
from wbm_bringup.ros.recording_thread import RecordingThread
from wbm_description.exceptions import ConfigError
from wbm_description.ros.node_runtime import (
    ROS_PARAMETERS,
    WbmNode,
    declare_settings,
    run_node,
)
from wbm_description.settings import nest

_TYPESTORE = get_typestore(Stores.ROS2_KILTED)

DEPTH = 1000
"""Queue depth of each recorded subscription [messages]: 1 s of a 1 kHz topic, far more than a
``batch_period``'s."""


class Recorder(WbmNode):
    """Subscribes to topics with raw (serialized) messages and writes them to an MCAP bag."""

    def __init__(self, **kwargs) -> None:
        super().__init__("wbm_recorder", **kwargs)
        settings = declare_settings(self, RecorderSettings)
        self.topics = [topic for topic in settings.topics if topic]
        self.realtime_priority = settings.realtime_priority
        self.path = Path(settings.output)
        if not settings.output or self.path.exists():
            raise ConfigError(
                f"parameters of node '{self.get_fully_qualified_name()}'",
                "output",
                "the path of a directory to create (rosbag2 needs a new one)",
                settings.output,
            )
        self.writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.connections: dict[str, object] = {}
        self.subscriptions_by_topic: dict[str, object] = {}
        self.counts: dict[str, int] = {}
        self.skipped: set[str] = set()
        self.thread = RecordingThread(self, self.write, settings.batch_period)
        if self.get_parameter("use_sim_time").value:
            self._take_time_source_clock()
            self.thread.stamp_with_clock(
                self.create_subscription(
                    ClockMessage,
                    "/clock",
                    _ignored,
                    QoSProfile(depth=DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT),
                    callback_group=self.thread.group,
                    raw=True,
                )
            )
        # Wall time: under use_sim_time the node's clock is not fed (see above).
        self.create_timer(
            settings.discovery_period, self.discover, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )
        self.discover()
        self.get_logger().info(f"recording to {self.path}")

    def _take_time_source_clock(self) -> None:
        """Keep the time source's ``/clock`` subscription off the executor.

        It would wake the executor for every ``/clock`` message (the robot's rate) to set a
        clock that nothing here reads: the log times come from the recording thread's own
        ``/clock`` subscription and the discovery timer runs on wall time.
        """
        for subscription in self.subscriptions:
            if subscription.topic_name == "/clock":
                subscription.callback_group = self.thread.group
                self.thread.group.add_entity(subscription)
                for handler in subscription.event_handlers:
                    handler.callback_group = self.thread.group

    def start(self) -> None:
        """Start the recording thread, then apply the priority (to it as well)."""
        self.thread.start()
        self.apply_realtime_priority(self.realtime_priority)

    def discover(self) -> None:
        """Subscribe to topics not yet recorded."""
        for topic, types in self.get_topic_names_and_types():
            if topic in self.subscriptions_by_topic or topic in self.skipped:
                continue
            if self.topics and topic not in self.topics:
                continue
            type_name = types[0]
            if type_name not in _TYPESTORE.types:
                self.skipped.add(topic)
                self.get_logger().warning(f"not recording {topic}: unknown type {type_name}")
                continue
            message_class = _message_class(type_name)
            if message_class is None:
                self.skipped.add(topic)
                self.get_logger().warning(f"not recording {topic}: cannot import {type_name}")
                continue
            latched = any(
                info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                for info in self.get_publishers_info_by_topic(topic)
            )
            qos = QoSProfile(
                depth=DEPTH,
                history=HistoryPolicy.KEEP_LAST,
                reliability=ReliabilityPolicy.RELIABLE,
                durability=(
                    DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE
                ),
            )
            with self.thread.lock:  # not between the bytes of a message the thread writes
                self.connections[topic] = self.writer.add_connection(
                    topic, type_name, typestore=_TYPESTORE
                )
            self.counts[topic] = 0
            subscription = self.create_subscription(
                message_class, topic, _ignored, qos, callback_group=self.thread.group, raw=True
            )
            self.subscriptions_by_topic[topic] = subscription
            self.thread.add(subscription, topic)

    def write(self, topic: str, log_time: int, data: bytes) -> None:
        """Write one serialized message with its log time [ns] (from the recording thread)."""
        self.writer.write(self.connections[topic], log_time, data)
        self.counts[topic] += 1

    def stop(self) -> None:
        """Write what is still queued, then close the bag (writes metadata.yaml) at shutdown."""
        self.thread.stop()
        try:
            self.thread.drain()
            for key, value in self.thread.clock_span.custom_data().items():
                self.writer.set_custom_data(key, value)
        finally:
            self.writer.close()
        summary = ", ".join(f"{topic}: {count}" for topic, count in sorted(self.counts.items()))
        # Printed, not logged: the context may already be shut down (Ctrl-C).
        print(f"wbm_recorder: wrote {self.path} ({summary})", flush=True)


def _ignored(_: bytes) -> None:
    """The callback of the recorded subscriptions: the recording thread takes their messages."""


def _message_class(type_name: str) -> type | None:
    """The message class of ``pkg/msg/Name`` (recording topics of any type needs it by name)."""
    package, _, name = type_name.split("/")
    try:
        module = __import__(f"{package}.msg", fromlist=[name])
    except ImportError:
        return None
    return getattr(module, name, None)


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks of this node's parameters, without starting it (``wbm launch`` pre-flight).

    The settings, an ``output`` that does not exist yet and can be created (its nearest
    existing ancestor is a writable directory), and valid topic names.

    Args:
        parameters: The node's parameters by dotted name, typed as the node receives them;
            ROS's own (``use_sim_time``) are left to the caller.

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name.
    """
    values = {name: value for name, value in parameters.items() if name not in ROS_PARAMETERS}
    settings = RecorderSettings.from_mapping(nest(values))
    expected = "the path of a directory to create (rosbag2 needs a new one)"
    output = Path(settings.output).absolute()
    if not settings.output or output.exists():
        raise ConfigError(None, "output", expected, settings.output)
    ancestor = output.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise ConfigError(
            None, "output", f"{expected}; {ancestor} is not a writable directory", settings.output
        )
    for i, topic in enumerate(settings.topics):
        if topic:
            try:
                validate_topic_name(topic)
            except InvalidTopicNameException:
                raise ConfigError(None, f"topics[{i}]", "a valid ROS topic name", topic) from None


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_recorder``."""
    return run_node(Recorder, "wbm_recorder", args)


if __name__ == "__main__":
    sys.exit(main())
