"""CPU time a process used, from ``/proc`` (no ROS): what the benchmarks print per node."""

from __future__ import annotations

import os
from pathlib import Path


def process_cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process used so far [s], from ``/proc`` (NaN without it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


__all__ = ["process_cpu_seconds"]
