"""Step timing in the walking controller on an ideal LIP: a push during a swing ends it sooner.

The ideal LIP (walking_helpers.IdealLip) realises the commanded ZMP exactly and makes the
touch-down from the swing reference reaching the ground. iCub's geometry, 0.2 m/s, swings of
0.5 s (the first one, left, from 0.6 to 1.1 s); at 0.75 s the CoM velocity jumps by 0.25 m/s to
the right (8 N s on 33 kg: the DCM 5.3 cm further right, beyond the right stance sole's outer
edge, where the ZMP cannot bring it back; 4 N s the ideal LIP's ankle alone takes back).
"""

from dataclasses import replace

import numpy as np
import pytest
from walking_helpers import IdealLip, assert_step_within_limits

from wbm_control.walking import ActivateContact, ReleaseContact, WalkingController, WalkingSettings

SETTINGS = WalkingSettings(
    single_support_duration=0.5,
    com_height=0.44,
    step_adjustment_gain=1.0,
    step_timing_weight=0.1,
    step_timing_threshold=0.02,
    min_single_support_duration=0.3,
    max_single_support_duration=0.6,
)


def first_swing(geometry, settings, kick):
    """(lift-off, touch-down) of the first swing, its swing reference at touch-down, the step."""
    controller = WalkingController(geometry, settings)
    sim = IdealLip(controller)
    controller.set_velocity_command(0.2, 0.0, 0.0)
    sim.run(0.75)
    lift_off = controller.state_machine.phase_start
    sim.com_velocity[:2] += kick
    events, swing = {ReleaseContact: lift_off}, []

    def tick(t, references):
        for command in references.contact_commands:
            events.setdefault(type(command), command.time)
        if references.swing:
            swing.append(next(iter(references.swing.values())))

    sim.run(1.3, on_tick=tick, stop=lambda r: ActivateContact in events)
    stance = controller.state_machine.foot("right")
    landed = controller.state_machine.foot("left")
    return events, swing[-1], landed, stance


@pytest.mark.parametrize("settings", [SETTINGS, replace(SETTINGS, step_timing_weight=0.0)])
def test_without_a_push_the_swing_keeps_its_time(icub_geometry, settings):
    events, _, _, _ = first_swing(icub_geometry, settings, np.zeros(2))
    assert events[ReleaseContact] == pytest.approx(0.6, abs=1e-9)
    assert events[ActivateContact] == pytest.approx(1.1, abs=2e-3)  # one period


def test_a_push_over_the_stance_sole_shortens_the_swing_within_its_bounds(icub_geometry):
    events, last, landed, stance = first_swing(icub_geometry, SETTINGS, np.array([0.0, -0.25]))
    touchdown = events[ActivateContact]
    # Shorter than planned (1.1 s), not below the shortest swing (0.6 + 0.3 s); one period.
    assert 0.9 - 2e-3 <= touchdown < 1.1 - 0.02
    # The step lands where the re-timed swing went, inside the step limits, at rest.
    assert_step_within_limits(
        landed,
        stance,
        SETTINGS.with_robot(
            nominal_foot_spacing=icub_geometry.nominal_foot_spacing, com_height=0.44
        ),
    )
    np.testing.assert_allclose(last.velocity, 0.0, atol=0.02)  # the last tick, <= 2 ms before
    # The left foot went inward (towards the DCM pushed right), not beyond the no-crossing limit.
    assert landed.y < icub_geometry.left.y - 0.01
    # The place-only step adjustment keeps the planned time under the same push.
    place_only = replace(SETTINGS, step_timing_weight=0.0)
    events, _, _, _ = first_swing(icub_geometry, place_only, np.array([0.0, -0.25]))
    assert events[ActivateContact] == pytest.approx(1.1, abs=2e-3)
