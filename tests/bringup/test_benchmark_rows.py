"""wbm_benchmark_bringup's rows say the scheduling their launch had (benchmark_bringup.row_name).

sim.launch.yaml gives the loop SCHED_FIFO in realtime pacing, and in lockstep only with
``lockstep_priority`` loop (hand-over and receive threads) or true (every thread): a lockstep row
without it, or with a ``command_delay`` (that loop keeps both CPUs busy), ran with normal
scheduling, whatever ``realtime_priority`` was, and is named so.
"""

from __future__ import annotations

import pytest

from wbm_bringup.ros.benchmark_bringup import row_name


@pytest.mark.parametrize(
    ("row", "priority", "lockstep", "delay", "name"),
    [
        ("realtime-500", 50, None, 0, "realtime-500-fifo50"),
        ("realtime-1000", 0, None, 0, "realtime-1000-normal"),
        ("realtime-500", 50, "loop", 0, "realtime-500-fifo50"),  # lockstep_priority: lockstep only
        ("lockstep-500", 50, None, 0, "lockstep-500-normal"),  # the launch's default: false
        ("lockstep-500", 50, "false", 0, "lockstep-500-normal"),
        ("lockstep-500", 50, "loop", 0, "lockstep-500-fifo50-loop"),
        ("lockstep-1000", 30, "true", 0, "lockstep-1000-fifo30-all"),
        ("lockstep-500", 0, "loop", 0, "lockstep-500-normal"),  # no priority: nothing in FIFO
        ("lockstep-500", 50, "loop", 1, "lockstep-500-normal"),  # with a delay: normal
        ("lockstep-500", 50, "true", 2, "lockstep-500-normal"),
        ("realtime-500", 50, None, 1, "realtime-500-fifo50"),  # the delay: lockstep only
    ],
)
def test_row_names(row, priority, lockstep, delay, name):
    assert row_name(row, priority, lockstep, delay) == name


def test_stage_means_add_up_to_the_lockstep_cycle():
    # A synthetic lockstep loop of 1 ms wall cycles, 2 ms of robot time each: every stage of
    # every cycle has the duration chosen here, so each stage's median and mean are it (to
    # round-off) and the means of all stages but publish (inside inputs) make the cycle.

    from wbm_bringup.ros.benchmark_bringup import ProbeRecord, summarize

    record = ProbeRecord()
    n = 200
    for k in range(n):
        t0 = 100.0 + 1e-3 * k
        stamp = 2_000_000 * (k + 1)
        record.robot_rows.append([stamp, 0.0, t0, t0 + 0.2e-3, t0 + 0.3e-3])
        record.robot_rows.append([stamp, 1.0, t0 + 0.85e-3, t0 + 1.3e-3, 0.0])
        record.controller_rows.append([stamp, t0 + 0.4e-3, t0 + 0.5e-3, t0 + 0.7e-3, t0 + 0.75e-3])
    result = summarize(record, 500.0, wall=n * 1e-3)
    expected = {
        "step": 0.2e-3,
        "publish": 0.1e-3,
        "inputs": 0.3e-3,
        "compute": 0.2e-3,
        "controller_publish": 0.05e-3,
        "back": 0.1e-3,
        "next_step": 0.15e-3,
        "total": 0.65e-3,
    }
    for key, value in expected.items():
        # 1e-9 s: differences of instants near 100 s in float64 (2e-14 s), far below that.
        assert result[f"{key}_median"] == pytest.approx(value, abs=1e-9), key
        assert result[f"{key}_mean"] == pytest.approx(value, abs=1e-9), key
    cycle = sum(result[f"{k}_mean"] for k in expected if k not in ("publish", "total"))
    assert cycle == pytest.approx(1.0 / result["cycles_wall"], abs=1e-9)
    assert result["rtf"] == pytest.approx(2.0, rel=1e-9)


def test_command_to_next_step_of_a_loop_one_sample_ahead():
    # A synthetic lockstep loop with command_delay of one period: sample k + 1's step starts
    # 0.1 ms after sample k is published (the simulator does not wait for command k), and
    # sample k + 2's step 0.15 ms after command k arrived. "command to next step" pairs each
    # command with the step it lets start, two samples later: 0.15 ms, not the negative gap
    # to the step already running.
    from wbm_bringup.ros.benchmark_bringup import ProbeRecord, summarize

    record = ProbeRecord()
    n = 200
    cycle = 0.5e-3
    for k in range(n):
        t0 = 100.0 + cycle * k
        stamp = 2_000_000 * (k + 1)
        record.robot_rows.append([stamp, 0.0, t0, t0 + 0.2e-3, t0 + 0.3e-3])
        # Command k arrives 0.15 ms before sample k + 2's step starts (at t0 + 2 cycles).
        record.robot_rows.append([stamp, 1.0, t0 + 2 * cycle - 0.15e-3, 0.0, 0.0])
        record.controller_rows.append([stamp, t0 + 0.4e-3, t0 + 0.5e-3, t0 + 0.7e-3, t0 + 0.75e-3])
    result = summarize(record, 500.0, wall=n * cycle, lead=1)
    assert result["next_step_median"] == pytest.approx(0.15e-3, abs=1e-9)
    assert result["next_step_p99"] == pytest.approx(0.15e-3, abs=1e-9)
    assert result["total_median"] == pytest.approx(2 * cycle - 0.15e-3 - 0.2e-3, abs=1e-9)
    assert result["rtf"] == pytest.approx(4.0, rel=1e-9)  # 2 ms of robot time per 0.5 ms
    # Without the lead the same rows pair each command with the step already under way.
    assert summarize(record, 500.0, wall=n * cycle)["next_step_median"] < 0.0


@pytest.mark.parametrize("kind", ["script", "recorder", "waitset"])
def test_every_probe_kind_counts_every_message_while_recording(kind):
    # The probe's figures (probe js/s, tf/s) are counts of arrivals: each kind must see every
    # message sent while recording (reliable, depth 1000, one process: none is lost) and none
    # sent before. Reference: the counts sent.
    import threading
    import time

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from wbm_bringup.ros.benchmark_bringup import ProbeRecord, _probe

    context = rclpy.Context()
    rclpy.init(context=context)
    record = ProbeRecord()
    node, inputs = _probe(context, record, kind)
    assert (inputs is not None) == (kind == "waitset")
    sender = rclpy.create_node("probe_test_sender", context=context)
    reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    joints = sender.create_publisher(JointState, "joint_states", reliable)
    tf = sender.create_publisher(TFMessage, "tf", reliable)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    if inputs is not None:
        inputs.start()
    try:
        deadline = time.monotonic() + 10.0
        while joints.get_subscription_count() < 1 or tf.get_subscription_count() < 1:
            assert time.monotonic() < deadline, "the probe did not subscribe"
            time.sleep(0.05)
        joints.publish(JointState(name=["a"], position=[0.0]))  # before recording: not counted
        time.sleep(0.3)
        record.recording = True
        for k in range(40):
            joints.publish(JointState(name=["a"], position=[float(k)]))
            if k % 4 == 0:
                tf.publish(TFMessage())
            time.sleep(0.002)
        deadline = time.monotonic() + 5.0
        while (len(record.joint_states), len(record.tf)) != (40, 10):
            assert time.monotonic() < deadline, (len(record.joint_states), len(record.tf))
            time.sleep(0.02)
        time.sleep(0.2)
        assert (len(record.joint_states), len(record.tf)) == (40, 10)
    finally:
        if inputs is not None:
            inputs.stop()
        executor.shutdown(timeout_sec=5.0)
        spinner.join(timeout=5.0)
        rclpy.try_shutdown(context=context)
