"""The recorder's subscriptions, taken in batches by a thread of their own and written in order.

rclpy's executor wakes up, rebuilds its wait set from every entity of the node and converts one
message per wake-up: for a recorder of every topic of a 500 Hz robot (10 topics or more at the
loop's rate) that was most of a core of the 2-core machine, taken from the loop it records, and
it fell behind: in lockstep the backlog was still queued at the end and the recording lost the
run's last seconds; in real time (the loop's nodes in SCHED_FIFO) it kept one joint_states in
three. :class:`RecordingThread` waits on the recorded subscriptions alone, at most once per
``period``, and then takes every queued message of each ready subscription, serialized as it
came (no conversion), and writes the batch in reception order with its log time
(:mod:`wbm_bringup.recording_stamps`: the middleware's receive time, or the sim time at
reception under ``use_sim_time``). :meth:`RecordingThread.drain` takes what is left at the end
(the middleware keeps a subscription's queue after a Ctrl-C until the node is destroyed).

The subscriptions are ordinary subscriptions of the node (the graph sees no difference), in a
callback group the executor never waits on once the thread runs
(:class:`~wbm_description.ros.input_thread.DedicatedGroup`).
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from rclpy.exceptions import InvalidHandle
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.subscription import Subscription

from wbm_bringup.clock_span import ClockSpan
from wbm_bringup.recording_stamps import ReceptionClock, wall_stamps
from wbm_description.ros.input_thread import DedicatedGroup

WAKE_PERIOD = 0.1
"""Longest wait for a message before the thread checks whether to stop [s]."""

_CLOCK = struct.Struct("<iI")  # rosgraph_msgs/Clock after the 4-byte CDR header: sec, nanosec

Write = Callable[[Any, int, bytes], None]
"""Writes one message: (connection, log time [ns], serialized bytes)."""


def clock_nanoseconds(data: bytes) -> int:
    """The time a serialized rosgraph_msgs/Clock carries [ns]."""
    seconds, nanoseconds = _CLOCK.unpack_from(data, 4)
    return seconds * 1_000_000_000 + nanoseconds


class _Recorded:
    __slots__ = ("connection", "handle", "msg_type", "pointer")

    def __init__(self, subscription: Subscription, connection: Any):
        self.handle = subscription.handle
        with self.handle:
            self.pointer = self.handle.pointer
        self.msg_type = subscription.msg_type
        self.connection = connection


class RecordingThread:
    """Takes the recorded subscriptions' messages in batches and writes them.

    Args:
        node: The recorder node.
        write: Called for each message, in reception order, from the thread (and from
            :meth:`drain`).
        period: Shortest wall-clock time between two wake-ups [s]: a subscription's queue must
            hold a period's messages (its depth).

    Attributes:
        group: The callback group of the recorded subscriptions (and the clock's).
        lock: Held around every batch's takes and writes: hold it around any other use of the
            bag writer (a new connection), which must not interleave with a message's bytes.
        written: Messages written so far.
        clock_span: The first, start and last ``/clock`` samples taken (with
            :meth:`stamp_with_clock`): how fast robot time ran (:mod:`wbm_bringup.clock_span`).
    """

    def __init__(self, node: Node, write: Write, period: float) -> None:
        self.node = node
        self.write = write
        self.period = float(period)
        self.group = DedicatedGroup()
        self.written = 0
        self.clock_span = ClockSpan()
        self._clock: _Recorded | None = None
        self._reception: ReceptionClock | None = None
        self._recorded: list[_Recorded] = []
        self._list_lock = threading.Lock()
        self.lock = threading.Lock()
        self._wake = GuardCondition(None, None, context=node.context)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: BaseException | None = None
        self._failed = node.create_guard_condition(self._raise_failure)

    def stamp_with_clock(self, clock: Subscription) -> None:
        """Log times from sim time (call before :meth:`start`; without it, receive times).

        ``clock``: the node's raw (serialized) subscription to ``/clock``, created with
        :attr:`group`.
        """
        self._clock = _Recorded(clock, None)
        self._reception = ReceptionClock()

    def add(self, subscription: Subscription, connection: Any) -> None:
        """Record a subscription's messages (created raw, with :attr:`group`) to ``connection``."""
        with self._list_lock:
            self._recorded.append(_Recorded(subscription, connection))
        if self._thread is not None:
            self._wake.trigger()  # the wait set grows at the next wake-up

    def start(self) -> None:
        """Start taking messages."""
        if self._thread is not None:
            return
        self.group.served = True
        self._thread = threading.Thread(
            target=self._run, name=f"{self.node.get_name()}_recording", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and wait for it (at most ``timeout`` seconds)."""
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is None:
            return
        try:
            self._wake.trigger()
        except Exception:  # the context is gone: the thread ends at its next wake-up
            pass
        thread.join(timeout)

    def drain(self) -> int:
        """Take and write every message still queued (after :meth:`stop`).

        Returns:
            How many were written.
        """
        with self._list_lock:
            recorded = list(self._recorded)
        written = self._take_and_write(recorded)
        if self._reception is not None:
            self._reception.flush()
        return written

    # ------------------------------------------------------------------ the thread

    def _raise_failure(self) -> None:
        # On the executor's thread: the recording failed, which ends the node (as a callback
        # of the executor that raises would).
        if self.failure is not None:
            raise self.failure

    def _run(self) -> None:
        try:
            self._serve()
        except Exception as error:  # noqa: BLE001 - raised again on the executor's thread
            if not self._stopping.is_set() and self.node.context.ok():
                self.failure = error
                self._failed.trigger()

    def _serve(self) -> None:
        context = self.node.context
        timeout = round(WAKE_PERIOD * 1e9)
        wait_set = None
        size = -1
        woke = 0.0
        while not self._stopping.is_set() and context.ok():
            remaining = woke + self.period - time.monotonic()
            if remaining > 0.0 and self._stopping.wait(remaining):
                return
            with self._list_lock:
                recorded = list(self._recorded)
            if len(recorded) != size:
                size = len(recorded)
                with context.handle:
                    wait_set = _rclpy.WaitSet(max(size, 1), 1, 0, 0, 0, 0, context.handle)
            if not self._wait(wait_set, context, recorded, timeout):
                continue
            woke = time.monotonic()
            self._take_and_write(recorded)

    def _wait(self, wait_set: Any, context: Any, recorded: list[_Recorded], timeout: int) -> bool:
        """Wait until a recorded subscription has a message (or the wake-up): whether one has."""
        entered = []
        try:
            for entry in recorded:
                try:
                    entry.handle.__enter__()
                except InvalidHandle:
                    continue
                entered.append(entry)
            with context.handle, self._wake.handle:
                wait_set.clear_entities()
                for entry in entered:
                    wait_set.add_subscription(entry.handle)
                wait_set.add_guard_condition(self._wake.handle)
                wait_set.wait(timeout)
                return bool(wait_set.get_ready_entities("subscription"))
        finally:
            for entry in reversed(entered):
                entry.handle.__exit__(None, None, None)

    def _take_and_write(self, recorded: list[_Recorded]) -> int:
        """Take every queued message of ``recorded`` (then the clock's) and write them."""
        with self.lock:
            batch = []
            for entry in recorded:
                batch.extend(
                    (info["received_timestamp"], (entry.connection, data))
                    for data, info in _take_all(entry)
                )
            if self._reception is not None and self._clock is not None:
                # The clock last: every sample received before a taken message is taken too.
                for data, info in _take_all(self._clock):
                    received, sim_time = info["received_timestamp"], clock_nanoseconds(data)
                    self._reception.add_clock(received, sim_time)
                    self.clock_span.add(received, sim_time)
                stamped = self._reception.stamp(batch)
            else:
                stamped = wall_stamps(batch)
            write = self.write
            for log_time, (connection, data) in stamped:
                write(connection, log_time, data)
            self.written += len(stamped)
            return len(stamped)


def _take_all(entry: _Recorded) -> list[tuple[bytes, dict]]:
    """Every queued (serialized message, message info) of a subscription, oldest first."""
    taken = []
    try:
        with entry.handle:
            take = entry.handle.take_message
            msg_type = entry.msg_type
            while (sample := take(msg_type, True)) is not None:
                taken.append(sample)
    except InvalidHandle:  # destroyed meanwhile: nothing more to take
        pass
    return taken


__all__ = ["RecordingThread", "clock_nanoseconds"]
