"""The walking state machine driven by a clock and by (simulated) contact forces."""

import math

import numpy as np
import pytest
from walking_helpers import standing_feet

from wbm_control.walking import (
    ActivateContact,
    ContactState,
    Footstep,
    FootstepPlanner,
    FootstepPlanRejected,
    ReleaseContact,
    WalkingState,
    WalkingStateMachine,
)
from wbm_description.exceptions import InputError

DT = 0.002
"""Control period [s]: switches are detected at the first tick at or after their time, so times
are compared within one period."""
LOADED = 300.0  # a foot carrying the robot [N]


@pytest.fixture()
def machine(settings, feet):
    left, right = standing_feet()
    return WalkingStateMachine(settings, feet, left=left, right=right)


@pytest.fixture()
def two_steps(settings, feet):
    """Left then right, 0.16 m each (0.2 m/s for 0.8 s)."""
    left, right = standing_feet()
    planner = FootstepPlanner(settings, feet)
    return planner.plan_from_velocity((0.2, 0.0, 0.0), stance=right, swing_foot=left, n_steps=2)


def run(machine, until, contact=lambda t: None, start=0.0):
    """Tick at 500 Hz; returns [(t, state, commands)] of the ticks that switched."""
    log = []
    for t in np.arange(start, until, DT):
        before = machine.state
        commands = machine.update(float(t), contact(float(t)))
        if commands or machine.state != before:
            log.append((round(float(t), 6), machine.state, commands))
    return log


def test_clock_only_walk(machine, two_steps, settings):
    machine.set_footsteps(two_steps, 0.0)
    assert machine.state == WalkingState.DOUBLE_SUPPORT and machine.next_swing_side == "left"
    log = run(machine, 3.0)
    commands = [c for _, _, cs in log for c in cs]
    kinds = [(type(c).__name__, c.side, round(c.time, 6)) for c in commands]
    # initial double support 0.6 s, swings 0.6 s, double support 0.2 s, final 0.6 s
    assert kinds == [
        ("ReleaseContact", "left", 0.6),
        ("ActivateContact", "left", 1.2),
        ("ReleaseContact", "right", 1.4),
        ("ActivateContact", "right", 2.0),
    ]
    assert [c.reason for c in commands if isinstance(c, ActivateContact)] == ["clock", "clock"]
    for command, step in zip(commands[1::2], two_steps, strict=True):
        assert command.placement.isApprox(step.placement(), 1e-12)  # lands on the plan
        assert command.sole == {"left": "left_foot", "right": "right_foot"}[step.side]
    assert log[-1][1] == WalkingState.STANDING and log[-1][0] == pytest.approx(2.6, abs=DT)
    assert machine.landed == two_steps


def forces(left_from=None, right=LOADED, left_until=math.inf):
    """Right foot loaded; the left foot loaded between left_from and left_until."""

    def contact(t):
        loaded = left_from is not None and left_from <= t < left_until
        return ContactState.from_forces(LOADED if loaded else 0.0, right)

    return contact


def first_activation(log):
    return next(c for _, _, cs in log for c in cs if isinstance(c, ActivateContact))


def test_early_touch_down_switches_early_where_the_foot_is(machine, two_steps, settings):
    machine.set_footsteps(two_steps, 0.0)
    log = run(machine, 1.25, forces(left_from=1.1))
    activation = first_activation(log)
    assert activation.reason == "early_touchdown"
    assert activation.time == pytest.approx(1.1, abs=DT)
    # The contact is anchored where the swing reference was: 5/6 of the swing, the clearance
    # bump 64 (5/6)^3 (1/6)^3 of 4 cm = 6.86 mm up.
    tau = (activation.time - 0.6) / 0.6
    expected_z = 0.04 * 64 * tau**3 * (1 - tau) ** 3
    assert activation.placement.translation[2] == pytest.approx(expected_z, abs=1e-12)
    assert machine.state == WalkingState.DOUBLE_SUPPORT
    assert machine.phase_end == pytest.approx(activation.time + 0.2, abs=1e-12)


def test_contact_before_the_minimum_swing_phase_is_ignored(machine, two_steps):
    machine.set_footsteps(two_steps, 0.0)
    # A 50 ms contact right after lift-off (a scuff), then the foot lands at 1.2 s.
    spike = forces(left_from=0.7, left_until=0.75)
    log = run(machine, 1.19, spike)
    assert machine.state == WalkingState.SINGLE_SUPPORT
    assert not any(isinstance(c, ActivateContact) for _, _, cs in log for c in cs)


def test_late_touch_down_extends_the_swing_and_lowers_the_foot(machine, two_steps, settings):
    machine.set_footsteps(two_steps, 0.0)
    run(machine, 1.22, forces(left_from=1.25))
    assert machine.state == WalkingState.SINGLE_SUPPORT  # 20 ms late, still swinging
    side, sample = machine.swing_sample(1.22)
    assert side == "left" and sample.pose.translation[2] < 0.0 and sample.velocity[2] < 0.0
    # The schedule expects the contact by the end of the allowed delay.
    assert machine.schedule(1.22).phases[0].end == pytest.approx(1.2 + 0.1, abs=1e-12)
    log = run(machine, 1.4, forces(left_from=1.25), start=1.222)
    activation = first_activation(log)
    assert activation.reason == "touchdown"
    assert activation.time == pytest.approx(1.25, abs=DT)
    # 50 ms into the 100 ms lowering: the quintic is at one half of 2 cm.
    assert activation.placement.translation[2] == pytest.approx(-0.01, abs=2e-4)


def test_a_touch_down_never_measured_times_out(machine, two_steps, settings):
    machine.set_footsteps(two_steps, 0.0)
    log = run(machine, 1.5, forces(left_from=None))
    activation = first_activation(log)
    assert activation.reason == "timeout"
    assert activation.time == pytest.approx(1.2 + settings.max_touchdown_delay, abs=DT)


def test_no_release_while_the_other_foot_is_not_loaded(machine, two_steps, settings):
    machine.set_footsteps(two_steps, 0.0)

    def contact(t):  # the right (stance) foot gets loaded only at 0.7 s
        return ContactState.from_forces(LOADED, LOADED if t >= 0.7 else 20.0)

    log = run(machine, 0.69, contact)
    assert machine.state == WalkingState.DOUBLE_SUPPORT and log == []
    assert machine.schedule(0.65).phases[0].end == pytest.approx(0.65 + DT, abs=1e-12)
    log = run(machine, 0.8, contact, start=0.69)
    release = log[0][2][0]
    assert isinstance(release, ReleaseContact) and release.side == "left"
    assert release.time == pytest.approx(0.7, abs=DT)
    assert machine.phase_end == pytest.approx(release.time + 0.6, abs=1e-12)


def test_every_release_happens_with_the_other_foot_loaded_over_a_walk(settings, feet):
    """Random forces (seeded): whatever they do, a foot is released only when the other one
    reads at least support_force."""
    rng = np.random.default_rng(3)
    left, right = standing_feet()
    machine = WalkingStateMachine(settings, feet, left=left, right=right)
    planner = FootstepPlanner(settings, feet)
    machine.set_footsteps(
        planner.plan_from_velocity((0.2, 0, 0), stance=right, swing_foot=left, n_steps=8), 0.0
    )
    releases = 0
    for t in np.arange(0.0, 12.0, DT):
        reading = ContactState.from_forces(*rng.choice([0.0, 40.0, 60.0, 300.0], size=2))
        for command in machine.update(float(t), reading):
            if isinstance(command, ReleaseContact):
                other = reading.reading("right" if command.side == "left" else "left")
                assert other.normal_force >= settings.support_force
                releases += 1
    assert releases == 8


def test_estimator_flags_drive_the_switches_like_forces(machine, two_steps):
    machine.set_footsteps(two_steps, 0.0)
    log = run(machine, 1.3, lambda t: ContactState.from_flags(t >= 1.0, True))
    activation = first_activation(log)
    assert activation.reason == "early_touchdown"
    assert activation.time == pytest.approx(1.0, abs=DT)


def test_the_first_step_must_be_on_the_foot_that_is_free(machine, two_steps):
    machine.set_footsteps(two_steps, 0.0)
    run(machine, 0.7)  # single support on the right foot, left swinging
    with pytest.raises(FootstepPlanRejected, match="expected right"):
        machine.set_footsteps([two_steps[0]], 0.7)
    assert machine.footsteps == (two_steps[1],)  # unchanged


def test_an_empty_plan_in_double_support_stops_in_double_support(machine, two_steps):
    machine.set_footsteps(two_steps, 0.0)
    machine.update(0.3)
    machine.set_footsteps([], 0.3)
    assert machine.state == WalkingState.STOPPING
    log = run(machine, 1.0, start=0.302)
    assert not any(cs for _, _, cs in log)  # nothing released
    assert machine.state == WalkingState.STANDING


def test_schedule_follows_the_machine(machine, two_steps, settings):
    machine.set_footsteps(two_steps, 0.0)
    kinds = [p.kind for p in machine.schedule(0.0).phases]
    assert kinds == [
        "double_support",
        "single_support",
        "double_support",
        "single_support",
        "double_support",
        "standing",
    ]
    run(machine, 0.8)
    schedule = machine.schedule(0.8)
    assert schedule.phases[0].kind == "single_support"
    assert schedule.phases[0].support[0].side == "right"
    assert schedule.phases[0].swing == two_steps[0]


def test_a_retimed_swing_lands_at_its_new_time_by_clock_and_by_force(machine, two_steps, settings):
    """Step timing: the left swing (0.6 -> 1.2 s) re-timed at 0.8 s to end at 1.0 s, 3 cm wider.

    By the clock it lands at 1.0 s at rest on the new footstep; a contact is accepted from
    min_touchdown_phase (0.5) of the NEW duration (0.5 x 0.4 s after lift-off: 0.8 s), not of
    the planned one (0.9 s).
    """
    assert settings.min_touchdown_phase == 0.5
    machine.set_footsteps(two_steps, 0.0)
    run(machine, 0.8)
    target = machine.swing_target
    wider = Footstep("left", target.x, target.y + 0.03, target.yaw)
    before = machine.swing_sample(0.8)[1]
    machine.retime_swing(wider, 1.0, 0.8)
    after = machine.swing_sample(0.8)[1]
    assert after.pose.isApprox(before.pose, 1e-12)  # the reference does not jump
    np.testing.assert_allclose(after.velocity, before.velocity, atol=1e-12)
    assert machine.phase_end == 1.0 and machine.schedule(0.8).phases[0].end == 1.0
    clock = run(machine, 1.05, start=0.802)
    activation = first_activation(clock)
    assert activation.reason == "clock" and activation.time == pytest.approx(1.0, abs=1e-12)
    assert activation.placement.isApprox(wider.placement(), 1e-9)

    left, right = standing_feet()
    forced = WalkingStateMachine(settings, machine.feet, left=left, right=right)
    forced.set_footsteps(two_steps, 0.0)
    run(forced, 0.8)
    with pytest.raises(InputError, match="end_time"):
        forced.retime_swing(wider, 0.8, 0.8)
    forced.retime_swing(wider, 1.0, 0.8)
    log = run(forced, 1.05, forces(left_from=0.81), start=0.802)
    activation = first_activation(log)
    assert activation.reason == "early_touchdown"
    assert activation.time == pytest.approx(0.81, abs=DT)
