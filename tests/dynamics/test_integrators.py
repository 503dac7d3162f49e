"""Integrators against closed forms and conservation laws (no contact)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from dynamics_helpers import GRAVITY, box_corners

from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

DT = 1e-3


def test_free_fall_semi_implicit_euler_matches_its_closed_form(box_model):
    sim = Simulator(box_model, SimulatorSettings(), contact_points=box_corners())
    q0 = pin.neutral(box_model.model)
    q0[2] = 2.0
    v0 = np.array([0.3, -0.2, 1.0, 0.0, 0.0, 0.0])  # thrown up and sideways
    sim.reset(q0, v0)
    n = 400
    sim.step(n)
    t = n * DT
    # v_{k+1} = v_k - g dt, z_{k+1} = z_k + dt v_{k+1}:  z_n = z0 + v0 t - g dt^2 n (n + 1) / 2.
    expected_z = 2.0 + v0[2] * t - GRAVITY * DT**2 * n * (n + 1) / 2
    # Round-off only (400 additions of O(1) numbers): 1e-12 m.
    np.testing.assert_allclose(sim.q[2], expected_z, atol=1e-12)
    np.testing.assert_allclose(sim.q[:2], [0.3 * t, -0.2 * t], atol=1e-12)
    np.testing.assert_allclose(sim.v[2], v0[2] - GRAVITY * t, atol=1e-12)
    # Against the continuous parabola the scheme's error is g dt t / 2.
    np.testing.assert_allclose(
        sim.q[2], 2.0 + v0[2] * t - GRAVITY * t**2 / 2, atol=GRAVITY * DT * t
    )


def test_free_fall_rk4_matches_the_parabola(box_model):
    sim = Simulator(box_model, SimulatorSettings(integrator="rk4"), contact_points=box_corners())
    q0 = pin.neutral(box_model.model)
    q0[2] = 2.0
    # A spinning box: the base twist is in the body frame, the fall in the world frame.
    v0 = np.array([0.0, 0.0, 1.0, 0.5, -1.0, 2.0])
    sim.reset(q0, v0)
    sim.step(400)
    t = 0.4
    com = box_model.com_position(sim.q)
    # RK4 is exact on a quadratic: round-off only.
    np.testing.assert_allclose(com, [0.0, 0.0, 2.0 + 1.0 * t - GRAVITY * t**2 / 2], atol=1e-9)
    # The spin of a cube (isotropic inertia) is constant: its world angular velocity too.
    omega_world = sim.q[3:7]
    rotation = pin.Quaternion(omega_world[3], *omega_world[:3]).toRotationMatrix()
    np.testing.assert_allclose(rotation @ sim.v[3:6], v0[3:6], atol=1e-9)


def random_motion(model, seed=3):
    """iCub 10 m above the ground (no contact) with a random base twist and joint velocities."""
    rng = np.random.default_rng(seed)
    q = model.initial_configuration()
    q[2] += 10.0
    v = np.concatenate([rng.normal(0.0, 0.3, 6), rng.normal(0.0, 0.2, model.ndof)])
    return q, v


@pytest.mark.parametrize(
    ("integrator", "energy_rtol", "momentum_rtol", "com_atol"),
    [
        # RK4: local error O(dt^5): measured drifts over 0.5 s are at round-off (~5e-15).
        ("rk4", 1e-10, 1e-10, 1e-10),
        # Semi-implicit Euler is first order: measured after 0.5 s at dt = 1 ms (and halved at
        # 0.5 ms): energy 1.4e-5, momentum 1.4e-4 relative (the base twist is integrated in the
        # rotating base frame), CoM 7.6e-5 m. Tolerances ~3x those.
        ("semi_implicit_euler", 5e-5, 5e-4, 2e-4),
    ],
)
def test_energy_and_momentum_are_conserved_without_contact_and_gravity(
    icub_free, integrator, energy_rtol, momentum_rtol, com_atol
):
    sim = Simulator(icub_free, SimulatorSettings(integrator=integrator), contact_points=[])
    q, v = random_motion(icub_free)
    sim.reset(q, v)
    energy0 = icub_free.kinetic_energy(q, v)
    momentum0 = icub_free.centroidal_momentum(q, v)
    com_velocity0 = icub_free.com_velocity(q, v)
    com0 = icub_free.com_position(q)
    momentum_atol = momentum_rtol * np.linalg.norm(momentum0)  # |h| ~ 30 [kg m/s]
    for _ in range(5):
        sim.step(100)
        q, v = sim.q, sim.v
        assert not icub_free.check_joint_limits(q), "a joint limit was hit: not a free motion"
        np.testing.assert_allclose(icub_free.kinetic_energy(q, v), energy0, rtol=energy_rtol)
        np.testing.assert_allclose(
            icub_free.centroidal_momentum(q, v), momentum0, atol=momentum_atol
        )
    # The CoM moves in a straight line at constant velocity.
    np.testing.assert_allclose(
        icub_free.com_position(sim.q), com0 + 0.5 * com_velocity0, atol=com_atol
    )


def test_rk4_is_fourth_order(icub_free):
    """Halving dt divides RK4's error over a fixed horizon by ~16 (semi-implicit Euler: ~2)."""

    def final_state(integrator, dt):
        sim = Simulator(
            icub_free, SimulatorSettings(integrator=integrator, dt=dt), contact_points=[]
        )
        sim.reset(*random_motion(icub_free, seed=5))
        sim.step(round(0.1 / dt))
        return sim.q

    def error(integrator, dt, reference):
        return np.linalg.norm(
            pin.difference(icub_free.model, reference, final_state(integrator, dt))
        )

    reference = final_state("rk4", 1e-4)
    ratio_rk4 = error("rk4", 4e-3, reference) / error("rk4", 2e-3, reference)
    ratio_euler = error("semi_implicit_euler", 4e-3, reference) / error(
        "semi_implicit_euler", 2e-3, reference
    )
    assert 12.0 < ratio_rk4 < 20.0  # 2^4 = 16
    assert 1.6 < ratio_euler < 2.5  # 2^1 = 2
