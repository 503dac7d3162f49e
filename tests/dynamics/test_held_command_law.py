"""The held-command law of the robot side when commands stop or come late (no ROS).

A controller that misses cycles (a loaded machine, realtime pacing) leaves its last command
held. The law under test (:mod:`wbm_dynamics.pacing`): the last command is kept until
``command_timeout`` of robot time after the sample it answers, then the joints go back to the
posture hold of the start (``command_timeout_action: hold_posture``, the default), not to a limp
damping mode; a command older than the held one, or already ``command_timeout`` old on arrival,
is dropped. Times are multiples of the 2 ms publication chunk; robot times are sums of 1 ms steps,
compared to 1e-12 s.
"""

import numpy as np
import pytest

from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.held_command import CommandUpdate
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.pacing import FROM_THE_FUTURE, LATE, OUT_OF_ORDER, PacingLoop
from wbm_dynamics.settings import SimulatorSettings

CHUNK = 0.002  # one publication at 500 Hz [s]


def loop_of(model, **settings):
    logs = []
    backend = SimulatorBackend(model, SimulatorSettings())
    loop = PacingLoop(
        backend,
        RobotInterfaceSettings(robot="panda", pacing="as_fast_as_possible", **settings),
        publish=lambda outputs: None,
        log=lambda level, text: logs.append((level, text)),
    )
    loop.start(thread=False)
    return loop, backend, logs


def test_after_the_timeout_the_joints_hold_the_posture_and_late_commands_are_dropped(panda):
    # The hold at once (command_timeout_return 0): the return to it from where the joints are,
    # the default, is test_posture_return.py's.
    loop, backend, logs = loop_of(panda, command_timeout=0.05, command_timeout_return=0.0)
    servos = backend.engine.servos
    posture = backend.hold_posture_command()
    every = np.arange(panda.ndof)
    for _ in range(10):  # 20 ms of robot time, held posture
        loop.run_once()
    # A command answering the sample of t = 10 ms (stamp), arriving at 20 ms: held, and the
    # watchdog counts from its stamp, so it trips at the first check more than 50 ms after
    # 10 ms: 62 ms (checks every 2 ms, before each chunk), not 50 ms after the arrival.
    effort = np.full(panda.ndof, 0.5)
    assert loop.command(CommandUpdate(every, effort=effort), stamp=0.010) is None
    np.testing.assert_array_equal(servos.effort, effort)
    # An older sample's answer arriving after it: dropped, the held command stays.
    assert loop.command(CommandUpdate(every, effort=-effort), stamp=0.008) == OUT_OF_ORDER
    np.testing.assert_array_equal(servos.effort, effort)
    tripped = None
    while tripped is None:
        loop.run_once()
        if any("holding the initial posture" in text for _, text in logs):
            tripped = backend.time - CHUNK  # the check came before this chunk
    assert tripped == pytest.approx(0.062, abs=1e-12)
    # Back to the posture hold of the start (position and feed-forward), not to damping.
    np.testing.assert_array_equal(servos.position, posture.position)
    np.testing.assert_array_equal(servos.effort, posture.effort)
    assert np.isnan(servos.velocity).all()
    # A command already command_timeout old on arrival: dropped, the posture stays held.
    stale = backend.time - 0.05 - CHUNK
    assert loop.command(CommandUpdate(every, effort=effort), stamp=stale) == LATE
    np.testing.assert_array_equal(servos.effort, posture.effort)
    # A fresh one resumes; an unstamped one (stamp 0) counts as answering the current time.
    assert loop.command(CommandUpdate(every, effort=effort), stamp=backend.time) is None
    assert loop.command(CommandUpdate(every, effort=2 * effort), stamp=0.0) is None
    np.testing.assert_array_equal(servos.effort, 2 * effort)
    assert ("info", "joint_commands resumed") in logs
    # A reset forgets the stamps: time 0 again accepts a command stamped near 0. A command
    # computed before the reset and still in transit answers a sample after the new robot time,
    # one the robot never published since: dropped, the reset's posture hold stays (the soak's
    # falls right after a reset came from such commands, taken as answering time 0).
    before_reset = backend.time
    loop.reset()
    assert backend.time == 0.0
    assert loop.command(CommandUpdate(every, effort=3 * effort), stamp=before_reset) == (
        FROM_THE_FUTURE
    )
    np.testing.assert_array_equal(servos.effort, posture.effort)
    assert loop.command(CommandUpdate(every, effort=effort), stamp=0.0) is None
    np.testing.assert_array_equal(servos.effort, effort)


@pytest.fixture(scope="module")
def icub_model():
    return WholeBodyModel.from_config(load_robot("icub"))


def test_icub_stands_on_the_posture_hold_when_its_controller_stops(icub_model):
    # iCub standing; its controller's last command is a pure torque command (the standing
    # torques, as the torque mode sends), then nothing: a controller that stopped. Reference:
    # the base height at t = 0. With the posture hold after command_timeout it stays within
    # 1 cm (the figure) over 0.6 s; the damping mode drops it by more than 5 cm in the
    # same time (it went limp). One run each, 0.6 s of simulated time.
    posture = (
        icub_model and SimulatorBackend(icub_model, SimulatorSettings()).hold_posture_command()
    )
    drops = {}
    for action in ("hold_posture", "damping"):
        loop, backend, _ = loop_of(icub_model, command_timeout=0.05, command_timeout_action=action)
        z0 = backend.base_state().configuration[2]
        loop.command(CommandUpdate(np.arange(icub_model.ndof), effort=posture.effort), stamp=0.0)
        heights = []
        while backend.time < 0.6 - 1e-9:
            loop.run_once()
            heights.append(backend.base_state().configuration[2])
        drops[action] = float(np.max(np.abs(np.array(heights) - z0)))
    assert drops["hold_posture"] < 0.01, drops
    assert drops["damping"] > 0.05, drops
