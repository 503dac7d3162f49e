"""Real-time scheduling of a loop's process: SCHED_FIFO on every thread, where permitted.

A node of the closed loop (the controller, the robot interface) shares two cores with the state
publisher, a viewer, a recorder and the DDS threads of all of them. Under Linux's default
scheduler (SCHED_OTHER) a message that wakes the loop waits behind whatever else runs; with the
loop's threads in SCHED_FIFO they run as soon as they are woken, before every SCHED_OTHER thread,
as ros2_control's controller manager does with its ``thread_priority`` (1 to 99, higher first).
The other processes then get what the loop leaves: an extra subscriber to 500 Hz joint_states
hears fewer of them. The kernel keeps 5 % of each second for SCHED_OTHER threads
(``/proc/sys/kernel/sched_rt_runtime_us``), so a loop that cannot keep up does not lock the
machine.

Every thread of the process at the call gets the policy (the process's DDS and executor
threads included: they deliver the loop's messages); threads created later by one of them
inherit it. Setting it needs CAP_SYS_NICE (root) or an ``rtprio`` limit at least the priority
(``ulimit -r``, ``/etc/security/limits.conf``); without them the process keeps running with
normal scheduling and the caller is told why.

Linux only (``os.sched_setscheduler``); no rclpy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: The range of SCHED_FIFO priorities on Linux; 0 means "normal scheduling, nothing changed".
MAX_PRIORITY = 99


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

    @property
    def applied(self) -> bool:
        """Whether SCHED_FIFO was asked for and set."""
        return self.priority > 0 and not self.error

    def describe(self) -> str:
        """One line for the node's log."""
        if self.priority == 0:
            return "realtime_priority 0: normal scheduling (SCHED_OTHER)"
        if self.applied:
            return f"realtime_priority {self.priority}: SCHED_FIFO on {self.threads} threads"
        return (
            f"realtime_priority {self.priority} not applied, normal scheduling kept: "
            f"{self.error}"
        )


def thread_ids(pid: int | None = None) -> list[int]:
    """The ids of the threads of process ``pid`` (this one by default), from /proc."""
    task = Path("/proc") / (str(pid) if pid is not None else "self") / "task"
    return sorted(int(entry.name) for entry in task.iterdir())


def set_realtime_priority(priority: int) -> RealtimeOutcome:
    """Put every thread of this process in SCHED_FIFO at ``priority`` (0: change nothing).

    Raises:
        ValueError: ``priority`` outside 0..99.
    """
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ValueError(f"realtime_priority: expected an integer 0..99, got {priority!r}")
    if not 0 <= priority <= MAX_PRIORITY:
        raise ValueError(f"realtime_priority: expected an integer 0..99, got {priority!r}")
    if priority == 0:
        return RealtimeOutcome(0, 0)
    if not hasattr(os, "sched_setscheduler"):
        return RealtimeOutcome(priority, 0, "this system has no SCHED_FIFO (Linux only)")
    parameter = os.sched_param(priority)
    done = 0
    for tid in thread_ids():
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
            )
        done += 1
    return RealtimeOutcome(priority, done)


def _rtprio_limit() -> str:
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_RTPRIO)
    except (ImportError, AttributeError, OSError):
        return "unknown"
    return "unlimited" if soft == resource.RLIM_INFINITY else str(soft)


__all__ = ["MAX_PRIORITY", "RealtimeOutcome", "set_realtime_priority", "thread_ids"]
