"""The same controller, with the same configuration, in closed loop on both engines.

iCub stands 0.5 s, then does seed 004's hand motion (3 cm forward and 3 cm sideways over 2 s).
The controller sees only RobotReadings (its estimator, not ground truth, feeds it) on our
simulator (compliant contact) and on MuJoCo (its own soft contact model). On both it must keep
iCub up with the feet in place and track the hand within the issue's 5 mm RMS; the two tracking
errors must differ by less than 2 mm: the engines differ in their contact models (penetration,
friction), which shows up in the hand only through the small sway of the base.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from wbm_bringup.closed_loop import run_closed_loop
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_dynamics.mujoco.engine import MujocoEngine
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

CONTROLLER_YAML = Path(__file__).resolve().parents[2] / "config" / "icub" / "controller.yaml"
CONTROL_RATE = 500.0  # [Hz], the node's default
DT = 1e-3  # both engines' step [s]
MARGIN = 2e-3  # largest difference of the two hand tracking RMS errors [m] (module docstring)


def hand_motion(model, engine, mode: str) -> tuple[float, float, bool]:
    config = replace(
        ControllerSettings.from_yaml(CONTROLLER_YAML), mode=mode, control_rate=CONTROL_RATE
    )
    controller = WholeBodyController(model, config)
    steps = round(1.0 / CONTROL_RATE / DT)
    run_closed_loop(controller, engine, 0.5, robot_steps_per_control=steps)
    feet0 = [
        model.frame_placement(engine.ground_truth().q, s.frame).translation
        for s in model.config.soles
    ]
    start = controller.frame_reference("left_hand")
    goal = pin.SE3(start.rotation, start.translation + np.array([0.03, 0.03, 0.0]))
    controller.set_frame_target("left_hand", goal, duration=2.0)
    errors = []

    def record(_t):
        q = engine.ground_truth().q
        reference = controller.frame_reference("left_hand")
        errors.append(
            np.linalg.norm(model.frame_placement(q, "l_hand").translation - reference.translation)
        )

    run_closed_loop(controller, engine, 2.5, robot_steps_per_control=steps, record=record)
    q = engine.ground_truth().q
    feet = [model.frame_placement(q, s.frame).translation for s in model.config.soles]
    moved = max(float(np.linalg.norm(a - b)) for a, b in zip(feet, feet0, strict=True))
    up = model.com_position(q)[2] > 0.35
    return float(np.sqrt(np.mean(np.square(errors)))), moved, up


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["torque", "ik"])
def test_same_controller_on_both_engines(icub, mode):
    ours = Simulator(
        icub, SimulatorSettings(dt=DT, integrator="semi_implicit_euler", contact_model="compliant")
    )
    ours.reset()
    mujoco_engine = MujocoEngine(icub)
    results = {
        "wbm simulator": hand_motion(icub, ours, mode),
        "mujoco": hand_motion(icub, mujoco_engine, mode),
    }
    print(
        {
            name: (f"{1e3 * rms:.2f} mm", f"feet {1e3 * moved:.3f} mm")
            for name, (rms, moved, _) in results.items()
        }
    )
    for name, (rms, moved, up) in results.items():
        assert up, f"{name}: iCub fell"
        assert moved < 1e-3, f"{name}: feet moved {moved:.4f} m"
        assert rms < 5e-3, f"{name}: hand tracking RMS {rms:.4f} m"
    difference = abs(results["wbm simulator"][0] - results["mujoco"][0])
    assert difference < MARGIN, results
