"""Helpers of the reliability tests: processes with their output, a CPU load, an rclpy probe."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Trigger

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "launch"
CONFIG = ROOT / "config" / "icub"

#: What a traceback or an unhandled callback error looks like in a node's output.
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Exception in '|FATAL")


class Process:
    """A command run in its own session, its output collected in the background."""

    def __init__(self, command: list[str]):
        self.command = command
        self.popen = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.popen.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for_output(self, pattern: str, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.output)
            if match:
                return match
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} within {timeout} s in:\n{self.output[-4000:]}")

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30.0) -> int:
        """Send ``sig`` (Ctrl-C by default) and wait; kill the session left on timeout."""
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()
            raise AssertionError(
                f"did not stop within {timeout} s:\n{self.output[-4000:]}"
            ) from None
        finally:
            self._reader.join(timeout=2.0)

    def kill(self) -> None:
        """Kill the whole session (clean-up after a failure)."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()


def wbm_launch(file: str, *arguments: str) -> Process:
    """`wbm launch launch/<file> arguments...` as a process."""
    return Process(
        [sys.executable, "-m", "wbm_bringup.cli", "launch", str(LAUNCH / file), *arguments]
    )


def assert_no_traceback(output: str) -> None:
    match = TRACEBACK.search(output)
    assert match is None, f"{match.group(0)!r} in the output:\n{output[-5000:]}"


@contextlib.contextmanager
def cpu_load() -> Iterator[subprocess.Popen]:
    """A second process spinning one core (``while True: pass``) for the duration."""
    load = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield load
    finally:
        load.kill()
        load.wait()


class Probe:
    """An rclpy node following /clock, the true base pose and the diagnostics."""

    def __init__(self, name: str = "reliability_probe"):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.sim_time = 0.0
        self.clock_seen = False
        self.poses: list[tuple[float, float, float, float]] = []  # (t, x, y, z)
        self.diagnostics: list[DiagnosticArray] = []
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos)
        self.node.create_subscription(Odometry, "ground_truth/odom", self._on_odom, qos)
        self.node.create_subscription(DiagnosticArray, "diagnostics", self.diagnostics.append, qos)

    def _on_clock(self, message: Clock) -> None:
        self.sim_time = message.clock.sec + 1e-9 * message.clock.nanosec
        self.clock_seen = True

    def _on_odom(self, message: Odometry) -> None:
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        p = message.pose.pose.position
        self.poses.append((stamp, p.x, p.y, p.z))

    def spin_until(self, predicate, timeout: float, what: str, process: Process) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, (
                f"no {what} within {timeout} s:\n" + process.output[-4000:]
            )
            assert process.popen.poll() is None, (
                f"ended while waiting for {what}:\n" + (process.output[-4000:])
            )
            self.executor.spin_once(timeout_sec=0.05)

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)

    def call_trigger(self, service: str, timeout: float = 20.0) -> Trigger.Response:
        client = self.node.create_client(Trigger, service)
        assert client.wait_for_service(timeout_sec=timeout), f"no {service} service"
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, f"{service} did not answer"
            self.executor.spin_once(timeout_sec=0.05)
        return future.result()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)
