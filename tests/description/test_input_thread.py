"""The input thread: hot-path subscriptions served by a thread with a wait set of their own.

Real rclpy in one process: a publisher node sends numbered JointState samples; a node takes them
on its :class:`InputThread` while its executor (another thread) runs a timer of the core group.
References: the published numbers (exact: a message is carried, not recomputed), the thread
each callback ran on, and a counter of callbacks inside the shared lock (never two at once).
"""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from wbm_description.ros.cdr import MessageView
from wbm_description.ros.input_thread import InputThread

SAMPLES = 200
WAIT = 10.0  # [s] longest wait for the samples (a loaded 2-core machine)


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.try_shutdown(context=ctx)


def test_inputs_taken_on_the_thread_in_order_and_exclusive_with_the_core(context):
    publisher_node = rclpy.create_node("input_thread_publisher", context=context)
    node = rclpy.create_node("input_thread_node", context=context)
    inputs = InputThread(node)
    reliable = QoSProfile(depth=SAMPLES, reliability=ReliabilityPolicy.RELIABLE)
    received: list[tuple[float, list[float], str, bool]] = []
    inside = [0]
    overlaps = [0]
    core_calls = [0]
    done = threading.Event()

    def enter() -> None:
        inside[0] += 1
        if inside[0] > 1:
            overlaps[0] += 1

    def on_sample(message: JointState, info) -> None:
        enter()
        time.sleep(0.0005)  # long enough for the core timer to try to run meanwhile
        received.append(
            (
                float(message.header.stamp.nanosec),
                list(message.position),
                threading.current_thread().name,
                info is not None and "publisher_gid" in info,
            )
        )
        inside[0] -= 1
        if len(received) == SAMPLES:
            done.set()

    def on_core_timer() -> None:
        enter()
        core_calls[0] += 1
        time.sleep(0.0005)
        inside[0] -= 1

    subscription = inputs.subscribe(JointState, "samples", on_sample, reliable)
    node.create_timer(0.001, on_core_timer, callback_group=inputs.core_group)
    publisher = publisher_node.create_publisher(JointState, "samples", reliable)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    assert executor.can_execute(subscription)  # until the thread starts, the executor's
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    inputs.start()
    try:
        deadline = time.monotonic() + WAIT
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        for i in range(SAMPLES):
            message = JointState()
            message.header.stamp.nanosec = i
            message.name = ["a", "b", "c"]
            message.position = [i * 0.5, -1.0 / (i + 1), 1e-9 * i]
            publisher.publish(message)
            time.sleep(0.0005)
        assert done.wait(WAIT), f"{len(received)} of {SAMPLES} samples arrived"
        assert inputs.running
    finally:
        inputs.stop()
        executor.shutdown(timeout_sec=2.0)
        spinner.join(2.0)
    # Every sample, in order, carried exactly, with its MessageInfo, on the input thread only.
    assert [r[0] for r in received] == [float(i) for i in range(SAMPLES)]
    assert all(r[1] == [i * 0.5, -1.0 / (i + 1), 1e-9 * i] for i, r in enumerate(received))
    assert {r[2] for r in received} == {"input_thread_node_inputs"}
    assert all(r[3] for r in received)
    # The executor never waits on the thread's subscription; the core ran, never alongside.
    assert not executor.can_execute(subscription)
    assert core_calls[0] > 10
    assert overlaps[0] == 0
    assert not inputs.running  # stop() ended the thread


def test_a_failing_input_callback_ends_the_spin_with_its_error(context):
    publisher_node = rclpy.create_node("input_thread_publisher", context=context)
    node = rclpy.create_node("input_thread_node", context=context)
    inputs = InputThread(node)
    qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)

    def on_sample(message: JointState) -> None:
        raise ValueError(f"bad sample {message.header.stamp.nanosec}")

    inputs.subscribe(JointState, "samples", on_sample, qos)
    publisher = publisher_node.create_publisher(JointState, "samples", qos)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    inputs.start()
    try:
        deadline = time.monotonic() + WAIT
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        message = JointState()
        message.header.stamp.nanosec = 7
        publisher.publish(message)
        with pytest.raises(ValueError, match="bad sample 7"):
            while time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.1)
    finally:
        inputs.stop()
        executor.shutdown(timeout_sec=2.0)


def test_serialized_inputs_are_views_and_undecodable_bytes_are_dropped(context):
    # A JointState subscription of the thread is taken serialized: the callback gets the view
    # of wbm_description.ros.cdr, the published values exactly. Bytes that neither that reader
    # nor rclpy can read (published raw: truncated, another encapsulation) are dropped with a
    # log, and the next message is taken as usual: the node goes on.
    publisher_node = rclpy.create_node("input_thread_publisher", context=context)
    node = rclpy.create_node("input_thread_node", context=context)
    inputs = InputThread(node)
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    received = []
    done = threading.Event()

    def on_sample(message) -> None:
        received.append(message)
        if len(received) == 2:
            done.set()

    inputs.subscribe(JointState, "samples", on_sample, qos)
    publisher = publisher_node.create_publisher(JointState, "samples", qos)
    inputs.start()
    try:
        deadline = time.monotonic() + WAIT
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        good = JointState()
        good.header.stamp.sec, good.header.frame_id = 3, "f"
        good.name, good.position = ["a", "b"], [0.25, -1e-9]
        publisher.publish(good)
        data = serialize_message(good)
        publisher.publish(data[:20])  # truncated within the names
        publisher.publish(b"\x00\x07\x00\x00" + data[4:20])  # unknown encapsulation, short
        good.header.stamp.sec = 4
        publisher.publish(good)
        assert done.wait(WAIT), f"{len(received)} of 2 samples arrived"
        time.sleep(0.2)
        assert inputs.running
    finally:
        inputs.stop()
    assert [m.header.stamp.sec for m in received] == [3, 4]
    assert all(isinstance(m, MessageView) for m in received)
    assert all(m.name == ["a", "b"] and m.header.frame_id == "f" for m in received)
    assert all(m.position.tolist() == [0.25, -1e-9] and len(m.effort) == 0 for m in received)


def test_the_clock_on_the_thread_sets_the_nodes_time_and_calls_its_jump_callbacks(context):
    # take_clock: the time source's /clock subscription runs on the thread, read from its
    # serialized bytes (no Clock message); the node's ROS time follows each sample exactly and
    # the clock's jump callbacks see every jump, as with rclpy's own clock callback.
    from rclpy.clock import JumpThreshold
    from rclpy.duration import Duration
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock

    publisher_node = rclpy.create_node("input_thread_clock", context=context)
    node = rclpy.create_node(
        "input_thread_node",
        context=context,
        parameter_overrides=[Parameter("use_sim_time", Parameter.Type.BOOL, True)],
    )
    inputs = InputThread(node)
    assert inputs.take_clock()
    jumps = []
    threshold = JumpThreshold(
        min_forward=Duration(nanoseconds=1), min_backward=Duration(nanoseconds=-1)
    )
    handle = node.get_clock().create_jump_callback(
        threshold, post_callback=lambda jump: jumps.append(jump.delta.nanoseconds)
    )
    publisher = publisher_node.create_publisher(Clock, "/clock", 10)
    inputs.start()
    stamps = [(5, 250), (7, 999_999_999), (6, 0)]  # forward, forward, back
    try:
        deadline = time.monotonic() + WAIT
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        previous = 0
        for sec, nanosec in stamps:
            message = Clock()
            message.clock.sec, message.clock.nanosec = sec, nanosec
            publisher.publish(message)
            expected = sec * 1_000_000_000 + nanosec
            while node.get_clock().now().nanoseconds != expected:
                assert time.monotonic() < deadline, "the node's time did not follow /clock"
                time.sleep(0.005)
            assert jumps[-1] == expected - previous
            previous = expected
        assert inputs.running
        last = node._time_source._last_time_set  # kept for clocks attached later
        assert last.nanoseconds == previous and last.clock_type == node.get_clock().clock_type
    finally:
        inputs.stop()
        handle.unregister()
    assert len(jumps) == len(stamps)


@pytest.mark.parametrize("min_period", [0.0, 0.01])
def test_every_calls_on_the_thread_on_a_wall_clock_grid_holding_the_lock(context, min_period):
    # Reference: the definition (period 25 ms of the steady clock from the start, calls on the
    # input thread holding its lock, none after stop), with a subscription that never receives
    # anything: the calls must come from the thread's own wait ending on time. In 1.0 s, 40
    # calls on an idle machine; 20-41: a loaded machine delays a call (the missed ones are
    # skipped, never bunched), with min_period 10 ms by at most that much; a thread waking
    # only at its WAKE_PERIOD (0.1 s) would make 10.
    node = rclpy.create_node("input_thread_every", context=context)
    inputs = InputThread(node, min_period=min_period)
    inputs.subscribe(JointState, "nobody_publishes_here", lambda _: None, QoSProfile(depth=1))
    calls: list[tuple[float, str, bool]] = []  # (time, thread, lock held)
    inputs.every(
        0.025,
        lambda: calls.append(
            (time.monotonic(), threading.current_thread().name, inputs.lock.locked())
        ),
    )
    with pytest.raises(ValueError, match="period"):
        inputs.every(0.0, lambda: None)
    inputs.start()
    try:
        time.sleep(1.0)
    finally:
        inputs.stop()
    count = len(calls)
    time.sleep(0.1)
    assert len(calls) == count  # none after stop
    assert 20 <= count <= 41, count
    assert all(name == "input_thread_every_inputs" and locked for _, name, locked in calls)
    node.destroy_node()


def test_an_ordered_thread_hands_a_late_message_over_before_the_next_samples(context):
    """A sample's last message comes after the next sample's first (a lockstep robot one sample
    ahead, DDS not ordering topics): an ordered thread hands it over first, so a consumer that
    keeps the latest stamp per topic (as the controller's inputs) sees every sample complete.
    The plain thread hands them over as taken: sample 1 is never complete (the reference, so
    the scene does reproduce the race). A topic that stops holds the others back for
    HOLD_BACK at most."""
    from wbm_description.ros.input_thread import HOLD_BACK

    def run(ordered: bool, name: str) -> tuple[list[tuple[str, int]], tuple[list, list], dict]:
        publisher_node = rclpy.create_node(f"ordered_publisher_{name}", context=context)
        node = rclpy.create_node(f"ordered_node_{name}", context=context)
        inputs = InputThread(node, ordered=ordered)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        handed: list[tuple[str, int]] = []
        latest: dict[str, int] = {}
        complete: list[int] = []
        arrived: dict[tuple[str, int], float] = {}

        def on_message(topic: str, message) -> None:
            stamp = message.header.stamp.sec
            handed.append((topic, stamp))
            arrived[(topic, stamp)] = time.monotonic()
            latest[topic] = stamp
            if len(latest) == 3 and len(set(latest.values())) == 1 and stamp not in complete:
                complete.append(stamp)

        def header_stamp(message) -> int:
            return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec

        publishers = {}
        for topic in ("a", "b", "c"):
            inputs.subscribe(
                JointState,
                topic,
                lambda message, t=topic: on_message(t, message),
                qos,
                stamp=header_stamp if ordered else None,
            )
            publishers[topic] = publisher_node.create_publisher(JointState, topic, qos)
        inputs.start()
        published: dict[tuple[str, int], float] = {}

        def send(topic: str, stamp: int, settle: float = 0.03) -> None:
            message = JointState()
            message.header.stamp.sec = stamp
            published[(topic, stamp)] = time.monotonic()
            publishers[topic].publish(message)
            time.sleep(settle)  # mostly taken in a wake-up of its own (either way: same order)

        try:
            deadline = time.monotonic() + WAIT
            while any(p.get_subscription_count() == 0 for p in publishers.values()):
                assert time.monotonic() < deadline, "the thread's subscriptions did not match"
                time.sleep(0.01)
            send("a", 1)
            send("b", 1)
            send("a", 2)  # before sample 1's c: taken first
            send("c", 1)
            send("b", 2)
            send("c", 2)
            send("a", 3, settle=0.0)  # sample 3 never gets its c: the topic stopped
            send("b", 3, settle=0.0)
            send("a", 4, settle=0.0)
            deadline = time.monotonic() + WAIT
            while len(handed) < 9 and time.monotonic() < deadline:
                time.sleep(0.01)
            before_restart = list(complete)
            complete.clear()
            # The robot's time restarts (a reset): each topic's sample 0 (as the robot
            # republishes it until the first command), then the same race again.
            for topic in ("a", "b", "c"):
                send(topic, 0)
            for topic, stamp in (("a", 1), ("b", 1), ("a", 2), ("c", 1), ("b", 2), ("c", 2)):
                send(topic, stamp)
            deadline = time.monotonic() + WAIT
            while len(handed) < 18 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.1)
        finally:
            inputs.stop()
        delays = {key: arrived[key] - published[key] for key in arrived}
        return handed, (before_restart, complete), delays

    handed, complete, delays = run(True, "ordered")
    assert handed[:6] == [("a", 1), ("b", 1), ("c", 1), ("a", 2), ("b", 2), ("c", 2)]
    assert complete[0] == [1, 2]
    # Sample 3's messages go at once (sample 2 is complete); sample 4's waits for sample 3's c
    # until HOLD_BACK (a lower bound: it cannot come sooner; 5 s: a loaded machine).
    assert sorted(handed[6:9]) == [("a", 3), ("a", 4), ("b", 3)]
    assert HOLD_BACK <= delays[("a", 4)] < 5.0
    # After the restart, the merge holds again: sample 1's c before sample 2's a.
    assert handed[9:] == [
        ("a", 0), ("b", 0), ("c", 0), ("a", 1), ("b", 1), ("c", 1), ("a", 2), ("b", 2), ("c", 2)
    ]  # fmt: skip
    assert complete[1] == [0, 1, 2]
    plain, plain_complete, _ = run(False, "plain")
    assert plain[:4] == [("a", 1), ("b", 1), ("a", 2), ("c", 1)]
    assert plain_complete == ([2], [0, 2])  # sample 1 never complete, after the restart neither
    with pytest.raises(ValueError, match="newest"):
        InputThread(rclpy.create_node("ordered_newest", context=context), ordered=True).subscribe(
            JointState, "x", print, QoSProfile(depth=1), newest=True
        )
