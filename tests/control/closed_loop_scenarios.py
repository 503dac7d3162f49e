"""Closed-loop scenarios of the controller on the simulator core (shared by the tests).

The estimator, not ground truth, feeds the controller: ``controller.step(sim.readings())``.
Ground truth is only read to judge the result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin
from control_helpers import CONTROLLER_YAML

from wbm_bringup.closed_loop import run_closed_loop
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_description.support_geometry import convex_hull_2d, polygon_margin
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

SIM_DT = 1e-3  # the simulator's step [s] (the 1 ms)
CONTROL_RATE = 500.0  # the node's default rate [Hz]


@dataclass
class Rig:
    model: object
    sim: Simulator
    controller: WholeBodyController
    steps_per_control: int

    def run(self, duration, **kwargs):
        return run_closed_loop(
            self.controller,
            self.sim,
            duration,
            robot_steps_per_control=self.steps_per_control,
            **kwargs,
        )

    def sole_positions(self) -> dict[str, np.ndarray]:
        q = self.sim.ground_truth().q
        return {
            sole.name: self.model.frame_placement(q, sole.frame).translation.copy()
            for sole in self.model.config.soles
        }

    def com(self) -> np.ndarray:
        return self.model.com_position(self.sim.ground_truth().q)

    def true_cop_and_margin(self) -> tuple[np.ndarray | None, float]:
        """CoP of the true contact forces and its margin in the true support polygon [m]."""
        truth = self.sim.ground_truth()
        forces = np.array([truth.contact_forces[n] for n in truth.contact_forces])
        positions = np.array([truth.contact_positions[n] for n in truth.contact_forces])
        loaded = forces[:, 2] > 1e-6
        if forces[loaded, 2].sum() < 5.0:
            return None, -np.inf
        cop = (positions[loaded, :2] * forces[loaded, 2:3]).sum(axis=0) / forces[loaded, 2].sum()
        corners = [
            self.model.frame_placement(truth.q, sole.frame).act(corner)
            for sole in self.model.config.soles
            for corner in sole.corners()
        ]
        return cop, polygon_margin(cop, convex_hull_2d(corners))


def make_rig(model, mode: str, contact_model: str, *, joint_perturbation: float = 0.0, seed=0):
    config = replace(
        ControllerSettings.from_yaml(CONTROLLER_YAML), mode=mode, control_rate=CONTROL_RATE
    )
    sim = Simulator(
        model,
        SimulatorSettings(
            dt=SIM_DT, integrator="semi_implicit_euler", contact_model=contact_model
        ),
    )
    joints = (
        perturbed_posture(model, joint_perturbation, seed)
        if joint_perturbation
        else (model.initial_posture.copy())
    )
    # The left sole at the world origin, flat (where wbm puts the world frame).
    base = model.base_placement_for_reference_frame(joints, "l_sole")
    sim.reset(model.configuration(base, joints))
    controller = WholeBodyController(model, config)
    return Rig(model, sim, controller, round(1.0 / CONTROL_RATE / SIM_DT))


def perturbed_posture(model, scale: float, seed: int) -> np.ndarray:
    """The initial posture with random torso and arm joints (std ``scale`` [rad]) and both legs
    crouched by 2 ``scale`` (hip pitch +d, knee -2 d, ankle pitch +d): the soles stay flat and
    level, so the robot starts standing on both feet."""
    joints = model.initial_posture.copy()
    rng = np.random.default_rng(seed)
    for i, name in enumerate(model.joint_names):
        if not name.startswith(("l_hip", "l_knee", "l_ankle", "r_hip", "r_knee", "r_ankle")):
            joints[i] += rng.normal(0.0, scale)
    d = 2.0 * scale
    for side in ("l", "r"):
        joints[model.joint_index(f"{side}_hip_pitch")] += d
        joints[model.joint_index(f"{side}_knee")] -= 2.0 * d
        joints[model.joint_index(f"{side}_ankle_pitch")] += d
    lower, upper = model.joint_position_limits
    return np.clip(joints, lower + 1e-3, upper - 1e-3)


def pose_error_position(placement: pin.SE3, reference: pin.SE3) -> float:
    return float(np.linalg.norm(placement.translation - reference.translation))
