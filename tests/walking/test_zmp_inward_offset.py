"""The single-support ZMP reference moved towards the swing side (``zmp_inward_offset``).

References: the offset point computed by hand in the sole frame (rotation by the yaw), the
schedule's phases read back, and the pattern generator's plan on an ideal LIP (re-planned from
its own state): with the offset at the inner edge of the ZMP's area (0.025 m on iCub's 7 cm
soles with a 1 cm margin) the planned DCM at each lift-off lies inside the stance sole's centre
by about that much, where without it the DCM stands near the centre.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from walking_helpers import forward_walk_schedule, run_pattern_generator

from wbm_control.walking import LinearMpcPatternGenerator
from wbm_control.walking.contact_schedule import stance_zmp
from wbm_control.walking.footsteps import Footstep
from wbm_description.exceptions import InputError

OFFSET = 0.025  # [m] iCub's: half the 0.07 m sole width minus the 0.01 m ZMP margin


@pytest.mark.parametrize("yaw", [0.0, 0.3, -1.2])
def test_the_reference_moves_along_the_sole_y_axis_towards_the_other_foot(settings, feet, yaw):
    shifted = settings.replace(zmp_inward_offset=0.02)
    c, s = math.cos(yaw), math.sin(yaw)
    for side, towards in (("left", -1.0), ("right", 1.0)):
        step = Footstep(side, 0.3, -0.1, yaw)
        centre = feet.center(step)
        expected = centre + towards * 0.02 * np.array([-s, c])  # the sole's y axis in the world
        np.testing.assert_allclose(stance_zmp(shifted, feet, step), expected, atol=1e-12)
        np.testing.assert_allclose(stance_zmp(settings, feet, step), centre, atol=1e-12)


def test_the_schedule_holds_the_shifted_reference_in_single_support(settings, feet):
    shifted = settings.replace(zmp_inward_offset=OFFSET)
    schedule, _ = forward_walk_schedule(shifted, feet, steps=4)
    singles = [p for p in schedule.phases if p.kind == "single_support"]
    assert len(singles) == 5  # 4 steps and the closing one
    for phase in singles:
        expected = stance_zmp(shifted, feet, phase.support[0])
        np.testing.assert_allclose(phase.zmp_start, expected, atol=1e-12)
        np.testing.assert_allclose(phase.zmp_end, expected, atol=1e-12)
        lateral = phase.zmp_start[1] - feet.center(phase.support[0])[1]  # yaw 0
        assert lateral == pytest.approx(-OFFSET if phase.stance_side == "left" else OFFSET)
    # double supports between two single supports ramp from one's reference to the next's
    phases = schedule.phases
    for before, ramp, after in zip(phases, phases[1:], phases[2:], strict=False):
        if (before.kind, ramp.kind, after.kind) == (
            "single_support",
            "double_support",
            "single_support",
        ):
            np.testing.assert_allclose(ramp.zmp_start, before.zmp_end, atol=1e-12)
            np.testing.assert_allclose(ramp.zmp_end, after.zmp_start, atol=1e-12)
    # standing: the middle of the feet, not shifted
    last = phases[-1]
    middle = 0.5 * (feet.center(last.support[0]) + feet.center(last.support[1]))
    np.testing.assert_allclose(last.zmp_end, middle, atol=1e-12)


def test_an_offset_beyond_the_zmp_area_is_rejected(settings, feet):
    inner = 0.5 * 0.07 - settings.zmp_margin
    LinearMpcPatternGenerator(settings.replace(zmp_inward_offset=inner), feet)
    with pytest.raises(InputError, match="zmp_inward_offset"):
        LinearMpcPatternGenerator(settings.replace(zmp_inward_offset=inner + 1e-3), feet)


def _dcm_at_liftoffs(settings, feet) -> list[float]:
    """The planned DCM's lateral offset from the stance sole's centre at each lift-off, positive
    outwards (away from the swing foot) [m]; an ideal LIP walking 0.2 m/s."""
    schedule, _ = forward_walk_schedule(settings, feet, velocity=0.2, steps=8)
    generator = LinearMpcPatternGenerator(settings, feet)
    until = schedule.phases[-1].start
    plans = run_pattern_generator(generator, schedule, until=until, period=0.01)
    offsets = []
    for phase in schedule.phases:
        if phase.kind != "single_support" or phase.start < 1.0:
            continue
        plan = min(plans, key=lambda p: abs(p.times[0] - phase.start))
        dcm = plan.sample(phase.start).dcm[:2]
        outwards = 1.0 if phase.stance_side == "left" else -1.0
        offsets.append(outwards * (dcm[1] - feet.center(phase.support[0])[1]))
    return offsets


def test_the_planned_dcm_at_lift_off_moves_inside_the_stance_sole(settings, feet):
    """iCub's durations (0.5 s single, 0.2 s double support). Measured (ideal LIP, lift-offs
    after 1 s, CoM height 0.48 m): without the offset the DCM lies 2.6-10.6 mm inside the
    stance sole's centre, with 0.025 m 26.4-30.9 mm inside, 21-24 mm further in (a 4 N s push
    moves iCub's DCM 30 mm). Bounds: 1.5 mm beyond the measured ranges."""
    base = settings.replace(single_support_duration=0.5, double_support_duration=0.2)
    without = np.array(_dcm_at_liftoffs(base, feet))
    shifted = np.array(_dcm_at_liftoffs(base.replace(zmp_inward_offset=OFFSET), feet))
    print(
        f"\nDCM at lift-off, outwards from the sole centre [mm]: without {without * 1e3}, "
        f"with {OFFSET} m {shifted * 1e3}"
    )
    assert len(without) == len(shifted) >= 6
    assert np.all((without > -0.0121) & (without < -0.0011))  # near the centre, inside
    assert np.all((shifted > -0.0324) & (shifted < -0.0249))
    assert np.all(without - shifted > 0.0195)
