"""wbm_benchmark_bringup's rows say the scheduling their launch had (benchmark_bringup.row_name).

sim.launch.yaml gives the loop SCHED_FIFO in realtime pacing, and in lockstep only with
``lockstep_priority`` loop (hand-over and receive threads) or true (every thread): a lockstep row
without it ran with normal scheduling, whatever ``realtime_priority`` was, and is named so.
"""

from __future__ import annotations

import pytest

from wbm_bringup.ros.benchmark_bringup import row_name


@pytest.mark.parametrize(
    ("row", "priority", "lockstep", "name"),
    [
        ("realtime-500", 50, None, "realtime-500-fifo50"),
        ("realtime-1000", 0, None, "realtime-1000-normal"),
        ("realtime-500", 50, "loop", "realtime-500-fifo50"),  # lockstep_priority: lockstep only
        ("lockstep-500", 50, None, "lockstep-500-normal"),  # the launch's default: false
        ("lockstep-500", 50, "false", "lockstep-500-normal"),
        ("lockstep-500", 50, "loop", "lockstep-500-fifo50-loop"),
        ("lockstep-1000", 30, "true", "lockstep-1000-fifo30-all"),
        ("lockstep-500", 0, "loop", "lockstep-500-normal"),  # no priority: nothing in FIFO
    ],
)
def test_row_names(row, priority, lockstep, name):
    assert row_name(row, priority, lockstep) == name
