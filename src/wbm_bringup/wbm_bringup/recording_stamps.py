"""Log times of recorded messages: their receive time, or the sim time at their reception.

A recorder that takes its messages in batches (:mod:`wbm_bringup.ros.recording_thread`) cannot
read its clock in a callback per message, as ``ros2 bag record`` does: the time a message is
taken is not the time it arrived. Every taken message carries the middleware's
``received_timestamp`` (system clock [ns]) instead. Under wall time that is the log time. Under
sim time (``use_sim_time``, as ``ros2 bag record --use-sim-time``) the log time is the sim time
the node's clock read when the message arrived: the newest ``/clock`` sample received before it
(0 before the first, as a ROS clock reads before its first ``/clock``). :class:`ReceptionClock`
computes that from the ``/clock`` samples taken beside the messages, in reception order.

No ROS here: plain numbers in, plain numbers out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TypeVar

Item = TypeVar("Item")


class ReceptionClock:
    """Sim time at reception, from ``/clock`` samples and their own receive times.

    Feed the clock samples as they are taken (:meth:`add_clock`), then stamp a batch of
    messages (:meth:`stamp`). Clock samples received after the batch's newest message stay
    pending for the next batch, so taking the clock after the messages (as the recording
    thread does) stamps every message with the clock it would have read on arrival.
    """

    def __init__(self) -> None:
        self._pending: deque[tuple[int, int]] = deque()
        self.sim_time = 0
        """The sim time of the newest clock sample passed so far [ns] (0 before any)."""

    def add_clock(self, received: int, sim_time: int) -> None:
        """A ``/clock`` sample: its receive time (system clock) and the time it carries [ns]."""
        self._pending.append((received, sim_time))

    def stamp(self, batch: Iterable[tuple[int, Item]]) -> list[tuple[int, Item]]:
        """The batch's messages in reception order, each with its sim time at reception.

        Args:
            batch: (received [ns, system clock], item) per message, in any order.

        Returns:
            (sim time [ns], item) per message, sorted by the receive time (stable for equal
            times: the order given).
        """
        ordered = sorted(batch, key=lambda sample: sample[0])
        pending = self._pending  # one subscription's samples: already in reception order
        stamped = []
        sim_time = self.sim_time
        for received, item in ordered:
            while pending and pending[0][0] <= received:
                sim_time = pending.popleft()[1]
            stamped.append((sim_time, item))
        self.sim_time = sim_time
        return stamped

    def flush(self) -> None:
        """Pass every pending clock sample (at the end of a recording)."""
        while self._pending:
            self.sim_time = self._pending.popleft()[1]


def wall_stamps(batch: Iterable[tuple[int, Item]]) -> list[tuple[int, Item]]:
    """The batch in reception order, each message's log time its receive time [ns]."""
    return sorted(batch, key=lambda sample: sample[0])


__all__ = ["ReceptionClock", "wall_stamps"]
