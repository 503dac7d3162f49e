"""Which CPUs a loop node's threads run on (``cpu_affinity``, as in ros2_control).

On the 2-core virtual machine we measure on, waking a thread on the other CPU costs about 25-30 us
of CPU and latency (an idle virtual CPU halts; waking it takes an inter-processor interrupt and
a return to the guest: a pipe ping-pong between two processes took 46-68 us round trip on two
CPUs, 6 us on one), and a control cycle is a chain of such hand-overs (the robot side publishes,
the controller's middleware thread and input thread wake, the command goes back). Without
affinity the scheduler moves the robot interface and the controller between the cores at every
wake-up, so one hand-over in two crosses CPUs and each side's caches go cold. With
``cpu_affinity`` each loop node keeps a CPU of its own (the launch files: the robot interface
the second-to-last, the controller the last); the watchers (state publisher, viewer, recorder,
RViz) stay free to run on any. ``wbm_benchmark_bringup --cpu-affinity`` measures both.

A node's ``cpu_affinity`` lists CPU numbers; a negative one counts from the end of the CPUs the
process may use (its ``sched_getaffinity`` set at start: -1 is the last, -2 the one before), so
the same launch file fits machines with any number of CPUs. Every thread of the process at the
call gets the set (the node's loop, input, executor and middleware threads); threads created
later inherit it from the thread that creates them. A CPU the process may not use (a machine
with fewer CPUs, a container's cpuset) leaves the affinity unchanged, and the caller is told why.

Linux only (``os.sched_setaffinity``); no rclpy.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wbm_description.realtime_priority import thread_ids
from wbm_description.settings import Reader, setting

ANY = "any"
"""The string form of no affinity (a launch argument cannot be an empty list)."""


class CpuAffinityError(ValueError):
    """A ``cpu_affinity`` that is not a list of CPU numbers, or names CPUs that are not there.

    Attributes:
        expected: What was expected, for a configuration error's message.
    """

    def __init__(self, expected: str, got: object = None):
        super().__init__(expected if got is None else f"expected {expected}, got {got!r}")
        self.expected = expected


def cpu_list(value: object) -> tuple[int, ...]:
    """``value`` as a tuple of CPU numbers (negative: from the end), checked for form only.

    Accepts what a parameter file or launch argument gives: an integer (one CPU), a list of
    integers, or a string of integers separated by commas or spaces (:data:`ANY`, "" or [] for
    none: any CPU).

    Raises:
        CpuAffinityError: Anything else, or a CPU listed twice.
    """
    expected = "a list of CPU numbers (integers; negative: from the end)"
    if isinstance(value, bool):
        raise CpuAffinityError(expected, value)
    if isinstance(value, int):
        items: list[object] = [value]
    elif isinstance(value, str) and value.strip().lower() == ANY:
        items = []
    elif isinstance(value, str):
        try:
            items = [int(part) for part in value.replace(",", " ").split()]
        except ValueError:
            raise CpuAffinityError(expected, value) from None
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        raise CpuAffinityError(expected, value)
    if not all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        raise CpuAffinityError(expected, value)
    cpus = tuple(int(item) for item in items)  # type: ignore[call-overload]
    if len(set(cpus)) != len(cpus):
        raise CpuAffinityError("CPU numbers listed once each", list(cpus))
    return cpus


def parse_cpu_affinity(value: object, key: str, reader: Reader) -> tuple[int, ...]:
    """The settings reader's form of ``cpu_affinity`` (:func:`cpu_list`), failing through it."""
    try:
        return cpu_list(value)
    except CpuAffinityError as error:
        raise reader.fail(key, error.expected, value) from None


def cpu_affinity_setting() -> tuple[int, ...]:
    """The ``cpu_affinity`` field of a loop node's settings (default: none, any CPU)."""
    return setting(
        (),
        parse=parse_cpu_affinity,
        doc="CPUs the node's threads run on (as ros2_control's cpu_affinity); a negative number "
        "counts from the end of the CPUs the process may use (-1: the last); empty: any CPU",
    )


def resolve_cpus(cpus: Iterable[int], allowed: Iterable[int]) -> set[int]:
    """The CPU numbers ``cpus`` stand for among ``allowed`` (negative: from the end, sorted).

    Raises:
        CpuAffinityError: A CPU not in ``allowed``, or a negative index beyond its length.
    """
    available = sorted(allowed)
    out = set()
    for cpu in cpus:
        if cpu < 0:
            if -cpu > len(available):
                raise CpuAffinityError(
                    f"CPU {cpu} (counted from the end) does not exist among the "
                    f"{len(available)} CPU(s) this process may use, {available}"
                )
            out.add(available[cpu])
        elif cpu not in available:
            raise CpuAffinityError(
                f"CPU {cpu} is not among those this process may use, {available}"
            )
        else:
            out.add(cpu)
    return out


@dataclass(frozen=True)
class AffinityOutcome:
    """What :func:`set_cpu_affinity` did.

    Attributes:
        asked: The CPU numbers asked for (as given: negative from the end); () for none.
        cpus: The CPUs the threads now run on (sorted); () when unchanged.
        threads: Threads of the process set.
        error: Why it was not applied ("" when applied or not asked).
    """

    asked: tuple[int, ...]
    cpus: tuple[int, ...] = ()
    threads: int = 0
    error: str = ""

    @property
    def applied(self) -> bool:
        """Whether an affinity was asked for and set."""
        return bool(self.asked) and not self.error

    def describe(self) -> str:
        """One line for the node's log."""
        if not self.asked:
            return "cpu_affinity not set: the threads run on any CPU"
        if self.applied:
            cpus = list(self.cpus)
            return f"cpu_affinity {list(self.asked)}: {self.threads} threads on CPU(s) {cpus}"
        return f"cpu_affinity {list(self.asked)} not applied, any CPU kept: {self.error}"


def set_cpu_affinity(cpus: Sequence[int]) -> AffinityOutcome:
    """Run every thread of this process on ``cpus`` (negative: from the end; (): change nothing).

    Raises:
        CpuAffinityError: ``cpus`` is not a list of CPU numbers (:func:`cpu_list`).
    """
    asked = cpu_list(list(cpus))
    if not asked:
        return AffinityOutcome(())
    if not hasattr(os, "sched_setaffinity"):
        return AffinityOutcome(asked, error="this system has no sched_setaffinity (Linux only)")
    try:
        chosen = resolve_cpus(asked, os.sched_getaffinity(0))
    except CpuAffinityError as error:
        return AffinityOutcome(asked, error=str(error))
    done = 0
    for tid in thread_ids():
        try:
            os.sched_setaffinity(tid, chosen)
        except ProcessLookupError:
            continue  # the thread ended meanwhile
        except OSError as error:
            return AffinityOutcome(asked, tuple(sorted(chosen)), done, f"refused: {error}")
        done += 1
    return AffinityOutcome(asked, tuple(sorted(chosen)), done)


__all__ = [
    "ANY",
    "AffinityOutcome",
    "CpuAffinityError",
    "cpu_affinity_setting",
    "cpu_list",
    "parse_cpu_affinity",
    "resolve_cpus",
    "set_cpu_affinity",
]
