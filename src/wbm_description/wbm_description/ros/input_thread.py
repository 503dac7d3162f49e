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
same fields, at a fraction of the CPU time of rclpy's conversion into message objects.

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

A callback of the input thread that raises ends the node as one of the executor would: the
exception is raised again on the executor's thread (out of ``spin``). On shutdown (the context
shut down, :meth:`InputThread.stop`) the thread ends quietly.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.exceptions import InvalidHandle
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription

from wbm_description.ros import cdr
from wbm_description.ros.node_runtime import ThrottledLog

WAKE_PERIOD = 0.1
"""Longest wait of the input thread before it checks whether to stop [s]."""

MAX_DRAINED = 64
"""Most messages a ``newest`` subscription's queue gives up in one wake-up (its depth is less)."""


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


def _newest_per_publisher(subscription: Subscription) -> list[tuple[Any, Any]]:
    """Empty the subscription's queue: the newest (message, info) of each publisher.

    Publishers in the order of their newest message (call with the handle entered).
    """
    newest: dict[bytes, tuple[Any, Any]] = {}
    for _ in range(MAX_DRAINED):
        taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
        if taken is None:
            break
        gid = taken[1].get("publisher_gid") if taken[1] else None
        key = bytes(gid["data"]) if gid else b""
        newest.pop(key, None)  # re-inserted last: the dict keeps the order of the newest
        newest[key] = taken
    return list(newest.values())


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

    Attributes:
        lock: Held around every callback of the thread and of :attr:`core_group`.
        core_group: The callback group of the executor's callbacks that share state with the
            thread's.
    """

    def __init__(self, node: Node, min_period: float = 0.0):
        self.node = node
        self.min_period = float(min_period)
        self.lock = threading.Lock()
        self.core_group = LockedGroup(self.lock)
        self._group = DedicatedGroup()
        self._subscriptions: list[tuple[Subscription, bool]] = []
        self._newest: set[Subscription] = set()
        self._wake = GuardCondition(None, None, context=node.context)
        self._failure: BaseException | None = None
        self._failed = node.create_guard_condition(self._raise_failure)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._log = ThrottledLog(node.get_logger())

    def subscribe(
        self,
        msg_type: Any,
        topic: str,
        callback: Callable[..., None],
        qos: QoSProfile,
        *,
        views: bool = True,
        newest: bool = False,
    ) -> Subscription:
        """A subscription of the node whose messages the input thread takes.

        ``callback`` takes the message, or the message and its
        :class:`~rclpy.subscription.MessageInfo` (as for ``Node.create_subscription``). A
        message of a type :mod:`~wbm_description.ros.cdr` reads (JointState, Imu,
        WrenchStamped, Odometry) is taken serialized and handed over as a
        :class:`~wbm_description.ros.cdr.MessageView` (the same fields, a fraction of the CPU
        time of rclpy's conversion), unless ``views`` is false.

        ``newest``: at each wake-up the subscription's queue is emptied and only the newest
        message of each publisher (its GID) is handed to ``callback``, oldest publisher first:
        a node that fell behind answers the newest state instead of decoding and handling the
        superseded ones one by one, and a second publisher on the topic cannot push the first
        one's samples out of reach (as a queue of depth 1 would: its samples share the queue).
        """
        raw = views and cdr.has_reader(msg_type)
        if raw:
            callback = _decoding(callback, cdr.decoder(msg_type), topic, self._log)
        subscription = self.node.create_subscription(
            msg_type, topic, callback, qos, callback_group=self._group, raw=raw
        )
        with_info = subscription._callback_type is Subscription.CallbackType.WithMessageInfo
        self._subscriptions.append((subscription, with_info))
        if newest:
            self._newest.add(subscription)
        return subscription

    def take_clock(self) -> bool:
        """Serve the node's ``/clock`` subscription (its time source's, under use_sim_time) too.

        It is taken before the other subscriptions of the same wake-up, so a sample's stamp is
        never ahead of the node's clock; it no longer costs the executor a wake-up per message.
        A clock subscription that its time source destroys later (use_sim_time turned off) is
        dropped from the thread.

        Returns:
            Whether the node has one (use_sim_time is true).
        """
        for subscription in self.node.subscriptions:
            if subscription.topic_name == "/clock" and subscription.callback_group is not (
                self._group
            ):
                subscription.callback_group = self._group
                if cdr.has_reader(subscription.msg_type) and not subscription.raw:
                    # Taken serialized and decoded here (the time source reads msg.clock).
                    subscription.callback = _decoding(
                        subscription.callback,
                        cdr.decoder(subscription.msg_type),
                        subscription.topic_name,
                        self._log,
                    )
                    subscription.raw = True
                self._group.add_entity(subscription)
                for handler in subscription.event_handlers:
                    handler.callback_group = self._group
                with_info = (
                    subscription._callback_type is Subscription.CallbackType.WithMessageInfo
                )
                self._subscriptions.insert(0, (subscription, with_info))
                return True
        return False

    @property
    def running(self) -> bool:
        """Whether the thread runs."""
        return self._thread is not None and self._thread.is_alive()

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
        subscriptions = self._subscriptions
        timeout = round(WAKE_PERIOD * 1e9)
        with context.handle:
            wait_set = _rclpy.WaitSet(len(subscriptions), 1, 0, 0, 0, 0, context.handle)
        woke = 0.0
        while not self._stopping.is_set() and context.ok():
            remaining = woke + self.min_period - time.monotonic()
            if remaining > 0.0 and self._stopping.wait(remaining):
                return  # at most one wake-up per min_period; stopped meanwhile
            ready = self._wait(wait_set, context, timeout)
            woke = time.monotonic()
            for subscription, with_info in subscriptions:
                try:
                    with subscription.handle:
                        if subscription.handle.pointer not in ready:
                            continue
                        if subscription in self._newest:
                            messages = _newest_per_publisher(subscription)
                        else:
                            taken = subscription.handle.take_message(
                                subscription.msg_type, subscription.raw
                            )
                            messages = () if taken is None else (taken,)
                except InvalidHandle:
                    continue  # destroyed meanwhile: the next wait leaves it out
                for taken in messages:
                    with self.lock:
                        if self._stopping.is_set():
                            return
                        if with_info:
                            subscription.callback(*taken)
                        else:
                            subscription.callback(taken[0])

    def _wait(self, wait_set: Any, context: Any, timeout: int) -> list[int]:
        """Wait for a message (or the wake-up); the pointers of the ready subscriptions."""
        entered = []
        try:
            for handle in (context.handle, self._wake.handle):
                handle.__enter__()
                entered.append(handle)
            handles = []
            for subscription, with_info in list(self._subscriptions):
                try:
                    subscription.handle.__enter__()
                except InvalidHandle:  # destroyed (a time source's clock subscription)
                    self._subscriptions.remove((subscription, with_info))
                    continue
                entered.append(subscription.handle)
                handles.append(subscription.handle)
            wait_set.clear_entities()
            for handle in handles:
                wait_set.add_subscription(handle)
            wait_set.add_guard_condition(self._wake.handle)
            wait_set.wait(timeout)
            return wait_set.get_ready_entities("subscription")
        finally:
            for handle in reversed(entered):
                handle.__exit__(None, None, None)
