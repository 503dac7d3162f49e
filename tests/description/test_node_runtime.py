"""The shared node runtime: parameters declared from a settings class, read back validated."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest
import rclpy
from rclpy.parameter import Parameter

from wbm_description.exceptions import ConfigError
from wbm_description.ros.node_runtime import ThrottledLog, WbmNode, declare_settings
from wbm_description.settings import Settings, setting


@dataclass(frozen=True)
class Section(Settings):
    gain: float = setting(2.0, ge=0.0, unit="1/s", doc="a gain")


@dataclass(frozen=True)
class Example(Settings):
    rate: float = setting(500.0, gt=0.0, unit="Hz", doc="control rate")
    names: tuple[str, ...] = setting((), doc="names")
    section: Section = setting(default_factory=Section)
    tasks: dict[str, Section] = setting(default_factory=dict)


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.try_shutdown(context=ctx)


def make_node(context, overrides):
    return WbmNode(
        "runtime_test",
        context=context,
        parameter_overrides=[Parameter(name, value=value) for name, value in overrides.items()],
    )


def test_defaults_are_declared_with_descriptions(context):
    node = make_node(context, {})
    try:
        assert declare_settings(node, Example) == Example()
        described = node.describe_parameter("rate")
        assert described.description == "control rate [Hz] (> 0)"
        assert described.read_only
        assert node.get_parameter("section.gain").value == 2.0
    finally:
        node.destroy_node()


def test_overrides_with_named_sections_and_ints_for_floats(context):
    node = make_node(
        context,
        {"rate": 1000, "tasks.names": ["a"], "tasks.a.gain": 3, "names": ["x", "y"]},
    )
    try:
        settings = declare_settings(node, Example)
        assert settings.rate == 1000.0
        assert settings.names == ("x", "y")
        assert settings.tasks == {"a": Section(3.0)}
    finally:
        node.destroy_node()


@pytest.mark.parametrize(
    ("overrides", "key"),
    [({"rate": -1.0}, "rate"), ({"section.gian": 1.0}, "section.gian"), ({"rat": 1.0}, "rat")],
)
def test_bad_parameters_name_the_node_and_the_key(context, overrides, key):
    node = make_node(context, overrides)
    try:
        with pytest.raises(ConfigError) as caught:
            declare_settings(node, Example)
        assert caught.value.key == key
        assert "parameters of node '/runtime_test'" in str(caught.value)
    finally:
        node.destroy_node()


class _Logger:
    def __init__(self):
        self.lines = []

    def warning(self, text):
        self.lines.append(text)


def test_throttled_log_once_per_period_per_key():
    logger = _Logger()
    log = ThrottledLog(logger, period=60.0)
    for _ in range(5):
        log.warning("a", "first")
        log.warning("b", "second")
    assert logger.lines == ["first", "second"]


def test_sections_read_by_someone_else_are_excluded(context):
    node = make_node(context, {"rate": 20.0, "simulator.dt": 0.001, "section.gain": 1.0})
    try:
        settings = declare_settings(node, Example, exclude=["simulator"])
        assert settings.rate == 20.0 and settings.section.gain == 1.0
        assert declare_settings(node, Section, prefix="section.") == Section(1.0)
    finally:
        node.destroy_node()


def test_run_node_sets_the_gil_switch_interval_and_reports_a_refused_start(capsys):
    # The interval is the process's: set before the node is built, so also on a refused start.
    from wbm_description.ros.node_runtime import EXIT_STARTUP_ERROR, SWITCH_INTERVAL, run_node

    def refuse() -> WbmNode:
        raise ConfigError("robot.yaml", "rate", "a rate > 0 [Hz]", -1.0)

    before = sys.getswitchinterval()
    try:
        assert run_node(refuse, "wbm_test_node", []) == EXIT_STARTUP_ERROR
        # getswitchinterval returns the value the interpreter stored (microsecond resolution).
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL, abs=1e-6)
        assert SWITCH_INTERVAL == pytest.approx(5e-4)
    finally:
        sys.setswitchinterval(before)
    err = capsys.readouterr().err
    assert "wbm_test_node: error:" in err and "rate" in err


NODE_SHUT_DOWN_BELOW_RCLPY = """
import sys, threading, time
from wbm_description.ros.node_runtime import WbmNode, run_node

class Quiet(WbmNode):
    # No timer and no subscription: nothing ever wakes the executor's wait.
    def __init__(self):
        super().__init__("quiet_node")

    def start(self):
        def shut_down():
            time.sleep(0.3)
            with self.context.handle:  # rcl_shutdown, as a signal handler does it
                self.context.handle.shutdown()
        threading.Thread(target=shut_down, daemon=True).start()

started = time.monotonic()
code = run_node(Quiet, "wbm_quiet_node", [])
print(f"returned {code} after {time.monotonic() - started:.2f} s")
sys.exit(code)
"""


def test_run_node_ends_when_the_context_is_shut_down_beneath_a_waiting_executor():
    # Reference: rclpy's own behaviour, checked here first: an executor waiting without a
    # timeout is not woken when the rcl context is shut down beneath rclpy's Python
    # (Context.shutdown's callbacks are not run). run_node's wait is bounded
    # (SPIN_WAKE_PERIOD): the node ends within that period of the shutdown, not never (a
    # state publisher once hung this way on SIGTERM). 20 s: start-up on a loaded machine.
    import os
    import subprocess
    import threading
    import time

    from rclpy.executors import SingleThreadedExecutor

    from wbm_description.ros.node_runtime import SPIN_WAKE_PERIOD

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node("waiting", context=ctx)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    time.sleep(0.2)
    with ctx.handle:
        ctx.handle.shutdown()
    spinning.join(3 * SPIN_WAKE_PERIOD)
    stuck = spinning.is_alive()
    executor.wake()  # what would have ended it (Context.shutdown's callbacks do this)
    spinning.join(5.0)
    node.destroy_node()
    assert stuck, "rclpy's spin() now ends by itself: the reference changed"
    assert not spinning.is_alive()

    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    result = subprocess.run(
        [sys.executable, "-c", NODE_SHUT_DOWN_BELOW_RCLPY],
        capture_output=True,
        text=True,
        timeout=20.0,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    waited = float(result.stdout.split("after ")[1].split(" s")[0])
    assert waited < 10.0, result.stdout
