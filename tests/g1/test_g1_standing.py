"""G1 stands on its servos alone (no controller), on our simulator and on MuJoCo.

The command holds the initial posture: position references = the initial posture, feed-forward =
the joint torques that hold it with both soles on the ground
(``WholeBodyModel.static_contact_torques``), with the robot config's own servo gains. Over 5 s
of simulated time the base must stay within 1 cm of its initial height and the feet must not
move. References: the initial configuration, m g, the CoM (Pinocchio), and for the compliant
contact the closed-form static sink of the sole corners, d = (f / K)^(2/3) (the law's
f = K d^1.5 at rest), with the corner loads from the static wrenches by the lever rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from g1_helpers import FEET

from wbm_description import WholeBodyModel
from wbm_description.robot_io import JointCommand
from wbm_dynamics.mujoco.engine import MujocoEngine
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

DURATION = 5.0  # [s] of simulated time
SAMPLE = 0.01  # [s] between the samples of the trajectory
GRAVITY = 9.81


@dataclass
class Stance:
    """What 5 s of standing did."""

    base_height_deviation: float  # max |z - z0| of the base [m]
    corners_horizontal: float  # max horizontal displacement of a sole corner [m]
    corners_vertical: float  # max vertical displacement of a sole corner [m]
    final_sole_height: dict[str, float]  # z of each sole frame at the end [m]
    final_q: np.ndarray
    final_truth: object


def sole_corners(model: WholeBodyModel, q: np.ndarray) -> np.ndarray:
    """World positions of the 8 sole corners [m], (8, 3)."""
    return np.array(
        [
            model.frame_placement(q, sole.frame).act(corner)
            for sole in model.config.soles
            for corner in sole.corners()
        ]
    )


def stand(engine, model: WholeBodyModel) -> Stance:
    q0 = model.initial_configuration()
    torques, _ = model.static_contact_torques(q0, list(FEET))
    engine.set_command(JointCommand(position=model.joint_positions(q0), effort=torques))
    start = sole_corners(model, q0)
    height, horizontal, vertical = 0.0, 0.0, 0.0
    steps = round(SAMPLE / engine.dt)
    for _ in range(round(DURATION / SAMPLE)):
        engine.step(steps)
        q = engine.ground_truth().q
        assert engine.diverged is None, engine.diverged
        height = max(height, abs(q[2] - q0[2]))
        moved = sole_corners(model, q) - start
        horizontal = max(horizontal, np.linalg.norm(moved[:, :2], axis=1).max())
        vertical = max(vertical, np.abs(moved[:, 2]).max())
    truth = engine.ground_truth()
    assert truth.time == pytest.approx(DURATION)
    sole_height = {f: model.frame_placement(truth.q, f).translation[2] for f in FEET}
    return Stance(height, horizontal, vertical, sole_height, truth.q, truth)


def static_sink(model: WholeBodyModel, stiffness: float) -> dict[str, float]:
    """Closed-form sink of each sole frame's origin on the compliant ground [m], > 0 down.

    Each sole's static wrench (force f_z, moment m_y at the sole origin) is carried by its heel
    and toe corner pairs; the lever rule splits it, each corner sinks (f_corner / K)^(2/3), and
    the sole origin sinks by the linear interpolation between heel and toe.
    """
    q0 = model.initial_configuration()
    _, wrenches = model.static_contact_torques(q0, list(FEET))
    sinks = {}
    for sole in model.config.soles:
        force, moment_y = wrenches[sole.frame][2], wrenches[sole.frame][4]
        cop_x = -moment_y / force  # in the sole frame (flat, world-aligned at q0)
        heel = sole.center[0] - sole.length / 2
        toe = sole.center[0] + sole.length / 2
        toe_load = force * (cop_x - heel) / (toe - heel)
        heel_load = force - toe_load
        d_toe = (toe_load / 2 / stiffness) ** (2 / 3)
        d_heel = (heel_load / 2 / stiffness) ** (2 / 3)
        sinks[sole.frame] = d_heel + (d_toe - d_heel) * (0.0 - heel) / (toe - heel)
    return sinks


@pytest.mark.slow
@pytest.mark.parametrize("contact_model", ["compliant", "rigid"])
def test_g1_stands_on_our_simulator(g1: WholeBodyModel, contact_model):
    settings = SimulatorSettings(contact_model=contact_model)
    stance = stand(Simulator(g1, settings), g1)
    # Base height within 1 cm (measured 0.57 mm compliant, where the soles sink into the
    # ground, 1e-7 mm rigid). Feet still: no sole corner slides 1 mm (measured 0.08 mm
    # compliant, the ground's tangential springs; 1e-5 mm rigid) or moves 2 mm vertically (the
    # contact's penetration and the settling sway: measured 0.65 mm compliant, 2e-7 mm rigid).
    assert stance.base_height_deviation < 0.01
    assert stance.corners_horizontal < 1e-3
    assert stance.corners_vertical < 2e-3
    truth = stance.final_truth
    weight = g1.total_mass * GRAVITY
    # The ground carries the weight: 1 % (measured 2e-7 compliant, 4e-6 rigid).
    np.testing.assert_allclose(truth.total_contact_force[2], weight, rtol=1e-2)
    # Quasi-static: the centre of pressure of the corner forces is under the CoM, 2 mm
    # (measured 0.012 mm compliant, 0.0003 mm rigid).
    loaded = {k: f for k, f in truth.contact_forces.items() if f[2] > 0.0}
    cop = sum(truth.contact_positions[k][:2] * f[2] for k, f in loaded.items()) / sum(
        f[2] for f in loaded.values()
    )
    np.testing.assert_allclose(cop, g1.com_position(stance.final_q)[:2], atol=2e-3)
    if contact_model == "compliant":
        # Each sole sinks as the contact law says under its static load: 10 um (measured
        # 0.2 um on 408 um; the servos' sway moves the feet's centres of pressure a little).
        expected = static_sink(g1, settings.compliant.stiffness)
        for frame in FEET:
            assert stance.final_sole_height[frame] == pytest.approx(-expected[frame], abs=1e-5)


@pytest.mark.slow
def test_g1_stands_on_mujoco(g1: WholeBodyModel):
    engine = MujocoEngine(g1)
    stance = stand(engine, g1)
    # Same criteria; measured: base within 0.82 mm (MuJoCo's soft contact lets the soles sink
    # 0.73 mm), corners 0.009 mm horizontally and 0.79 mm vertically.
    assert stance.base_height_deviation < 0.01
    assert stance.corners_horizontal < 1e-3
    assert stance.corners_vertical < 2e-3
    for frame in FEET:
        assert -2e-3 < stance.final_sole_height[frame] <= 0.0
    weight = g1.total_mass * GRAVITY
    # 1 % as above (measured 4e-7 relative).
    np.testing.assert_allclose(stance.final_truth.total_contact_force[2], weight, rtol=1e-2)
