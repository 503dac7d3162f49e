"""G1 balances under the whole-body controller, without foot F/T sensors, on both engines.

One 10 s scenario per engine (our simulator with compliant contact, and MuJoCo) and controller
mode (torque, IK), in closed loop in process (``wbm_bringup.closed_loop``: the controller sees only
the engine's RobotReadings; its estimator, not ground truth, feeds it; ground truth only judges):

- 0-3 s: start from a perturbed posture (legs crouched 0.1 rad, waist and arms off by 0.05 rad
  rms, soles flat on the ground) and stand: the CoM reaches its reference (above the soles'
  centre) within 5 mm;
- 3-5 s: the left hand moves 5 cm forward and 3 cm up (quintic, 1.5 s) and holds: its true
  position is within 5 mm of the target at the end (iCub's hand tracking bound; measured 0.4 to
  1.0 mm: the rest is the estimated base's offset from the true one on the soft contacts);
- 5 s: a 4 N s push on the torso from behind (20 N for 0.2 s), 7.5 s: the same from the side;
- at 10 s: not fallen, the CoM back within 5 mm of its reference, and over the whole run the
  soles moved (slid or tilted) by less than 5 mm.

The 5 mm bounds are the issue's (CoM error under 5 mm, feet still). The contacts and the ZMP come
from the estimates (wbm_control.contact_estimation, zmp_estimation). Measured (CoM error at 3 s /
10 s, soles): compliant torque 0.35 / 0.31 mm, 0.77 mm; compliant IK 0.41 / 0.54 mm, 0.67 mm;
MuJoCo torque 0.86 / 0.78 mm, 2.71 mm; MuJoCo IK 0.82 / 0.76 mm, 2.47 mm (MuJoCo's soft contact
lets the soles sink and creep more).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from wbm_bringup.closed_loop import run_closed_loop
from wbm_bringup.share import config_directory
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_description import WholeBodyModel
from wbm_dynamics.mujoco.engine import MujocoEngine
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

pytestmark = pytest.mark.slow

DT = 1e-3  # both engines' step [s]
PUSH_LINK = "torso_link"
PUSH_IMPULSE = 4.0  # [N s]
PUSH_DURATION = 0.2  # [s]: 20 N, a hand push (as for iCub)
HAND = ("left_hand", "left_rubber_hand")  # the task and its frame
HAND_MOTION = np.array([0.05, 0.0, 0.03])  # [m], world axes


def perturbed_posture(model: WholeBodyModel, seed: int = 0) -> np.ndarray:
    """The initial posture crouched by 0.1 rad (hip pitch -d, knee +2 d, ankle pitch -d: soles
    stay flat and level) with waist and arm joints off by N(0, 0.05 rad)."""
    joints = model.initial_posture.copy()
    rng = np.random.default_rng(seed)
    for i, name in enumerate(model.joint_names):
        if name.startswith(("waist", "left_shoulder", "right_shoulder", "left_elb", "right_elb")):
            joints[i] += rng.normal(0.0, 0.05)
    for side in ("left", "right"):
        joints[model.joint_index(f"{side}_hip_pitch_joint")] -= 0.1
        joints[model.joint_index(f"{side}_knee_joint")] += 0.2
        joints[model.joint_index(f"{side}_ankle_pitch_joint")] -= 0.1
    lower, upper = model.joint_position_limits
    return np.clip(joints, lower + 1e-3, upper - 1e-3)


def make_engine(model: WholeBodyModel, engine: str):
    if engine == "mujoco":
        return MujocoEngine(model)
    return Simulator(
        model, SimulatorSettings(dt=DT, integrator="semi_implicit_euler", contact_model=engine)
    )


def sole_corners(model: WholeBodyModel, q: np.ndarray) -> np.ndarray:
    return np.array(
        [
            model.frame_placement(q, sole.frame).act(corner)
            for sole in model.config.soles
            for corner in sole.corners()
        ]
    )


@pytest.mark.parametrize(
    "engine, mode",
    [("compliant", "torque"), ("compliant", "ik"), ("mujoco", "torque"), ("mujoco", "ik")],
)
def test_g1_stands_reaches_and_takes_pushes(g1, engine, mode):
    settings = ControllerSettings.from_yaml(config_directory("g1") / "controller.yaml")
    settings = replace(settings, mode=mode)
    sim = make_engine(g1, engine)
    joints = perturbed_posture(g1)
    sim.reset(g1.configuration(g1.base_placement_for_reference_frame(joints, "left_sole"), joints))
    controller = WholeBodyController(g1, settings)
    steps = round(settings.control_period / DT)
    corners0 = sole_corners(g1, sim.ground_truth().q)
    fall_height = 0.8 * g1.com_position(sim.ground_truth().q)[2]
    rows = []

    def record(t):
        q = sim.ground_truth().q
        rows.append(
            (
                t,
                float(np.abs(sole_corners(g1, q) - corners0).max()),
                np.linalg.norm(g1.com_position(q) - controller.com_reference()),
            )
        )

    def fallen() -> bool:
        return g1.com_position(sim.ground_truth().q)[2] < fall_height

    def push(axis: int):
        wrench = np.zeros(6)
        wrench[axis] = PUSH_IMPULSE / PUSH_DURATION
        sim.apply_wrench(PUSH_LINK, wrench, PUSH_DURATION)

    hand_goal = {}

    def move_hand():
        start = controller.frame_reference(HAND[0])
        goal = pin.SE3(start.rotation, start.translation + HAND_MOTION)
        hand_goal["goal"] = controller.set_frame_target(HAND[0], goal, duration=1.5)

    log = run_closed_loop(
        controller,
        sim,
        3.0,
        robot_steps_per_control=steps,
        record=record,
        stop=fallen,
    )
    com_error_standing = rows[-1][2]
    move_hand()
    log = run_closed_loop(controller, sim, 2.0, robot_steps_per_control=steps, record=record)
    hand = g1.frame_placement(sim.ground_truth().q, HAND[1]).translation
    hand_error = float(np.linalg.norm(hand - hand_goal["goal"].translation))
    log = run_closed_loop(
        controller,
        sim,
        5.0,
        robot_steps_per_control=steps,
        record=record,
        events={5.0: lambda: push(0), 7.5: lambda: push(1)},
        stop=fallen,
    )
    feet = max(r[1] for r in rows)
    com_error_end = rows[-1][2]
    print(
        f"G1 {engine}/{mode}: CoM error {com_error_standing * 1e3:.2f} mm at 3 s, "
        f"{com_error_end * 1e3:.2f} mm at 10 s; hand error {hand_error * 1e3:.1f} mm; "
        f"soles moved {feet * 1e3:.2f} mm; safe steps {log.safe_steps}"
    )
    assert not fallen()
    assert log.safe_steps == 0
    assert com_error_standing < 5e-3
    assert hand_error < 5e-3
    assert com_error_end < 5e-3
    assert feet < 5e-3


@pytest.mark.parametrize("engine", ["compliant", "mujoco"])
def test_g1_sole_loads_from_joint_torques_follow_the_true_contact_forces(g1, engine):
    """The contact estimate's loads (from joint_states' effort through the leg Jacobians,
    qdd ~ 0) against the engine's true normal contact force per sole, while the CoM moves 2 cm
    sideways in 1 s (the torque QP's wrench distribution shifts ~13 N from one foot to the
    other).

    Bound: 3 N RMS per foot (1 % of the 327 N weight; measured 0.4-0.6 N on both engines): what
    the estimate neglects is the legs' M qdd (small at 2 cm/s) and the joints' viscous friction
    (0.5 N m s/rad at joint speeds of a few mrad/s). The shift itself must be seen: the
    estimated change of the left-right difference is the true one within 30 %.
    """
    settings = replace(
        ControllerSettings.from_yaml(config_directory("g1") / "controller.yaml"), mode="torque"
    )
    sim = make_engine(g1, engine)
    sim.reset()
    controller = WholeBodyController(g1, settings)
    steps = round(settings.control_period / DT)
    run_closed_loop(controller, sim, 1.2, robot_steps_per_control=steps)
    rows = []

    def record(_t):
        forces = sim.ground_truth().contact_forces
        true = [
            sum(f[2] for name, f in forces.items() if name.split("/")[0] == sole)
            for sole in ("left_foot", "right_foot")
        ]
        loads = controller.contact_estimate.loads
        rows.append([loads["left_foot"], loads["right_foot"], *true])

    target = controller.com_reference() + np.array([0.0, 0.02, 0.0])
    controller.set_com_target(target, duration=1.0)
    run_closed_loop(controller, sim, 1.3, robot_steps_per_control=steps, record=record)
    rows = np.array(rows)
    error = rows[:, :2] - rows[:, 2:]
    rms = np.sqrt(np.mean(error**2, axis=0))
    shift_estimated = (rows[-1, 0] - rows[-1, 1]) - (rows[0, 0] - rows[0, 1])
    shift_true = (rows[-1, 2] - rows[-1, 3]) - (rows[0, 2] - rows[0, 3])
    print(
        f"G1 {engine}: sole load RMS error {rms.round(2)} N; left-right shift estimated "
        f"{shift_estimated:.1f} N, true {shift_true:.1f} N"
    )
    assert np.all(rms < 3.0)
    assert abs(shift_true) > 5.0
    assert abs(shift_estimated - shift_true) < 0.3 * abs(shift_true)
