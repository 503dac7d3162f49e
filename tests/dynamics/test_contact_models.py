"""Contact physics against closed forms: a cube resting, sticking and sliding on the ground."""

from __future__ import annotations

import numpy as np
import pytest
from dynamics_helpers import BOX_MASS, BOX_SIZE, GRAVITY, box_corners, box_resting_configuration

from wbm_dynamics.settings import (
    CompliantContactSettings,
    RigidContactSettings,
    SimulatorSettings,
)
from wbm_dynamics.simulator import Simulator

WEIGHT = BOX_MASS * GRAVITY  # [N]
MU = 0.5


def simulator(box_model, contact_model: str, integrator: str = "semi_implicit_euler", **extra):
    settings = SimulatorSettings(
        contact_model=contact_model, integrator=integrator, ground_friction=MU, **extra
    )
    return Simulator(box_model, settings, contact_points=box_corners())


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_dropped_box_rests_at_the_analytic_penetration(box_model, integrator):
    stiffness = 1.0e6
    sim = simulator(
        box_model, "compliant", integrator, compliant=CompliantContactSettings(stiffness=stiffness)
    )
    sim.reset(box_resting_configuration(BOX_SIZE / 2 + 0.05))  # 5 cm above the ground
    sim.step(2000)
    truth = sim.ground_truth()
    # Static equilibrium of n = 4 points: n K d^(3/2) = m g  =>  d = (m g / (n K))^(2/3).
    expected_depth = (WEIGHT / (4 * stiffness)) ** (2.0 / 3.0)
    depth = BOX_SIZE / 2 - truth.q[2]
    # After 2 s the Hunt-Crossley damping has removed the bounce: measured 2e-13 relative
    # error on the depth and the force sum (both integrators); 1e-6 leaves room for round-off.
    np.testing.assert_allclose(depth, expected_depth, rtol=1e-6)
    np.testing.assert_allclose(truth.total_contact_force, [0.0, 0.0, WEIGHT], atol=1e-6 * WEIGHT)
    loaded = [f for f in truth.contact_forces.values() if f[2] > 0.0]
    assert len(loaded) == 4
    # Never pulling: every normal force is >= 0, at every step of a bounce.
    sim.reset(box_resting_configuration(BOX_SIZE / 2 + 0.05))
    for _ in range(300):
        sim.step(1)
        forces = sim.contact_force_array()
        assert forces[:, 2].min() >= 0.0


def push_box(box_model, contact_model: str, force: float, integrator="semi_implicit_euler"):
    """Rest the box, then push it along +x at its base for 1 s; returns (x, vx) samples.

    ``contact_model`` "rigid-pgs" is the rigid model with the PGS solver (default: ADMM).
    """
    extra = {}
    if contact_model == "rigid-pgs":
        contact_model = "rigid"
        extra["rigid"] = RigidContactSettings(solver="pgs")
    sim = simulator(box_model, contact_model, integrator, **extra)
    sim.reset(box_resting_configuration())
    sim.step(500)  # settle (compliant: sink to its rest depth)
    x0 = sim.q[0]
    sim.apply_wrench("box_bottom", [force, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)
    samples = []
    for _ in range(10):
        sim.step(100)
        samples.append((sim.time, sim.q[0] - x0, sim.v[0]))
    return np.array(samples), sim


@pytest.mark.parametrize("contact_model", ["compliant", "rigid", "rigid-pgs"])
def test_block_pushed_below_the_friction_limit_stays_put(box_model, contact_model):
    samples, sim = push_box(box_model, contact_model, 0.8 * MU * WEIGHT)
    displacement, speed = np.abs(samples[:, 1]).max(), abs(samples[-1, 2])
    if contact_model == "compliant":
        # Only the tangential springs stretch: u = F / (4 K_t sqrt(d)) ~ 0.3 mm.
        assert displacement < 1e-3
        assert speed < 1e-3
    else:
        # Rigid sticking: zero velocity up to the solver's tolerance.
        assert displacement < 1e-6
        assert speed < 1e-6
    friction = sim.ground_truth().total_contact_force
    np.testing.assert_allclose(friction[0], -0.8 * MU * WEIGHT, rtol=1e-2)


@pytest.mark.parametrize(
    ("contact_model", "integrator"),
    [
        ("compliant", "semi_implicit_euler"),
        ("compliant", "rk4"),
        ("rigid", "semi_implicit_euler"),
        ("rigid-pgs", "semi_implicit_euler"),
        ("rigid", "rk4"),
    ],
)
def test_block_pushed_above_the_friction_limit_slides_at_mu_m_g(
    box_model, contact_model, integrator
):
    push = 1.5 * MU * WEIGHT
    samples, sim = push_box(box_model, contact_model, push, integrator)
    # Coulomb sliding: m a = F - mu m g, once sliding has started (from 0.3 s on).
    expected = (push - MU * WEIGHT) / BOX_MASS
    times, speeds = samples[2:, 0], samples[2:, 2]
    measured = np.polyfit(times, speeds, 1)[0]
    np.testing.assert_allclose(measured, expected, rtol=1e-2)
    # The friction force opposes the sliding velocity with magnitude mu * f_n.
    friction = sim.ground_truth().total_contact_force
    np.testing.assert_allclose(friction[0], -MU * friction[2], rtol=1e-3)
    assert sim.v[0] > 0.0
