"""Closed loop: the controller (both modes) on the simulator core (both contact models), iCub.

The estimator feeds the controller (it sees only ``sim.readings()``); ground truth only judges.
Durations are the issue's; the control rate is the node's default (500 Hz) on a 1 ms simulator.
"""

import numpy as np
import pinocchio as pin
import pytest
from closed_loop_scenarios import make_rig

pytestmark = [pytest.mark.slow]

COMBINATIONS = [
    ("torque", "compliant"),
    ("torque", "rigid"),
    ("ik", "compliant"),
    ("ik", "rigid"),
]
PUSH_IMPULSE = 4.0  # [N s] (the issue's)
PUSH_DURATION = 0.2  # [s]
SETTLE = 0.1  # [s] touchdown of a perturbed start (a sole starts tilted); feet judged after it
# [s] judged after each push: the response has decayed by then. Measured with 2.5 s windows (all
# four combinations): the CoM was last 5 mm or more from where it was 1.39 s after a push (IK,
# front; torque 0.96 s), 2.0 s after it at most 1.68 mm away (bound 5 mm) and decreasing, and the
# feet had done all their moving within the first second (largest 0.94 mm, the same at 2.5 s).
RECOVERY = 2.0


def fallen(rig) -> bool:
    return rig.com()[2] < 0.35


@pytest.mark.parametrize("mode, contact_model", COMBINATIONS)
def test_stands_10_s_from_a_perturbed_posture(icub, mode, contact_model):
    rig = make_rig(icub, mode, contact_model, joint_perturbation=0.02, seed=3)
    rig.run(SETTLE)
    feet0 = rig.sole_positions()
    moved = []
    estimate_errors = []

    def record(t):
        feet = rig.sole_positions()
        moved.append(max(np.linalg.norm(feet[k] - feet0[k]) for k in feet))
        truth = rig.sim.ground_truth()
        estimate = rig.controller.status.estimate
        estimate_errors.append(np.linalg.norm(estimate.q[:3] - truth.q[:3]))
        return rig.com() - rig.controller.com_reference()

    log = rig.run(10.0 - SETTLE, record=record, stop=lambda: fallen(rig))
    assert not fallen(rig)
    assert log.safe_steps == 0
    com_errors = np.array(log.records)
    times = np.array(log.times)
    final = np.linalg.norm(com_errors[times > 9.0], axis=1)
    print(
        f"{mode}/{contact_model}: CoM error last 1 s max {final.max() * 1e3:.2f} mm, feet moved "
        f"max {max(moved) * 1e3:.3f} mm, base position estimate error max "
        f"{max(estimate_errors) * 1e3:.2f} mm"
    )
    # Issue: the CoM settles within 5 mm of its target (true CoM vs the controller's target;
    # includes the estimator's error, the target being in the estimated world).
    assert final.max() < 5e-3
    # Issue: the feet do not move more than 1 mm.
    assert max(moved) < 1e-3
    # The estimator tracks the true base position (leg odometry drift only) within 5 mm.
    assert max(estimate_errors) < 5e-3


@pytest.mark.parametrize("mode, contact_model", COMBINATIONS)
def test_seed_004_hand_motion(icub, mode, contact_model):
    """After 0.5 s still, the left hand moves 3 cm forward and 3 cm sideways over 2 s."""
    rig = make_rig(icub, mode, contact_model)
    rig.run(0.5)
    feet0 = rig.sole_positions()
    start = rig.controller.frame_reference("left_hand")
    goal = pin.SE3(start.rotation, start.translation + np.array([0.03, -0.03, 0.0]))
    accepted = rig.controller.set_frame_target("left_hand", goal, duration=2.0)
    np.testing.assert_allclose(accepted.translation, goal.translation)
    hand = icub.frame_id("l_hand")
    errors = []

    def record(t):
        truth = rig.sim.ground_truth().q
        reference = rig.controller.frame_reference("left_hand")
        errors.append(
            np.linalg.norm(
                icub.frame_placement(truth, "l_hand").translation - reference.translation
            )
        )
        return None

    rig.run(2.5, record=record, stop=lambda: fallen(rig))
    del hand
    rms = float(np.sqrt(np.mean(np.square(errors))))
    feet = rig.sole_positions()
    moved = max(np.linalg.norm(feet[k] - feet0[k]) for k in feet)
    print(
        f"{mode}/{contact_model}: hand tracking RMS {rms * 1e3:.2f} mm, "
        f"feet moved {moved * 1e3:.3f} mm"
    )
    assert not fallen(rig)
    assert rms < 5e-3  # issue: under 5 mm RMS
    assert moved < 1e-3  # the feet stay put (1 mm, as for standing)


@pytest.mark.parametrize("mode, contact_model", COMBINATIONS)
def test_com_shift_3_cm_sideways_and_back_keeps_the_zmp_inside(icub, mode, contact_model):
    rig = make_rig(icub, mode, contact_model)
    rig.run(0.3)
    center = rig.controller.com_reference()
    margins = []

    def record(t):
        margins.append(rig.true_cop_and_margin()[1])
        return rig.com().copy()

    shifted = center + np.array([0.0, 0.03, 0.0])
    log = rig.run(
        3.0,
        record=record,
        events={
            0.3: lambda: rig.controller.set_com_target(shifted, duration=1.0),
            1.6: lambda: rig.controller.set_com_target(center, duration=1.0),
        },
        stop=lambda: fallen(rig),
    )
    coms = np.array(log.records)
    times = np.array(log.times)
    reached = coms[(times > 1.4) & (times < 1.6)]
    print(
        f"{mode}/{contact_model}: CoM y at the shift {reached[:, 1].mean() - center[1]:.4f} m, "
        f"ZMP margin min {min(margins) * 1e3:.1f} mm"
    )
    assert not fallen(rig)
    # The true CoP (ZMP on flat ground) stays inside the true support polygon throughout.
    assert min(margins) > 0.0
    # The shift happened (3 cm, within 5 mm as for standing) and came back.
    np.testing.assert_allclose(reached[:, 1].mean() - center[1], 0.03, atol=5e-3)
    np.testing.assert_allclose(coms[-1, 1], center[1], atol=5e-3)


@pytest.mark.parametrize("mode, contact_model", COMBINATIONS)
def test_recovers_from_4_Ns_pushes_on_the_torso_front_then_side(icub, mode, contact_model):
    rig = make_rig(icub, mode, contact_model)
    rig.run(1.5)  # the CoM reaches its initial target (1 s quintic) and settles
    feet0 = rig.sole_positions()
    com0 = rig.com()
    for direction, axis in (("front", [1.0, 0.0, 0.0]), ("side", [0.0, 1.0, 0.0])):
        # 4 N s as 20 N for 0.2 s (a hand push). The same impulse in 50 ms (80 N) puts an
        # unmodelled 66 N m about the ankles of a 28 kg robot: the ZMP would have to leave the
        # polygon during the push, and the far sole tilts whatever the controller does.
        force = PUSH_IMPULSE / PUSH_DURATION * np.array(axis)
        rig.sim.apply_wrench("torso", np.concatenate([force, np.zeros(3)]), PUSH_DURATION)
        log = rig.run(
            RECOVERY, stop=lambda: fallen(rig), record=lambda t: rig.true_cop_and_margin()[1]
        )
        margins = log.records
        feet = rig.sole_positions()
        moved = max(np.linalg.norm(feet[k] - feet0[k]) for k in feet)
        back = np.linalg.norm(rig.com()[:2] - com0[:2])
        print(
            f"{mode}/{contact_model} {direction}: feet moved {moved * 1e3:.3f} mm, CoM back "
            f"within {back * 1e3:.2f} mm, ZMP margin min {min(margins) * 1e3:.1f} mm"
        )
        assert not fallen(rig)
        assert moved < 1e-3  # without moving the feet (1 mm, as for standing)
        assert back < 5e-3  # recovered: the CoM is back where it was (5 mm, as for standing)
