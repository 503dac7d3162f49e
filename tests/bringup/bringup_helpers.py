"""Helpers of the end-to-end tests: `wbm launch` as a process, and an rclpy probe."""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import rclpy
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "launch"


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


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

    def wait_for_output(self, pattern: str, timeout: float, start: int = 0) -> re.Match:
        """The first match of ``pattern`` in the output from character ``start`` on."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.output[start:])
            if match:
                return match
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} within {timeout} s in:\n{self.output[-4000:]}")

    def child_pids(self) -> dict[str, int]:
        """The processes `wbm launch` started: label -> pid."""
        return {m[0]: int(m[1]) for m in re.findall(r"started (\S+) \[pid (\d+)\]", self.output)}

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30.0) -> int:
        """Send ``sig`` (Ctrl-C by default) and wait; kill everything left on timeout."""
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"did not stop within {timeout} s:\n{self.output[-4000:]}"
            ) from None
        finally:
            self._reader.join(timeout=2.0)

    def kill(self) -> None:
        """Kill the whole session and the sessions of the processes it started (clean-up after
        a failure): `wbm launch` starts each node in a session of its own, so killing the
        launcher alone left its nodes running, orphaned, for good (a lockstep pair keeps a core
        busy)."""
        for pid in self.child_pids().values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()


def wbm_launch(file: str, *arguments: str) -> Process:
    """`wbm launch launch/<file> arguments...` as a process."""
    return Process(
        [sys.executable, "-m", "wbm_bringup.cli", "launch", str(LAUNCH / file), *arguments]
    )


class Probe:
    """An rclpy node following /clock and the true base pose, with its own context."""

    def __init__(self, namespace: str = ""):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("e2e_probe", namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.sim_time = 0.0
        self.advanced_at = math.nan  # system time [s] at the first /clock after t = 0
        self.heights: list[tuple[float, float]] = []
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos)
        self.node.create_subscription(Odometry, "ground_truth/odom", self._on_odom, qos)

    def _on_clock(self, message: Clock) -> None:
        self.sim_time = message.clock.sec + 1e-9 * message.clock.nanosec
        if self.sim_time > 0.0 and math.isnan(self.advanced_at):
            self.advanced_at = time.time()

    def _on_odom(self, message: Odometry) -> None:
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        self.heights.append((stamp, message.pose.pose.position.z))

    def spin_until(self, predicate, timeout: float, what: str, process: Process) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, (
                f"no {what} within {timeout} s:\n" + (process.output[-4000:])
            )
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)
