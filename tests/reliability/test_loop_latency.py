"""The loop-latency emulator (``wbm_benchmark_loop_latency``): its timing and the robot side's law.

The emulator replays a slow, late controller against the robot side's own held-command law
(:class:`~wbm_dynamics.pacing.PacingLoop`) in one process. Checked here on the two cases with
closed answers (1 s of iCub standing, no push):

- the ideal loop (an answer every 2 ms publication, at once): 500 answers, none dropped, no
  watchdog trip: lockstep's loop;
- a loop whose answers arrive 30 ms after their sample, beyond the 20 ms ``command_timeout``:
  of the 485 answers that arrived (the 30 ms still in transit at the end are the other 15), the
  answer to the sample of t = 0 is held, because a stamp of 0 means "unstamped: answers the
  current time" (the node's convention, and that sample's stamp is 0), the 14 answers to the
  samples of 2-28 ms then come out of order, the other 470 are late; the one held command
  armed the watchdog, which tripped once 20 ms later, and the posture hold of the start kept
  the robot standing (base within 5 mm: it holds within about 1 mm).
"""

from __future__ import annotations

import pytest

from wbm_bringup.benchmarks.loop_latency import LoopLatency, robot_side_settings, run_loop
from wbm_bringup.share import config_directory
from wbm_control.controller_settings import ControllerSettings
from wbm_dynamics.pacing import LATE, OUT_OF_ORDER

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def settings():
    directory = config_directory("icub")
    controller = ControllerSettings.from_yaml(directory / "controller.yaml")
    interface, simulator = robot_side_settings(directory / "robot_interface.yaml", "compliant")
    return controller, interface, simulator


def test_the_loop_is_parsed_in_milliseconds_and_bad_loops_are_refused():
    assert LoopLatency.parse("14:12:10") == LoopLatency(0.014, 0.012, 0.010)
    for bad in ("14:12", "0:1:1", "2:-1:0", "a:b:c"):
        with pytest.raises(ValueError, match="loop"):
            LoopLatency.parse(bad)


def test_the_ideal_loop_answers_every_sample_and_a_late_loop_is_dropped_whole(icub, settings):
    controller, interface, simulator = settings
    assert interface.command_timeout == pytest.approx(0.02)
    assert interface.publish_rate == pytest.approx(500.0)
    ideal = run_loop(
        icub, controller, interface, LoopLatency(0.002), duration=1.0,
        simulator_settings=simulator,
    )  # fmt: skip
    assert ideal.fell_at is None
    assert ideal.answers == 500
    assert ideal.dropped == {} and ideal.trips == 0
    late = run_loop(
        icub, controller, interface, LoopLatency(0.002, 0.030), duration=1.0,
        simulator_settings=simulator,
    )  # fmt: skip
    assert late.answers == 500
    assert late.dropped == {OUT_OF_ORDER: 14, LATE: 470}
    assert late.trips == 1
    assert late.fell_at is None and late.lowest < 0.005, late.lowest
