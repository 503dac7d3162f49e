"""Real-time scheduling of a loop's process: SCHED_FIFO on its threads, where permitted.

A node of the closed loop (the controller, the robot interface) shares two cores with the state
publisher, a viewer, a recorder and the DDS threads of all of them. Under Linux's default
scheduler (SCHED_OTHER) a message that wakes the loop waits behind whatever else runs; with the
loop's threads in SCHED_FIFO they run as soon as they are woken, before every SCHED_OTHER thread,
as ros2_control's controller manager does with its ``thread_priority`` (1 to 99, higher first).
The other processes then get what the loop leaves: an extra subscriber to 500 Hz joint_states
hears fewer of them. The kernel keeps 5 % of each second for SCHED_OTHER threads
(``/proc/sys/kernel/sched_rt_runtime_us``), so a loop that cannot keep up does not lock the
machine.

Scope (:data:`THREAD_SCOPES`): ``"all"``, every thread of the process at the call gets the policy
(the process's DDS and executor threads included: they deliver the loop's messages); threads
created later by one of them inherit it. ``"loop"``: only the threads on the loop's path, the
node's own hand-over thread (the one that takes the loop's messages, computes and publishes) and
the middleware's receive threads (:func:`receive_thread_ids`: Fast DDS's transport receivers,
which deliver those messages); the executor, the timers, the middleware's event and discovery
threads and everything else keep normal scheduling. In lockstep the loop never waits for a clock,
only for the other side of the loop: its two hand-over threads take turns, so in ``"loop"`` scope
the loop keeps at most about one core in SCHED_FIFO and the other processes (a viewer, a
recorder, a script) keep the rest, where ``"all"`` lets the loop's processes take both (the
executor's and every DDS thread of both). Setting it needs CAP_SYS_NICE (root) or an ``rtprio``
limit at least the priority (``ulimit -r``, ``/etc/security/limits.conf``); without them the
process keeps running with normal scheduling and the caller is told why.

Linux only (``os.sched_setscheduler``); no rclpy.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The range of SCHED_FIFO priorities on Linux; 0 means "normal scheduling, nothing changed".
MAX_PRIORITY = 99

THREAD_SCOPES = ("all", "loop")
"""Which threads :func:`set_realtime_priority` sets: every thread, or the loop's path only."""

RECEIVE_THREAD_PREFIXES = ("dds.shm.", "dds.udp.", "dds.tcp.")
"""Names (``/proc/<pid>/task/<tid>/comm``) of the middleware's receive threads: Fast DDS names
one per transport port it listens on, ``dds.shm.<port>``, ``dds.udp.<port>``, ``dds.tcp.<port>``
(its shared-memory watchdog, ``dds.shm.wdog``, is not one). Another middleware's receive threads
are not recognized: in ``"loop"`` scope only the node's hand-over thread is then set."""

_NOT_RECEIVERS = ("dds.shm.wdog",)


@dataclass(frozen=True)
class RealtimeOutcome:
    """What :func:`set_realtime_priority` did.

    Attributes:
        priority: The SCHED_FIFO priority asked for (0: none asked).
        threads: Threads of the process set to it.
        error: Why it was not applied ("" when applied or not asked).
    """

    priority: int
    threads: int
    error: str = ""
    scope: str = "all"

    @property
    def applied(self) -> bool:
        """Whether SCHED_FIFO was asked for and set."""
        return self.priority > 0 and not self.error

    def describe(self) -> str:
        """One line for the node's log."""
        if self.priority == 0:
            return "realtime_priority 0: normal scheduling (SCHED_OTHER)"
        if self.applied:
            line = f"realtime_priority {self.priority}: SCHED_FIFO on {self.threads} threads"
            if self.scope == "loop":
                line += " (the loop's hand-over and receive threads; the others normal)"
            return line
        return (
            f"realtime_priority {self.priority} not applied, normal scheduling kept: {self.error}"
        )


def thread_ids(pid: int | None = None) -> list[int]:
    """The ids of the threads of process ``pid`` (this one by default), from /proc."""
    task = Path("/proc") / (str(pid) if pid is not None else "self") / "task"
    return sorted(int(entry.name) for entry in task.iterdir())


def thread_name(tid: int) -> str:
    """The name of thread ``tid`` of this process ("" when it has ended)."""
    try:
        return (Path("/proc/self/task") / str(tid) / "comm").read_text().strip()
    except OSError:
        return ""


def receive_thread_ids() -> list[int]:
    """The ids of this process's middleware receive threads (:data:`RECEIVE_THREAD_PREFIXES`)."""
    found = []
    for tid in thread_ids():
        name = thread_name(tid)
        if name.startswith(RECEIVE_THREAD_PREFIXES) and name not in _NOT_RECEIVERS:
            found.append(tid)
    return found


def set_realtime_priority(
    priority: int, scope: str = "all", loop_threads: Iterable[int] = ()
) -> RealtimeOutcome:
    """Put this process's threads in SCHED_FIFO at ``priority`` (0: change nothing).

    ``scope``: ``"all"``, every thread; ``"loop"``, the threads ``loop_threads`` (native ids,
    :attr:`threading.Thread.native_id`: the node's hand-over threads) and the middleware's
    receive threads (:func:`receive_thread_ids`). See the module docstring.

    Raises:
        ValueError: ``priority`` outside 0..99, or ``scope`` not one of :data:`THREAD_SCOPES`.
    """
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ValueError(f"realtime_priority: expected an integer 0..99, got {priority!r}")
    if not 0 <= priority <= MAX_PRIORITY:
        raise ValueError(f"realtime_priority: expected an integer 0..99, got {priority!r}")
    if scope not in THREAD_SCOPES:
        raise ValueError(
            f"realtime_threads: expected one of {', '.join(THREAD_SCOPES)}, got {scope!r}"
        )
    if priority == 0:
        return RealtimeOutcome(0, 0, scope=scope)
    if not hasattr(os, "sched_setscheduler"):
        return RealtimeOutcome(priority, 0, "this system has no SCHED_FIFO (Linux only)", scope)
    if scope == "all":
        targets = thread_ids()
    else:
        targets = sorted({*loop_threads, *receive_thread_ids()})
    parameter = os.sched_param(priority)
    done = 0
    for tid in targets:
        try:
            os.sched_setscheduler(tid, os.SCHED_FIFO, parameter)
        except ProcessLookupError:
            continue  # the thread ended meanwhile
        except PermissionError:
            return RealtimeOutcome(
                priority,
                done,
                f"SCHED_FIFO {priority} refused (needs CAP_SYS_NICE, e.g. root, or an rtprio "
                f"limit of at least {priority}: `ulimit -r` is "
                f"{_rtprio_limit()}; set it in /etc/security/limits.conf)",
                scope,
            )
        done += 1
    return RealtimeOutcome(priority, done, scope=scope)


def _rtprio_limit() -> str:
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_RTPRIO)
    except (ImportError, AttributeError, OSError):
        return "unknown"
    return "unlimited" if soft == resource.RLIM_INFINITY else str(soft)


__all__ = [
    "MAX_PRIORITY",
    "RECEIVE_THREAD_PREFIXES",
    "THREAD_SCOPES",
    "RealtimeOutcome",
    "receive_thread_ids",
    "set_realtime_priority",
    "thread_ids",
    "thread_name",
]
