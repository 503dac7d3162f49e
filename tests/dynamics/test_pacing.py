"""The pacing loop of the robot-interface node, without ROS, on a wall clock of the test's own.

The backend is the real simulator backend (panda, 1 ms steps: cheap); the wall clock is a
:class:`FakeClock` whose time moves only when the loop sleeps (plus an optional cost per reading,
to play a loop that cannot keep up), so every timing assertion is exact. One test runs the loop's
thread on the real clock.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from dynamics_helpers import UnreachedHardware

from wbm_description.exceptions import ConfigError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.backends import SimulatorBackend
from wbm_dynamics.held_command import CommandUpdate
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.pacing import (
    BEHIND_LOG_PERIOD,
    BOOTSTRAP_PERIOD,
    LOCKSTEP_POLL_PERIOD,
    POLL_PERIOD,
    MonotonicClock,
    PacingLoop,
    RobotOutputs,
)
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

CHUNK = 0.002  # publish_rate 500 Hz at the 1 ms step: two steps per publication [s]


class FakeClock:
    """Wall time that moves by what the loop sleeps, plus ``cost`` per reading [s]."""

    def __init__(self, cost: float = 0.0):
        self.wall = 100.0
        self.cost = cost
        self.sleeps: list[float] = []

    def now(self) -> float:
        self.wall += self.cost
        return self.wall

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0.0
        self.sleeps.append(seconds)
        self.wall += seconds


class Recorder:
    """The loop's publish and log callbacks."""

    def __init__(self):
        self.published: list[RobotOutputs] = []
        self.logs: list[tuple[str, str]] = []

    def publish(self, outputs: RobotOutputs) -> None:
        self.published.append(outputs)

    def log(self, level: str, text: str) -> None:
        self.logs.append((level, text))

    def lines(self, level: str) -> list[str]:
        return [text for kind, text in self.logs if kind == level]


def make_loop(model, clock=None, sim_settings=None, log=None, **settings):
    """A loop on the simulator backend; log defaults to the recorder's."""
    recorder = Recorder()
    backend = SimulatorBackend(model, sim_settings or SimulatorSettings())
    loop = PacingLoop(
        backend,
        RobotInterfaceSettings(robot="panda", **settings),
        publish=recorder.publish,
        log=log or recorder.log,
        clock=clock or FakeClock(),
    )
    return loop, backend, recorder


def all_joints(model, **arrays) -> CommandUpdate:
    return CommandUpdate(np.arange(model.ndof), **arrays)


def test_realtime_pacing_follows_the_clock_times_the_real_time_factor(panda):
    clock = FakeClock()
    loop, backend, recorder = make_loop(panda, clock, pacing="realtime", real_time_factor=2.0)
    loop.start(thread=False)
    start = clock.wall
    for _ in range(200):
        loop.run_once()
    # One publication per chunk of simulated time, stamps exact multiples of it (1e-12: the
    # sum of 1 ms steps), and the wall clock advanced by exactly simulated time / factor (the
    # fake clock moves only when the loop sleeps).
    stamps = [outputs.time for outputs in recorder.published]
    np.testing.assert_allclose(stamps, CHUNK * np.arange(201), atol=1e-12)
    assert backend.time == pytest.approx(0.4, abs=1e-12)
    assert clock.wall - start == pytest.approx(0.4 / 2.0, abs=1e-9)
    np.testing.assert_allclose(clock.sleeps, CHUNK / 2.0, atol=1e-9)
    assert not recorder.logs


def test_realtime_pacing_on_the_real_clock(panda):
    """The loop's thread on the monotonic clock: robot time never runs ahead of the wall clock
    times the factor (by more than one chunk, published before its sleep, and 20 ms of timer
    slack), and keeps up with it on a 2-core machine shared with other jobs to within 20 % (a
    panda step costs ~0.1-0.6 ms of the 2 ms a chunk may take at this factor)."""
    factor = 0.25
    loop, backend, recorder = make_loop(
        panda, MonotonicClock(), pacing="realtime", real_time_factor=factor
    )
    start = time.monotonic()
    loop.start()
    try:
        samples = []
        while time.monotonic() - start < 1.0:
            time.sleep(0.05)
            samples.append((time.monotonic() - start, backend.time))
    finally:
        loop.stop()
    for wall, robot_time in samples:
        assert robot_time <= factor * wall + CHUNK + factor * 0.02, (wall, robot_time)
    wall, robot_time = samples[-1]
    assert robot_time >= 0.8 * factor * wall, samples
    assert not recorder.lines("warning")


def test_as_fast_as_possible_never_sleeps(panda):
    clock = FakeClock()
    loop, backend, recorder = make_loop(panda, clock, pacing="as_fast_as_possible")
    loop.start(thread=False)
    for _ in range(100):
        loop.run_once()
    assert backend.time == pytest.approx(100 * CHUNK, abs=1e-12)
    assert len(recorder.published) == 101 and not clock.sleeps


def test_a_loop_that_falls_behind_warns_and_restarts_its_schedule(panda):
    # Every reading of the clock costs 0.3 s of wall time: more than BEHIND_TOLERANCE per
    # publication at a factor of 1, the loop cannot keep up.
    clock = FakeClock(cost=0.3)
    loop, backend, recorder = make_loop(panda, clock, pacing="realtime")
    loop.start(thread=False)
    for _ in range(20):  # 20 x 2 readings x 0.3 s = 12 s of wall time, > BEHIND_LOG_PERIOD
        loop.run_once()
    assert not clock.sleeps  # behind: it does not sleep, and it does not stop either
    assert backend.time == pytest.approx(20 * CHUNK, abs=1e-12)
    warnings = recorder.lines("warning")
    assert len(warnings) == 2 and "cannot keep up with real_time_factor 1" in warnings[0]
    assert 12.0 / BEHIND_LOG_PERIOD < len(warnings) <= 12.0 / BEHIND_LOG_PERIOD + 1
    # Fast again: the schedule restarts from now, no burst of catching up.
    clock.cost = 0.0
    for _ in range(10):
        loop.run_once()
    np.testing.assert_allclose(clock.sleeps, CHUNK, atol=1e-9)


def test_lockstep_advances_exactly_one_control_period_per_command(panda):
    """Against the simulator core stepped by hand with the same commands: bit for bit."""
    loop, backend, recorder = make_loop(panda, pacing="lockstep", control_rate=50.0)
    reference = Simulator(panda, SimulatorSettings())
    loop.start(thread=False)
    q0 = panda.initial_configuration()
    gravity = panda.gravity_forces(q0)
    commands = [JointCommand(position=q0 + 0.1)] * 5 + [JointCommand(effort=gravity)] * 5
    for k, command in enumerate(commands, start=1):
        loop.command(all_joints(panda, position=command.position, effort=command.effort))
        reference.set_command(command)
        reference.step(20)  # 1 / 50 Hz at 1 ms
        outputs = recorder.published[-1]
        assert len(recorder.published) == 1 + k  # one publication per command
        assert outputs.time == pytest.approx(0.02 * k, abs=1e-12)
        expected = reference.readings()
        np.testing.assert_array_equal(outputs.readings.joint_positions, expected.joint_positions)
        np.testing.assert_array_equal(outputs.readings.joint_efforts, expected.joint_efforts)
    # An invalid message (None) still advances one period and keeps the last valid command.
    loop.command(None)
    reference.step(20)
    np.testing.assert_array_equal(
        recorder.published[-1].readings.joint_positions, reference.readings().joint_positions
    )
    np.testing.assert_array_equal(recorder.published[-1].readings.joint_efforts, gravity)
    # The loop's own iterations never advance time in lockstep.
    for _ in range(10):
        loop.run_once()
    assert backend.time == pytest.approx(0.22, abs=1e-12)


def test_lockstep_with_a_command_delay_runs_ahead_and_acts_each_command_on_its_step(panda):
    """command_delay of two control periods: the first command advances three periods (the
    robot two samples ahead), every later one one; each command acts on exactly the step two
    periods after the sample it answers. Against the simulator core stepped by hand with the
    commands shifted by two periods: bit for bit."""
    loop, backend, recorder = make_loop(
        panda, pacing="lockstep", control_rate=50.0, command_delay=0.04, command_timeout=0.1
    )
    assert loop.lead == 2
    reference = Simulator(panda, SimulatorSettings())
    loop.start(thread=False)
    hold = backend.hold_posture_command()
    reference.set_command(hold)
    q0 = panda.initial_configuration()
    gravity = panda.gravity_forces(q0)
    commands = [JointCommand(position=q0 + 0.02 * k, effort=gravity) for k in range(8)]
    for k, command in enumerate(commands):
        # The command answering sample k (stamp 0.02 k), as a controller answers in order.
        loop.command(all_joints(panda, position=command.position, effort=gravity), 0.02 * k)
        if k == 0:
            # The robot goes two samples ahead on the held posture before c0 acts.
            assert [o.time for o in recorder.published] == pytest.approx([0, 0.02, 0.04, 0.06])
            reference.step(20)
            reference.step(20)
            for outputs, time_ in zip(recorder.published[1:3], (0.02, 0.04), strict=True):
                assert outputs.time == pytest.approx(time_, abs=1e-12)
        else:
            assert len(recorder.published) == 4 + k
        reference.set_command(command)  # acts over [0.02 (k + 2), 0.02 (k + 3)]
        reference.step(20)
        outputs = recorder.published[-1]
        assert outputs.time == pytest.approx(0.02 * (k + 3), abs=1e-12)
        expected = reference.readings()
        np.testing.assert_array_equal(outputs.readings.joint_positions, expected.joint_positions)
        np.testing.assert_array_equal(outputs.readings.joint_efforts, expected.joint_efforts)
    # Not the undelayed loop's states: the delay changed the motion.
    undelayed, _, plain = make_loop(
        panda, pacing="lockstep", control_rate=50.0, command_timeout=0.1
    )
    undelayed.start(thread=False)
    for k, command in enumerate(commands):
        undelayed.command(all_joints(panda, position=command.position, effort=gravity), 0.02 * k)
    late = [o for o in recorder.published if o.time == pytest.approx(0.16, abs=1e-12)][0]
    early = [o for o in plain.published if o.time == pytest.approx(0.16, abs=1e-12)][0]
    assert np.abs(late.readings.joint_positions - early.readings.joint_positions).max() > 1e-4
    # After a reset the robot goes ahead again at the first command; no old command acts.
    loop.reset()
    loop.command(all_joints(panda, effort=gravity), 0.0)
    assert [o.time for o in recorder.published[-4:]] == pytest.approx([0, 0.02, 0.04, 0.06])
    # A first command while paused does not advance: the next one that does goes ahead.
    loop.reset()
    loop.pause()
    loop.command(all_joints(panda, effort=gravity), 0.0)
    assert backend.time == 0.0
    loop.resume()
    loop.command(all_joints(panda, effort=gravity), 0.0)
    assert backend.time == pytest.approx(0.06, abs=1e-12)


def test_realtime_command_delay_holds_a_command_back_until_its_step(panda):
    """command_delay 4 ms, 2 ms publications: a command answering the sample of 2 ms acts from
    the step that starts at 6 ms; the efforts read before are the start's posture hold's."""
    loop, backend, recorder = make_loop(panda, pacing="realtime", command_delay=0.004)
    loop.start(thread=False)
    loop.run_once()
    assert recorder.published[-1].time == pytest.approx(CHUNK, abs=1e-12)
    effort = np.full(panda.ndof, 0.5)
    loop.command(all_joints(panda, effort=effort), CHUNK)
    efforts = []
    for _ in range(4):
        loop.run_once()
        efforts.append(recorder.published[-1].readings.joint_efforts)
    times = [o.time for o in recorder.published[-4:]]
    assert times == pytest.approx([0.004, 0.006, 0.008, 0.010], abs=1e-12)
    # The step to 4 ms and the one to 6 ms still on the hold, the one from 6 ms on the command.
    for before in efforts[:2]:  # the hold's feed-forward plus its PD: not the command
        assert not np.allclose(before, effort) and np.isfinite(before).all()
    np.testing.assert_array_equal(efforts[2], effort)
    np.testing.assert_array_equal(efforts[3], effort)
    # A reset drops a command still held back.
    loop.command(all_joints(panda, effort=2 * effort), recorder.published[-1].time)
    loop.reset()
    for _ in range(4):
        loop.run_once()
    assert not np.allclose(recorder.published[-1].readings.joint_efforts, 2 * effort)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"command_delay": 0.015}, "whole number of control periods"),
        ({"command_delay": 0.02, "command_timeout": 0.02}, "less than command_timeout"),
    ],
)
def test_a_lockstep_command_delay_must_fit_the_loop(panda, settings, expected):
    with pytest.raises(ConfigError) as error:
        make_loop(panda, pacing="lockstep", control_rate=100.0, **settings)
    assert error.value.key == "command_delay" and expected in str(error.value)
    # A delay of whole periods, with the watchdog off, is fine.
    loop, _, _ = make_loop(
        panda, pacing="lockstep", control_rate=100.0, command_delay=0.03, command_timeout=0.0
    )
    assert loop.lead == 3


def test_lockstep_republishes_the_state_until_the_first_command(panda):
    clock = FakeClock()
    loop, backend, recorder = make_loop(panda, clock, pacing="lockstep")
    loop.start(thread=False)
    polls = round(2.5 * BOOTSTRAP_PERIOD / LOCKSTEP_POLL_PERIOD)
    for _ in range(polls):
        loop.run_once()
    # At start, then every BOOTSTRAP_PERIOD of wall time: the same state, stamp 0.
    assert [outputs.time for outputs in recorder.published] == [0.0, 0.0, 0.0]
    loop.command(all_joints(panda, effort=np.zeros(panda.ndof)))
    for _ in range(polls):
        loop.run_once()
    assert [outputs.time for outputs in recorder.published] == pytest.approx([0, 0, 0, 0.01])
    # After a reset: published at once, then again until the next first command.
    loop.reset()
    for _ in range(polls):
        loop.run_once()
    assert [outputs.time for outputs in recorder.published[4:]] == [0.0, 0.0, 0.0]
    assert backend.time == 0.0


def test_pause_stops_time_and_resume_goes_on_without_catching_up(panda):
    clock = FakeClock()
    loop, backend, _ = make_loop(panda, clock, pacing="realtime")
    loop.start(thread=False)
    for _ in range(10):
        loop.run_once()
    assert loop.pause() == pytest.approx(10 * CHUNK, abs=1e-12)
    sleeps = len(clock.sleeps)
    for _ in range(50):
        loop.run_once()
    assert backend.time == pytest.approx(10 * CHUNK, abs=1e-12)  # time stood still
    np.testing.assert_allclose(clock.sleeps[sleeps:], POLL_PERIOD)  # 0.5 s of wall time
    assert loop.resume() == pytest.approx(10 * CHUNK, abs=1e-12)
    sleeps = len(clock.sleeps)
    for _ in range(10):
        loop.run_once()
    assert backend.time == pytest.approx(20 * CHUNK, abs=1e-12)
    np.testing.assert_allclose(clock.sleeps[sleeps:], CHUNK, atol=1e-9)  # no catching up
    # Lockstep: commands received while paused do not advance.
    loop, backend, _ = make_loop(panda, pacing="lockstep")
    loop.start(thread=False)
    loop.pause()
    loop.command(None)
    assert backend.time == 0.0
    loop.resume()
    loop.command(None)
    assert backend.time == pytest.approx(0.01, abs=1e-12)


def test_divergence_stops_the_robot_and_reset_recovers(panda):
    # A limp panda falls under gravity: a max_speed of 0.5 rad/s is passed within a second.
    loop, backend, recorder = make_loop(
        panda,
        sim_settings=SimulatorSettings(max_speed=0.5),
        pacing="as_fast_as_possible",
        hold_posture_at_start=False,
    )
    loop.start(thread=False)
    for _ in range(500):
        loop.run_once()
        if loop.diverged:
            break
    assert loop.diverged and backend.engine.diverged is not None
    errors = recorder.lines("error")
    assert len(errors) == 1 and "exceeds max_speed" in errors[0]
    assert "call the reset service" in errors[0]
    stopped_at, count = backend.time, len(recorder.published)
    for _ in range(20):
        loop.run_once()
    assert backend.time == stopped_at and len(recorder.published) == count  # stopped
    loop.command(None)  # a command neither advances nor raises
    assert backend.time == stopped_at
    loop.reset()
    assert not loop.diverged and backend.time == 0.0
    assert recorder.published[-1].time == 0.0  # the reset state is published
    loop.run_once()
    assert backend.time == pytest.approx(CHUNK, abs=1e-12)
    np.testing.assert_allclose(
        recorder.published[0].readings.joint_positions,
        recorder.published[-2].readings.joint_positions,
    )


def test_watchdog_trips_after_the_timeout_and_a_new_command_resumes(panda):
    timeout = 0.05
    tripped_at = []
    infos = []

    def log(level: str, text: str) -> None:
        if "damping mode" in text:
            tripped_at.append(backend.time)
        elif level == "info":
            infos.append(text)

    loop, backend, _ = make_loop(
        panda,
        pacing="as_fast_as_possible",
        command_timeout=timeout,
        command_timeout_action="damping",
        log=log,
    )
    loop.start(thread=False)
    gravity = panda.gravity_forces(panda.initial_configuration())
    loop.command(all_joints(panda, effort=gravity))  # at t = 0
    for _ in range(50):  # 0.1 s
        loop.run_once()
    # Checked before each chunk: it trips at the first check more than the timeout after the
    # command (0.052 s), once.
    assert tripped_at == [pytest.approx(timeout + CHUNK, abs=1e-12)]
    servos = backend.engine.servos  # damping: track zero velocity, nothing else
    np.testing.assert_array_equal(servos.velocity, np.zeros(panda.ndof))
    assert np.isnan(servos.position).all() and np.isnan(servos.effort).all()
    # A new command resumes, and the held command was cleared: a command for one joint
    # leaves the others uncommanded.
    loop.command(CommandUpdate(np.array([0]), effort=np.array([1.5])))
    assert infos == ["joint_commands resumed"]
    np.testing.assert_array_equal(servos.effort[0], 1.5)
    assert np.isnan(servos.effort[1:]).all() and np.isnan(servos.velocity).all()
    loop.run_once()
    assert len(tripped_at) == 1


def test_hold_posture_at_start_and_after_a_reset(panda):
    loop, backend, _ = make_loop(panda, pacing="lockstep", hold_posture_at_start=True)
    posture = backend.hold_posture_command()
    servos = backend.engine.servos
    loop.start(thread=False)
    np.testing.assert_array_equal(servos.position, posture.position)
    np.testing.assert_array_equal(servos.effort, posture.effort)
    loop.command(all_joints(panda, effort=np.zeros(panda.ndof)))
    assert np.isnan(servos.position).all()
    loop.reset()
    np.testing.assert_array_equal(servos.position, posture.position)
    # Without it, nothing is commanded: the robot is limp.
    loop, backend, _ = make_loop(panda, pacing="lockstep", hold_posture_at_start=False)
    loop.start(thread=False)
    assert np.isnan(backend.engine.servos.position).all()
    # Holding is the default, from the first simulated instant.
    loop, backend, _ = make_loop(panda, pacing="lockstep")
    assert loop.settings.hold_posture_at_start
    loop.start(thread=False)
    assert backend.time == 0.0
    np.testing.assert_array_equal(backend.engine.servos.position, posture.position)


def test_a_real_robot_is_paced_by_itself(icub):
    for settings in (
        RobotInterfaceSettings(pacing="lockstep"),
        RobotInterfaceSettings(real_time_factor=2.0),
    ):
        with pytest.raises(ConfigError) as error:
            PacingLoop(
                UnreachedHardware(icub), settings, publish=print, log=print, source="params.yaml"
            )
        assert error.value.key == "pacing" and error.value.path == "params.yaml"
    # Nor does a real robot's bus take a simulated delay.
    with pytest.raises(ConfigError) as error:
        PacingLoop(
            UnreachedHardware(icub),
            RobotInterfaceSettings(command_delay=0.002),
            publish=print,
            log=print,
            source="params.yaml",
        )
    assert error.value.key == "command_delay" and "real-time backend" in str(error.value)


def test_a_lasting_trip_is_logged_even_when_the_throttle_held_its_log_back(panda):
    """The trip log is throttled (one per BEHIND_LOG_PERIOD of wall time), but a trip that lasts
    is said once the period is over: a controller killed right after a late one (whose trip was
    logged) left the robot side holding the posture without a word (the killed-controller
    bringup test's failure in the suite)."""
    clock = FakeClock()
    loop, backend, recorder = make_loop(
        panda, clock=clock, pacing="as_fast_as_possible", command_timeout=0.01
    )
    loop.start(thread=False)
    gravity = panda.gravity_forces(panda.initial_configuration())

    def trip_logs() -> list[str]:
        return [t for t in recorder.lines("warning") if "holding the initial posture" in t]

    loop.command(all_joints(panda, effort=gravity), stamp=backend.time)
    for _ in range(10):  # 20 ms: a first trip, logged
        loop.run_once()
    assert len(trip_logs()) == 1 and loop.trips == 1
    loop.command(all_joints(panda, effort=gravity), stamp=backend.time)  # a late one resumes
    assert recorder.lines("info") == ["joint_commands resumed"]
    clock.wall += 2.0  # then nothing more (the controller is gone)
    for _ in range(10):
        loop.run_once()
    assert loop.trips == 2 and len(trip_logs()) == 1  # held back: 2 s after the last log
    loop.run_once()
    assert len(trip_logs()) == 1  # still within the period: nothing more
    clock.wall += BEHIND_LOG_PERIOD  # the period is over and the trip still lasts
    loop.run_once()
    assert len(trip_logs()) == 2 and "2 time(s)" in trip_logs()[-1]
    clock.wall += 2 * BEHIND_LOG_PERIOD
    for _ in range(5):
        loop.run_once()
    assert len(trip_logs()) == 2  # said once per trip
