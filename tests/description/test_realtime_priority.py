"""SCHED_FIFO for a loop's process (wbm_description.realtime_priority), read back from the kernel.

Each case runs in a child process (its scheduling must not leak into the test runner): a few
threads are started, then :func:`set_realtime_priority`; the child reports every thread's policy
and priority as the kernel gives them (``os.sched_getscheduler``/``sched_getparam`` per thread
id), and those of a thread started afterwards by a SCHED_FIFO thread (inherited). The refusal is
checked as an unprivileged user with no rtprio limit, which the kernel must refuse: the outcome
says why and the threads keep the normal policy. The machines this runs on run the suite as
root (CAP_SYS_NICE); elsewhere the privileged cases fail with that reason.

Scope ``"loop"``: the child names its threads as Fast DDS names its own (``dds.shm.<port>``,
``dds.udp.<port>``, ``dds.shm.wdog``, ``dds.ev.0``; through ``prctl(PR_SET_NAME)``, as Fast DDS
does) and hands one plain thread over as the loop's: exactly that thread and the two receive
threads must come back in SCHED_FIFO, every other thread (main, watchdog, event, executor-like
workers) in SCHED_OTHER.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from wbm_description.realtime_priority import RealtimeOutcome, set_realtime_priority

SCOPED_CHILD = r"""
import ctypes, json, os, sys, threading
from wbm_description.realtime_priority import set_realtime_priority, thread_ids, thread_name
libc = ctypes.CDLL(None)
stop = threading.Event()
named = {}
def worker(name):
    if name:
        libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME, as Fast DDS names its threads
    named[threading.get_native_id()] = name
    stop.wait()
names = ["dds.shm.7412", "dds.udp.7410", "dds.shm.wdog", "dds.ev.0", "", ""]
workers = [threading.Thread(target=worker, args=(name,)) for name in names]
for w in workers:
    w.start()
while len(named) < len(names):
    pass
loop = workers[-1].native_id  # a plain thread handed over as the loop's
outcome = set_realtime_priority(int(sys.argv[1]), sys.argv[2], [loop])
policies = {
    str(tid): [thread_name(tid), os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority]
    for tid in thread_ids()
}
stop.set()
print(json.dumps({
    "threads": outcome.threads, "applied": outcome.applied, "line": outcome.describe(),
    "policies": policies, "loop": str(loop),
}))
"""

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


def run_script(script: str, *arguments: str) -> dict:
    """The JSON report a child process running ``script`` with ``arguments`` printed."""
    result = subprocess.run(
        [sys.executable, "-c", script, *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def run_child(priority: int, drop: bool = False) -> dict:
    return run_script(CHILD, str(priority), "drop" if drop else "keep")


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


def run_scoped_child(priority: int, scope: str) -> dict:
    return run_script(SCOPED_CHILD, str(priority), scope)


def test_loop_scope_sets_the_hand_over_and_receive_threads_only():
    assert os.geteuid() == 0, "needs root (CAP_SYS_NICE), as on the project's machines"
    report = run_scoped_child(23, "loop")
    policies = report["policies"]
    fifo = {tid for tid, (_, policy, _) in policies.items() if policy == os.SCHED_FIFO}
    receiving = ("dds.shm.7412", "dds.udp.7410")
    receivers = {tid for tid, (name, _, _) in policies.items() if name in receiving}
    assert len(receivers) == 2, policies
    assert fifo == receivers | {report["loop"]}, policies
    assert {tuple(policies[tid][1:]) for tid in fifo} == {(os.SCHED_FIFO, 23)}
    others = [value for tid, value in policies.items() if tid not in fifo]
    # the main thread, the watchdog, the event thread and the other plain thread at least
    assert len(others) >= 4, policies
    assert {(policy, priority) for _, policy, priority in others} == {(os.SCHED_OTHER, 0)}
    assert {"dds.shm.wdog", "dds.ev.0"} <= {name for name, _, _ in others}
    assert report["threads"] == 3 and report["applied"]
    assert report["line"] == (
        "realtime_priority 23: SCHED_FIFO on 3 threads (the loop's hand-over and receive "
        "threads; the others normal)"
    )


def test_all_scope_with_named_threads_sets_every_thread():
    assert os.geteuid() == 0, "needs root (CAP_SYS_NICE), as on the project's machines"
    report = run_scoped_child(23, "all")
    assert {tuple(value[1:]) for value in report["policies"].values()} == {(os.SCHED_FIFO, 23)}
    assert report["threads"] == len(report["policies"]) >= 7


def test_an_unknown_scope_is_refused():
    with pytest.raises(ValueError, match="realtime_threads: expected one of all, loop, got 'so"):
        set_realtime_priority(10, "some")
