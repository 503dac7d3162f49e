"""Log times of a batch-taken recording (wbm_bringup.recording_stamps), against the log times a
recorder that reads its sim clock in a callback per message, in arrival order, would give."""

from __future__ import annotations

import numpy as np

from wbm_bringup.recording_stamps import ReceptionClock, wall_stamps


def per_message_reference(events: list[tuple[int, str, int]]) -> dict[int, int]:
    """The reference: replay every event in arrival order; a clock event sets the clock, a
    message reads it. events: (received [ns], "clock" or "message", value)."""
    clock = 0
    stamps = {}
    for _, kind, value in sorted(events, key=lambda event: event[0]):
        if kind == "clock":
            clock = value
        else:
            stamps[value] = clock
    return stamps


def test_sim_time_at_reception_over_batches_matches_a_per_message_clock():
    rng = np.random.default_rng(3)
    # 500 Hz clock (sim time 2 ms apart) arriving every 2-4 ms of wall time; 1500 messages
    # arriving at random wall times in between; distinct receive times (ns resolution).
    clock_times = np.cumsum(rng.integers(2_000_000, 4_000_000, 400))
    events = [(int(t), "clock", 2_000_000 * (i + 1)) for i, t in enumerate(clock_times)]
    message_times = rng.choice(np.arange(1, int(clock_times[-1])), 1500, replace=False)
    events += [(int(t), "message", i) for i, t in enumerate(message_times)]
    reference = per_message_reference(events)

    # Batches as the recording thread takes them: every message received before the take
    # time, then the clock samples received before a (later) clock take time.
    reception = ReceptionClock()
    stamped: dict[int, int] = {}
    order = []
    take_times = np.arange(0, int(clock_times[-1]) + 50_000_000, 50_000_000)
    taken_messages = taken_clocks = 0
    messages = sorted((t, i) for t, kind, i in events if kind == "message")
    clocks = sorted((t, v) for t, kind, v in events if kind == "clock")
    for take in take_times:
        batch = []
        while taken_messages < len(messages) and messages[taken_messages][0] <= take:
            received, index = messages[taken_messages]
            batch.append((received, index))
            taken_messages += 1
        rng.shuffle(batch)  # subscriptions are taken one after the other, not in time order
        clock_take = take + 300_000  # the clock is taken last: a little later
        while taken_clocks < len(clocks) and clocks[taken_clocks][0] <= clock_take:
            reception.add_clock(*clocks[taken_clocks])
            taken_clocks += 1
        for log_time, index in reception.stamp(batch):
            stamped[index] = log_time
            order.append(index)
    assert taken_messages == len(messages)
    # Exact: integers, the same rule applied to the same events.
    assert stamped == reference
    # Written in reception order.
    received = dict((i, t) for t, i in messages)
    assert [received[i] for i in order] == sorted(received.values())


def test_before_the_first_clock_the_sim_time_is_zero_and_flush_passes_the_rest():
    reception = ReceptionClock()
    reception.add_clock(100, 7_000)
    reception.add_clock(300, 9_000)
    assert reception.stamp([(50, "a"), (200, "b")]) == [(0, "a"), (7_000, "b")]
    assert reception.sim_time == 7_000
    reception.flush()
    assert reception.sim_time == 9_000
    # A clock going back (the simulator reset to t = 0) is followed as it comes.
    reception.add_clock(400, 0)
    assert reception.stamp([(500, "c")]) == [(0, "c")]


def test_wall_stamps_are_the_receive_times_in_order():
    assert wall_stamps([(30, "b"), (10, "a"), (30, "c")]) == [(10, "a"), (30, "b"), (30, "c")]
