"""Settings of the recorder node (``wbm_recorder``), typed and validated (no ROS)."""

from __future__ import annotations

from dataclasses import dataclass

from wbm_description.settings import Settings, setting


@dataclass(frozen=True)
class RecorderSettings(Settings):
    """Parameters of the recorder."""

    output: str = setting("", doc="the bag directory to create (required; must not exist)")
    topics: tuple[str, ...] = setting((), doc="topics to record; empty records every topic")
    discovery_period: float = setting(
        0.5, gt=0.0, unit="s", doc="how often new topics are looked for (wall time)"
    )
    realtime_priority: int = setting(
        0,
        ge=0,
        le=99,
        doc="SCHED_FIFO priority of the node's threads (1-99), below the loop's: the recorder "
        "keeps its share of the cores when the loop runs in SCHED_FIFO; 0: normal scheduling",
    )
    batch_period: float = setting(
        0.05,
        gt=0.0,
        le=0.5,
        unit="s",
        doc="the recording thread wakes up at most once per period, then writes what is queued",
    )


__all__ = ["RecorderSettings"]
