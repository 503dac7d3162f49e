"""SCHED_FIFO for a loop's process (wbm_description.realtime_priority), read back from the kernel.

Each case runs in a child process (its scheduling must not leak into the test runner): a few
threads are started, then :func:`set_realtime_priority`; the child reports every thread's policy
and priority as the kernel gives them (``os.sched_getscheduler``/``sched_getparam`` per thread
id), and those of a thread started afterwards by a SCHED_FIFO thread (inherited). The refusal is
checked as an unprivileged user with no rtprio limit, which the kernel must refuse: the outcome
says why and the threads keep the normal policy. The machines this runs on run the suite as
root (CAP_SYS_NICE); elsewhere the privileged cases fail with that reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from wbm_description.realtime_priority import RealtimeOutcome, set_realtime_priority

CHILD = r"""
import json, os, resource, sys, threading
from wbm_description.realtime_priority import set_realtime_priority, thread_ids
if sys.argv[2] == "drop":  # after the imports: root's interpreter files may be closed to others
    resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))
    os.setgid(65534)
    os.setuid(65534)
stop = threading.Event()
workers = [threading.Thread(target=stop.wait) for _ in range(3)]
for worker in workers:
    worker.start()
outcome = set_realtime_priority(int(sys.argv[1]))
later = threading.Thread(target=stop.wait)  # started by the main thread, after the call
later.start()
policies = {
    str(tid): [os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority]
    for tid in thread_ids()
}
stop.set()
print(json.dumps({
    "threads": outcome.threads, "error": outcome.error, "applied": outcome.applied,
    "line": outcome.describe(), "policies": policies, "later": str(later.native_id),
}))
"""


def run_child(priority: int, drop: bool = False) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(priority), "drop" if drop else "keep"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_every_thread_gets_sched_fifo_at_the_priority_and_new_threads_inherit_it():
    assert os.geteuid() == 0, "needs root (CAP_SYS_NICE), as on the project's machines"
    report = run_child(17)
    policies = report["policies"]
    assert report["applied"] and report["error"] == ""
    # Every thread there was (the main thread, the three workers and any the imports started,
    # e.g. a BLAS pool) was set; the thread started afterwards inherited it.
    assert report["later"] in policies
    assert report["threads"] == len(policies) - 1 >= 4, report
    assert set(map(tuple, policies.values())) == {(os.SCHED_FIFO, 17)}, policies
    assert report["line"] == f"realtime_priority 17: SCHED_FIFO on {report['threads']} threads"


def test_priority_zero_changes_nothing():
    report = run_child(0)
    assert not report["applied"] and report["threads"] == 0 and report["error"] == ""
    assert set(map(tuple, report["policies"].values())) == {(os.SCHED_OTHER, 0)}
    assert report["line"] == "realtime_priority 0: normal scheduling (SCHED_OTHER)"


def test_refused_without_privileges_says_why_and_keeps_normal_scheduling():
    assert os.geteuid() == 0, "needs root to drop to an unprivileged user"
    report = run_child(30, drop=True)
    assert not report["applied"] and report["threads"] == 0
    assert "CAP_SYS_NICE" in report["error"] and "`ulimit -r` is 0" in report["error"]
    assert report["line"].startswith("realtime_priority 30 not applied, normal scheduling kept")
    assert set(map(tuple, report["policies"].values())) == {(os.SCHED_OTHER, 0)}


@pytest.mark.parametrize("bad", [-1, 100, 1.5, "50", True])
def test_a_priority_outside_1_to_99_is_refused(bad):
    with pytest.raises(ValueError, match="realtime_priority: expected an integer 0..99"):
        set_realtime_priority(bad)


def test_outcome_lines():
    assert not RealtimeOutcome(5, 0, "no").applied
    assert RealtimeOutcome(5, 3).describe() == "realtime_priority 5: SCHED_FIFO on 3 threads"
