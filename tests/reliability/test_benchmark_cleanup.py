"""``wbm_benchmark_bringup`` killed from outside takes its nodes with it.

Before, its launch runner's nodes (each in a session of its own) outlived a SIGTERM of the
benchmark: robot interface, controller and state publisher went on running. Here the benchmark
is started with a lockstep row, SIGTERMed once its three nodes run, and none of them may be
alive 15 s later (the runner's grace: 5 s after SIGINT, 5 s after SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from reliability_helpers import Process

from tests.bringup.bringup_helpers import alive

pytestmark = [pytest.mark.process]

NODES = 3  # robot interface, controller, state publisher


def children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def test_sigterm_of_the_bringup_benchmark_ends_its_three_nodes():
    benchmark = Process(
        ["wbm_benchmark_bringup", "--rows", "lockstep-500", "--warmup", "1", "--seconds", "120"]
    )
    nodes: list[int] = []
    try:
        deadline = time.monotonic() + 60.0
        while len(nodes := children(benchmark.popen.pid)) < NODES:
            assert benchmark.popen.poll() is None, benchmark.output[-3000:]
            assert time.monotonic() < deadline, f"{len(nodes)} nodes started"
            time.sleep(0.2)
        time.sleep(2.0)  # the nodes are up and running
        assert all(alive(pid) for pid in nodes)
        os.kill(benchmark.popen.pid, signal.SIGTERM)
        assert benchmark.popen.wait(timeout=30.0) == 128 + signal.SIGTERM, benchmark.output
        deadline = time.monotonic() + 15.0
        while any(alive(pid) for pid in nodes) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = [pid for pid in nodes if alive(pid)]
        assert not survivors, f"nodes still running after the benchmark ended: {survivors}"
    finally:
        for pid in nodes:
            if alive(pid):
                os.killpg(pid, signal.SIGKILL)
        benchmark.stop(signal.SIGKILL)
