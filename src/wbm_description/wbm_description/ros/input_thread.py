"""A node's hot-path subscriptions, taken and dispatched on a thread of their own.

rclpy's executors rebuild their wait set from every entity of the node at every wake-up
(subscriptions, timers, services, the parameter services, the QoS event handlers of every
publisher and subscription) in Python: on the 2-core machine that is about 0.5-1 ms of CPU per
message for a node of the controller's size, paid once per robot topic (joint_states, imu,
every ft/<sensor>) of every control cycle. :class:`InputThread` keeps the robot inputs out of
that: their subscriptions are ordinary subscriptions of the node (same topics, QoS, namespace
and remapping; the graph sees no difference), created in a callback group the executor never
waits on, and a thread of the node waits on a wait set holding only them and takes each ready
message (one per subscription per wake-up, as the executor does) and calls its callback.

Messages of the types :mod:`wbm_description.ros.cdr` reads (JointState, Imu, WrenchStamped,
Odometry, and the clock's) are taken serialized and read from their bytes into views with the
same fields, at a fraction of the CPU time of rclpy's conversion into message objects; a
subscription may bring its own reader (``decode``: e.g. the controller's callbacks take the
values they use, :func:`wbm_description.ros.cdr.values_decoder`). The time source's ``/clock``
callback is run on the bytes (:func:`_clock_setter`: the same clock updates and jump callbacks,
no message objects).

Per wake-up the thread enters each subscription's handle once and keeps it entered through the
wait, the takes and the callbacks (a subscription destroyed meanwhile is destroyed when the
thread leaves it, as rclpy defers the destruction of a handle in use), and calls the decoder and
the callback itself: the Python calls per message are few, which is what costs on the loop
(the caches are cold after a control step).

Everything else stays on the node's executor. Callbacks of both that touch the same state are
serialized by one lock: the input thread holds :attr:`InputThread.lock` around each callback,
and entities created with ``callback_group=InputThread.core_group`` hold it around theirs (their
callback group acquires it when the executor begins executing them and releases it after).

Wake-ups without work: with rmw_fastrtps, an entity's QoS event handlers (the default
incompatible-QoS and incompatible-type warnings rclpy attaches to every subscription and
publisher) wake the executor's wait for every message the entity receives or sends, without
anything to take: on the 2-core machine that was 2-3 executor passes per control cycle on an
otherwise idle executor. The thread's subscriptions (and the clock's, once taken) therefore
have their event handlers in a group nobody waits on, and the hot-path publishers are created
with :func:`quiet_publisher_events`: their incompatible-QoS warnings are not logged (our
publishers are reliable and volatile: every subscriber's QoS is compatible with them).

Ordered (``InputThread(node, ordered=True)``): messages are handed over in the order of their
stamps across subscriptions, not subscription by subscription. A robot publishes a sample's
messages one after the other, so a thread that woke in the middle of a sample takes its first
messages, and the rest comes with the next sample's first when the robot published that before
the thread woke again (a lockstep simulator that runs a sample ahead of the commands, when the
scheduler held the thread back): one by one in subscription order, the next sample's
joint_states would be handed over before the last sample's last F/T reading, and that sample
would never be complete. Nor does DDS order messages across topics, or a wait set's snapshot of
the ready subscriptions stay true while the thread takes. So each wake-up of an ordered thread
takes every queued message of the ready subscriptions and merges the stamped subscriptions as
streams: the messages of a stamp are handed over, in stamp order, as soon as the sample before
is complete (every stamped subscription has given a message of that stamp or later, so no
older message can still come; each topic carries every sample), or once they waited
:data:`HOLD_BACK` (a topic that stopped holds the others back no longer). Messages of a
subscription without ``stamp`` (the clock) are handed over at once, first.

A callback of the input thread that raises ends the node as one of the executor would: the
exception is raised again on the executor's thread (out of ``spin``). On shutdown (the context
shut down, :meth:`InputThread.stop`) the thread ends quietly.
"""

from __future__ import annotations

import inspect
import struct
import threading
import time
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.clock_type import ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.exceptions import InvalidHandle
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription
from rclpy.time import Time
from rclpy.time_source import TimeSource

from wbm_description.ros import cdr
from wbm_description.ros.node_runtime import ThrottledLog

WAKE_PERIOD = 0.1
"""Longest wait of the input thread before it checks whether to stop [s]."""

MAX_DRAINED = 64
"""Most messages a ``newest`` subscription's queue (or an ordered thread's) gives up in one
wake-up (its depth is less)."""

UNSTAMPED = -1
"""An ordered thread's sort key of a message of a subscription without ``stamp``: first."""

_SORT_KEY = itemgetter(0, 1)
"""An ordered thread's pending message's key: (stamp, the order taken)."""

UNDECODABLE = object()
"""What :meth:`InputThread._decoded` returns for bytes the subscription's reader refused."""

HOLD_BACK = 0.2
"""An ordered thread hands a message over at its first wake-up after this long (it wakes at least
every :data:`WAKE_PERIOD`) even when a stamped subscription has not reached its stamp (that topic
stopped) [s of wall time]."""


def quiet_publisher_events() -> PublisherEventCallbacks:
    """Event callbacks of a hot-path publisher: none (see the module docstring).

    Pass as ``create_publisher(..., event_callbacks=quiet_publisher_events())``.
    """
    return PublisherEventCallbacks(use_default_callbacks=False)


def _takes_info(callback: Callable[..., None]) -> bool:
    """Whether ``callback`` takes (message, info), as rclpy's Subscription decides it."""
    try:
        inspect.signature(callback).bind(object())
    except TypeError:
        return True
    return False


def _decoding(
    callback: Callable[..., None],
    decode: Callable[[bytes], Any],
    topic: str,
    log: ThrottledLog,
) -> Callable[..., None]:
    """``callback`` of a raw subscription: the serialized message decoded first.

    Bytes that cannot be decoded are dropped with a throttled log.
    """

    def decoded(data: bytes) -> Any:
        try:
            return decode(data)
        except cdr.CdrError as error:
            log.warning(f"undecodable:{topic}", f"dropped a message on '{topic}': {error}")
            return None

    if _takes_info(callback):

        def with_info(data: bytes, info: Any) -> None:
            message = decoded(data)
            if message is not None:
                callback(message, info)

        return with_info

    def message_only(data: bytes) -> None:
        message = decoded(data)
        if message is not None:
            callback(message)

    return message_only


def _newest_per_publisher(taken: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The newest (message, info) of each publisher of ``taken`` (in the order taken).

    Publishers in the order of their newest message.
    """
    newest: dict[bytes, tuple[Any, Any]] = {}
    for sample in taken:
        gid = sample[1].get("publisher_gid") if sample[1] else None
        key = bytes(gid["data"]) if gid else b""
        newest.pop(key, None)  # re-inserted last: the dict keeps the order of the newest
        newest[key] = sample
    return list(newest.values())


def _drain(take: Callable[..., Any], msg_type: Any, raw: bool) -> Any:
    """Empty a subscription's queue (``take`` its entered handle's take_message).

    The newest (message, info) of each publisher, in the order of their newest message: the
    one message taken as it is (the common case: no publisher comparison).
    """
    first = take(msg_type, raw)
    if first is None:
        return ()
    second = take(msg_type, raw)
    if second is None:
        return (first,)
    taken = [first, second]
    for _ in range(MAX_DRAINED - 2):
        sample = take(msg_type, raw)
        if sample is None:
            break
        taken.append(sample)
    return _newest_per_publisher(taken)


class _Input:
    """One subscription of the thread, with what its wake-ups need looked up once."""

    __slots__ = ("callback", "decode", "handle", "msg_type", "newest", "pointer", "raw",
                 "reached", "stamp", "subscription", "with_info")  # fmt: skip

    def __init__(
        self,
        subscription: Subscription,
        callback: Callable[..., None],
        decode: Callable[[bytes], Any] | None,
        newest: bool,
        stamp: Callable[[Any], int] | None = None,
    ):
        self.subscription = subscription
        self.handle = subscription.handle
        with self.handle:
            self.pointer = self.handle.pointer
        self.msg_type = subscription.msg_type
        self.raw = subscription.raw
        self.callback = callback
        self.decode = decode
        self.newest = newest
        self.stamp = stamp
        self.reached = UNSTAMPED
        """Ordered: the stamp of the last message taken from the subscription."""
        self.with_info = subscription._callback_type is Subscription.CallbackType.WithMessageInfo


def _clock_setter(time_source: Any, fallback: Callable[[bytes], None]) -> Callable[[bytes], None]:
    """The time source's ``clock_callback`` on a serialized rosgraph_msgs/Clock, without objects.

    What :meth:`rclpy.time_source.TimeSource.clock_callback` does (the time kept for clocks
    attached later, every associated clock's ROS time override set: rcl calls their jump
    callbacks), with the time point built once from the bytes instead of a Clock message, a
    builtin_interfaces/Time and rclpy's checks of both. Bytes it does not read (another
    encapsulation, a negative stamp) go to ``fallback`` (the decoded message to the callback).
    """
    point = _rclpy.rcl_time_point_t
    ros_time = ClockType.ROS_TIME
    stamp = struct.Struct("<iI")
    new_time = Time.__new__

    def on_clock(data: bytes) -> None:
        if data[:2] == cdr.CDR_LITTLE_ENDIAN and len(data) >= 12:
            sec, nanosec = stamp.unpack_from(data, 4)
            if sec >= 0:
                time_ = new_time(Time)
                time_._time_handle = handle_point = point(sec * 1_000_000_000 + nanosec, ros_time)
                time_source._last_time_set = time_
                for clock in time_source._associated_clocks:
                    handle = clock.handle
                    with handle:
                        handle.set_ros_time_override(handle_point)
                return
        fallback(data)

    return on_clock


class DedicatedGroup(CallbackGroup):
    """Callback group of entities served by a thread of their own once it runs.

    Until :attr:`served` is set (the thread started), an executor serves them as any other
    entity: a node spun without its thread (a test's executor) still gets its messages.

    Attributes:
        served: Whether the thread serves them (an executor then leaves them out of its wait).
    """

    def __init__(self) -> None:
        super().__init__()
        self.served = False

    def can_execute(self, entity: Any) -> bool:
        """Whether an executor may wait on and run the entity: while no thread serves it."""
        return not self.served

    def beginning_execution(self, entity: Any) -> bool:
        """Whether an executor may run it now (not once the thread serves it)."""
        return not self.served

    def ending_execution(self, entity: Any) -> None:
        """Nothing to release."""


class LockedGroup(CallbackGroup):
    """Mutually exclusive callback group whose callbacks hold ``lock`` while they run.

    Args:
        lock: The lock shared with the input thread.
    """

    def __init__(self, lock: threading.Lock):
        super().__init__()
        self.lock = lock
        self._running = False

    def can_execute(self, entity: Any) -> bool:
        """Whether no callback of the group is running (mutually exclusive)."""
        return not self._running

    def beginning_execution(self, entity: Any) -> bool:
        """Take the lock (waits for the input thread's callback to end)."""
        if self._running:
            return False
        self.lock.acquire()
        self._running = True
        return True

    def ending_execution(self, entity: Any) -> None:
        """Release the lock."""
        self._running = False
        self.lock.release()


class InputThread:
    """Subscriptions of ``node`` served by a thread with a wait set of their own.

    Create the hot-path subscriptions with :meth:`subscribe` (and :meth:`take_clock`), the
    node's other callbacks that share state with them with ``callback_group=core_group``, then
    :meth:`start` (the thread's wait set is sized then); :meth:`stop` before the node is
    destroyed. Until :meth:`start`, the node's executor serves the subscriptions as usual.

    Args:
        node: The node owning the subscriptions.
        min_period: Shortest wall-clock time between two wake-ups [s]; 0 wakes up for every
            message. Messages arriving meanwhile wait in their subscription's queue (with a
            queue of depth 1, only the newest of each topic is kept and taken): a node that
            needs the newest state at a lower rate than the robot's (TF, markers) then pays
            for one take per topic per period instead of one per message.
        ordered: Hand the messages of a wake-up over in the order of their stamps (module
            docstring; each subscription's ``stamp``).

    Attributes:
        lock: Held around every callback of the thread and of :attr:`core_group`.
        core_group: The callback group of the executor's callbacks that share state with the
            thread's.
    """

    def __init__(self, node: Node, min_period: float = 0.0, *, ordered: bool = False):
        self.node = node
        self.min_period = float(min_period)
        self.ordered = ordered
        self._pending: list[tuple[Any, ...]] = []
        """Ordered: messages taken, not yet handed over (stamp, count, taken at, input, data,
        info)."""
        self._taken = 0
        self._last_key = UNSTAMPED
        """Ordered: the newest stamp handed over."""
        self.lock = threading.Lock()
        self.core_group = LockedGroup(self.lock)
        self._group = DedicatedGroup()
        self._inputs: list[_Input] = []
        self._wake = GuardCondition(None, None, context=node.context)
        self._failure: BaseException | None = None
        self._failed = node.create_guard_condition(self._raise_failure)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._log = ThrottledLog(node.get_logger())
        self._periodic: tuple[int, Callable[[], None]] | None = None

    @property
    def _subscriptions(self) -> list[tuple[Subscription, bool]]:
        """The thread's subscriptions, (subscription, whether its callback takes the info)."""
        return [(entry.subscription, entry.with_info) for entry in self._inputs]

    def subscribe(
        self,
        msg_type: Any,
        topic: str,
        callback: Callable[..., None],
        qos: QoSProfile,
        *,
        views: bool = True,
        newest: bool = False,
        decode: Callable[[bytes], Any] | None = None,
        stamp: Callable[[Any], int] | None = None,
    ) -> Subscription:
        """A subscription of the node whose messages the input thread takes.

        ``callback`` takes the message, or the message and its
        :class:`~rclpy.subscription.MessageInfo` (as for ``Node.create_subscription``). A
        message of a type :mod:`~wbm_description.ros.cdr` reads (JointState, Imu,
        WrenchStamped, Odometry) is taken serialized and handed over as a
        :class:`~wbm_description.ros.cdr.MessageView` (the same fields, a fraction of the CPU
        time of rclpy's conversion), unless ``views`` is false.

        ``decode``: the subscription's own reader of the serialized message (bytes to what
        ``callback`` takes, e.g. the values it needs without a view; raising
        :class:`~wbm_description.ros.cdr.CdrError` for bytes it cannot read, which are then
        dropped with a throttled log); the message is then always taken serialized.

        ``newest``: at each wake-up the subscription's queue is emptied and only the newest
        message of each publisher (its GID) is handed to ``callback``, oldest publisher first:
        a node that fell behind answers the newest state instead of decoding and handling the
        superseded ones one by one, and a second publisher on the topic cannot push the first
        one's samples out of reach (as a queue of depth 1 would: its samples share the queue).

        ``stamp``: an ordered thread's sort key of a message, from what ``callback`` takes
        (e.g. the header stamp [ns]); None: the message is handed over first of its wake-up.
        """
        if newest and self.ordered:
            raise ValueError("newest: an ordered input thread hands over every message")
        if decode is None and views and cdr.has_reader(msg_type):
            decode = cdr.decoder(msg_type)
        raw = decode is not None
        executor_callback = callback
        if raw:
            executor_callback = _decoding(callback, decode, topic, self._log)
        subscription = self.node.create_subscription(
            msg_type, topic, executor_callback, qos, callback_group=self._group, raw=raw
        )
        # The thread decodes and calls ``callback`` itself (one call less per message).
        self._inputs.append(_Input(subscription, callback, decode, newest, stamp))
        return subscription

    def take_clock(self) -> bool:
        """Serve the node's ``/clock`` subscription (its time source's, under use_sim_time) too.

        It is taken before the other subscriptions of the same wake-up, so a sample's stamp is
        never ahead of the node's clock; it no longer costs the executor a wake-up per message.
        A clock subscription that its time source destroys later (use_sim_time turned off) is
        dropped from the thread. The time source's callback is run on the serialized message
        (:func:`_clock_setter`: the same clock updates, without the message objects).

        Returns:
            Whether the node has one (use_sim_time is true).
        """
        for subscription in self.node.subscriptions:
            if subscription.topic_name == "/clock" and subscription.callback_group is not (
                self._group
            ):
                subscription.callback_group = self._group
                callback = subscription.callback
                if cdr.has_reader(subscription.msg_type) and not subscription.raw:
                    # Taken serialized and decoded here (the time source reads msg.clock).
                    decoding = _decoding(
                        callback,
                        cdr.decoder(subscription.msg_type),
                        subscription.topic_name,
                        self._log,
                    )
                    owner = getattr(callback, "__self__", None)
                    if (
                        isinstance(owner, TimeSource)
                        and getattr(callback, "__func__", None) is TimeSource.clock_callback
                    ):
                        decoding = _clock_setter(owner, decoding)
                    subscription.callback = decoding
                    subscription.raw = True
                self._group.add_entity(subscription)
                for handler in subscription.event_handlers:
                    handler.callback_group = self._group
                self._inputs.insert(0, _Input(subscription, subscription.callback, None, False))
                return True
        return False

    def every(self, period: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the thread every ``period`` seconds of wall time (steady clock).

        Work a node does at its own pace on the newest inputs (the state publisher's markers),
        without a timer of the node's executor: an executor wake-up rebuilds its wait set from
        every entity of the node. The calls hold :attr:`lock`, as the thread's callbacks do, and
        come after a wake-up's messages; the thread's wait ends at the next call's time (a
        wake-up delayed by ``min_period`` delays that call by as much). Calls are on a grid of
        ``period`` from the thread's start; a call late by a whole period skips the missed ones.
        Set it before :meth:`start`; one callback per thread.
        """
        if not period > 0.0:
            raise ValueError(f"period: expected a number > 0 [s], got {period!r}")
        self._periodic = (round(period * 1e9), callback)

    @property
    def running(self) -> bool:
        """Whether the thread runs."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def native_id(self) -> int | None:
        """The thread's id in the kernel (its task id in ``/proc``); None before :meth:`start`."""
        return None if self._thread is None else self._thread.native_id

    def start(self) -> None:
        """Start taking messages (once the node is complete)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, name=f"{self.node.get_name()}_inputs", daemon=True
        )
        self._group.served = True
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and wait for it (at most ``timeout`` seconds)."""
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is None:
            return
        try:
            self._wake.trigger()
        except Exception:  # the context is already gone: the thread ends by itself
            pass
        thread.join(timeout)

    def _raise_failure(self) -> None:
        # On the executor's thread: the input thread's callback failed.
        if self._failure is not None:
            raise self._failure

    def _run(self) -> None:
        context = self.node.context
        try:
            self._serve(context)
        except Exception as error:  # noqa: BLE001 - handed to the executor's thread
            if self._stopping.is_set() or not context.ok():
                return  # shutting down: a take or a publish on the invalid context
            self._failure = error
            self._failed.trigger()

    def _serve(self, context: Any) -> None:
        wake_period = round(WAKE_PERIOD * 1e9)
        timeout = wake_period
        with context.handle:
            wait_set = _rclpy.WaitSet(len(self._inputs), 1, 0, 0, 0, 0, context.handle)
        stopping = self._stopping
        lock = self.lock
        woke = 0.0
        periodic = self._periodic
        if periodic is not None:
            period_ns, periodic_call = periodic
            due_ns = time.monotonic_ns() + period_ns
        while not stopping.is_set() and context.ok():
            if self.min_period > 0.0:
                remaining = woke + self.min_period - time.monotonic()
                if remaining > 0.0 and stopping.wait(remaining):
                    return  # at most one wake-up per min_period; stopped meanwhile
            if periodic is not None:  # the call when due, then a wait until the next one
                now_ns = time.monotonic_ns()
                if now_ns >= due_ns:
                    with lock:
                        if stopping.is_set():
                            return
                        periodic_call()
                    due_ns += period_ns
                    now_ns = time.monotonic_ns()
                    if due_ns <= now_ns:  # late by a whole period: the missed calls skipped
                        due_ns = now_ns + period_ns
                timeout = min(wake_period, due_ns - now_ns)
            # The handles stay entered from the wait to the end of their callbacks: one
            # entry per wake-up (a destruction meanwhile is done when they are left).
            entered = self._enter()
            try:
                ready = self._wait(wait_set, context, entered, timeout)
                woke = time.monotonic()
                if self.ordered:
                    if (ready or self._pending) and not self._dispatch_in_order(entered, ready):
                        return
                    continue
                if not ready:
                    continue
                for entry in entered:
                    if entry.pointer not in ready:
                        continue
                    take = entry.handle.take_message
                    if entry.newest:
                        messages = _drain(take, entry.msg_type, entry.raw)
                    else:
                        taken = take(entry.msg_type, entry.raw)
                        if taken is None:
                            continue
                        messages = (taken,)
                    callback, decode, with_info = entry.callback, entry.decode, entry.with_info
                    for data, info in messages:
                        if decode is not None:
                            data = self._decoded(entry, data)
                            if data is UNDECODABLE:
                                continue
                        with lock:
                            if stopping.is_set():
                                return
                            if with_info:
                                callback(data, info)
                            else:
                                callback(data)
            finally:
                for entry in reversed(entered):
                    entry.handle.__exit__(None, None, None)

    def _dispatch_in_order(self, entered: list[_Input], ready: Any) -> bool:
        """Take the ready subscriptions' queued messages, hand them over in stamp order.

        The merge of the module docstring: each stamped subscription is a stream in stamp
        order; the messages of a stamp are handed over once every stamped subscription has
        given a message of the stamp before it or later (that sample is complete: nothing
        older can still come), at once otherwise (a sample's messages are handed over as they
        come, not when its last came), or once they waited :data:`HOLD_BACK` (a topic that
        stopped must not stop the others).

        Returns:
            False when the thread is stopping (the rest is not handed over).
        """
        pending = self._pending
        now = time.monotonic()
        for entry in entered:
            if entry.pointer not in ready:
                continue
            take = entry.handle.take_message
            msg_type, raw, decode, stamp = entry.msg_type, entry.raw, entry.decode, entry.stamp
            for _ in range(MAX_DRAINED):
                taken = take(msg_type, raw)
                if taken is None:
                    break
                data, info = taken
                if decode is not None:
                    data = self._decoded(entry, data)
                    if data is UNDECODABLE:
                        continue
                if stamp is None:
                    key = UNSTAMPED
                else:
                    key = entry.reached = stamp(data)
                self._taken += 1
                pending.append((key, self._taken, now, entry, data, info))
        if not pending:
            return True
        pending.sort(key=_SORT_KEY)
        reached = [entry.reached for entry in entered if entry.stamp is not None]
        watermark = min(reached, default=UNSTAMPED)
        late = now - HOLD_BACK
        last = self._last_key
        count = 0
        for key, _, taken_at, _, _, _ in pending:
            if key > last:
                # The first message of a new stamp: due once the stamp before it is complete
                # (the others of its stamp, an unstamped or a late one: at once).
                if last > watermark and taken_at > late:
                    break
                last = key
            count += 1
        due, self._pending = pending[:count], pending[count:]
        if reached and max(reached) < last:
            # Every stream went back: the robot's time restarted (a reset). Its first samples
            # went at once (older than the last stamp); the merge starts again from them.
            last = max((item[0] for item in due), default=UNSTAMPED)
        self._last_key = last
        lock, stopping = self.lock, self._stopping
        for _, _, _, entry, data, info in due:
            with lock:
                if stopping.is_set():
                    return False
                if entry.with_info:
                    entry.callback(data, info)
                else:
                    entry.callback(data)
        return True

    def _decoded(self, entry: _Input, data: bytes) -> Any:
        """``entry``'s reader on ``data``; :data:`UNDECODABLE`, logged, when it refuses it."""
        try:
            return entry.decode(data)
        except cdr.CdrError as error:
            topic = entry.subscription.topic_name
            self._log.warning(f"undecodable:{topic}", f"dropped a message on '{topic}': {error}")
            return UNDECODABLE

    def _enter(self) -> list[_Input]:
        """Enter the subscriptions' handles; those destroyed are dropped from the thread."""
        entered = []
        try:
            for entry in list(self._inputs):
                try:
                    entry.handle.__enter__()
                except InvalidHandle:  # destroyed (a time source's clock subscription)
                    self._inputs.remove(entry)
                    continue
                entered.append(entry)
        except BaseException:
            for entry in reversed(entered):
                entry.handle.__exit__(None, None, None)
            raise
        return entered

    def _wait(self, wait_set: Any, context: Any, entered: list[_Input], timeout: int) -> Any:
        """Wait for a message (or the wake-up); the pointers of the ready subscriptions."""
        wake = self._wake.handle
        with context.handle, wake:
            wait_set.clear_entities()
            add = wait_set.add_subscription
            for entry in entered:
                add(entry.handle)
            wait_set.add_guard_condition(wake)
            wait_set.wait(timeout)
            return wait_set.get_ready_entities("subscription")
