"""CPU affinity of a loop's process (wbm_description.cpu_affinity), read back from the kernel.

The forms a parameter file or launch argument gives are checked against the tuples they stand
for; negative CPU numbers against Python's own indexing of the sorted CPU set (the documented
meaning: -1 the last). Setting the affinity runs in a child process (it must not leak into the
test runner): a few threads are started, then :func:`set_cpu_affinity`; the child reports every
thread's CPU set as the kernel gives it (``os.sched_getaffinity`` per thread id), and that of a
thread started afterwards (inherited). A CPU the process may not use leaves every thread's set
as it was, with the reason. The settings of both loop nodes reject a malformed value naming the
key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from wbm_control.controller_settings import ControllerSettings
from wbm_description.cpu_affinity import (
    AffinityOutcome,
    CpuAffinityError,
    cpu_list,
    resolve_cpus,
    set_cpu_affinity,
)
from wbm_description.exceptions import ConfigError
from wbm_dynamics.interface_settings import RobotInterfaceSettings

CHILD = r"""
import json, os, sys, threading
from wbm_description.cpu_affinity import set_cpu_affinity
from wbm_description.realtime_priority import thread_ids
before = sorted(os.sched_getaffinity(0))
stop = threading.Event()
workers = [threading.Thread(target=stop.wait) for _ in range(3)]
for worker in workers:
    worker.start()
outcome = set_cpu_affinity(json.loads(sys.argv[1]))
later = threading.Thread(target=stop.wait)  # started by the main thread, after the call
later.start()
sets = {str(tid): sorted(os.sched_getaffinity(tid)) for tid in thread_ids()}
stop.set()
print(json.dumps({
    "before": before, "threads": outcome.threads, "error": outcome.error,
    "applied": outcome.applied, "cpus": list(outcome.cpus), "line": outcome.describe(),
    "sets": sets, "later": str(later.native_id),
}))
"""


def run_child(cpus: list[int]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(cpus)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (-1, (-1,)),
        (3, (3,)),
        ([0, 1], (0, 1)),
        ((-2,), (-2,)),
        ("1", (1,)),
        ("-2, 3", (-2, 3)),
        ("0 2", (0, 2)),
        ("any", ()),
        (" ANY ", ()),
        ("", ()),
        ([], ()),
    ],
)
def test_cpu_list_forms(value, expected):
    assert cpu_list(value) == expected


@pytest.mark.parametrize("value", [True, 1.0, "1.5", "first", [0, "1"], [0, 0], None, {"a": 1}])
def test_cpu_list_rejects(value):
    with pytest.raises(CpuAffinityError):
        cpu_list(value)


@pytest.mark.parametrize("allowed", [[0, 1], [3], [0, 2, 5, 7]])
def test_negative_cpus_index_the_sorted_set_as_python_does(allowed):
    shuffled = list(reversed(allowed))
    for index in range(-len(allowed), 0):
        assert resolve_cpus([index], shuffled) == {allowed[index]}
    for cpu in allowed:
        assert resolve_cpus([cpu], shuffled) == {cpu}
    assert resolve_cpus([-1, allowed[-1]], shuffled) == {allowed[-1]}


def test_resolve_names_what_is_missing():
    with pytest.raises(CpuAffinityError, match=r"CPU -3 .* 2 CPU\(s\) .* \[0, 1\]"):
        resolve_cpus([-3], [0, 1])
    with pytest.raises(CpuAffinityError, match=r"CPU 4 is not among .* \[0, 1\]"):
        resolve_cpus([4], [1, 0])


def test_nothing_asked_changes_nothing():
    outcome = set_cpu_affinity(())
    assert outcome == AffinityOutcome(())
    assert not outcome.applied
    assert "any CPU" in outcome.describe()


def test_every_thread_and_a_later_one_on_the_last_cpu():
    result = run_child([-1])
    last = result["before"][-1]
    assert result["applied"], result["line"]
    assert result["cpus"] == [last]
    # every thread there was at the call (main, the three workers, any a library started)
    assert result["threads"] == len(result["sets"]) - 1 >= 4
    assert set(result["sets"]) >= {result["later"]}
    assert all(cpus == [last] for cpus in result["sets"].values()), result["sets"]
    assert f"on CPU(s) [{last}]" in result["line"]


def test_cpus_by_number():
    allowed = sorted(os.sched_getaffinity(0))
    result = run_child(allowed[:2])
    assert result["applied"], result["line"]
    assert all(cpus == allowed[:2] for cpus in result["sets"].values())


def test_a_cpu_that_is_not_there_keeps_every_thread_as_it_was():
    allowed = sorted(os.sched_getaffinity(0))
    result = run_child([-(len(allowed) + 1)])
    assert not result["applied"]
    assert result["threads"] == 0
    assert "does not exist among" in result["error"]
    assert "not applied, any CPU kept" in result["line"]
    assert all(cpus == result["before"] for cpus in result["sets"].values())


@pytest.mark.parametrize("settings", [RobotInterfaceSettings, ControllerSettings])
def test_settings_read_the_forms_and_name_the_key(settings):
    assert settings.from_mapping({}).cpu_affinity == ()
    assert settings.from_mapping({"cpu_affinity": -1}).cpu_affinity == (-1,)
    assert settings.from_mapping({"cpu_affinity": [0, 1]}).cpu_affinity == (0, 1)
    assert settings.from_mapping({"cpu_affinity": "any"}).cpu_affinity == ()
    with pytest.raises(ConfigError, match=r"cpu_affinity.*list of CPU numbers") as error:
        settings.from_mapping({"cpu_affinity": "fast"}, source="robot.yaml")
    assert "robot.yaml" in str(error.value)
