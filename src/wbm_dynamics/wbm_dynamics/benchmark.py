"""Speed of the simulation core: real-time factors and the cost of one step (no ROS).

The scenario is iCub standing at a 1 ms step, held by its joint servos (PD on the initial
posture with the static torques as feed-forward, servo stiffness 300 N m/rad as in the tests).
The floor is one bare Pinocchio forward-dynamics call (ABA) of the same model: a step can never
cost less than that. Used by the ``wbm_benchmark_simulator`` command.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_description.registry import load_robot
from wbm_description.robot_io import JointCommand
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

CONTACT_MODELS = ("compliant", "rigid")
INTEGRATORS = ("semi_implicit_euler", "rk4")
STANDING_KP = 300.0  # [N m/rad] on every joint whose config stiffness is > 50 N m/rad


@dataclass(frozen=True)
class Timing:
    """Median and spread of repeated measurements.

    Attributes:
        median: Median value.
        low: Smallest value.
        high: Largest value.
    """

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: list[float]) -> Timing:
        """Summary of some measurements."""
        return cls(statistics.median(values), min(values), max(values))


def standing_model(robot: str = "icub") -> WholeBodyModel:
    """The robot with the standing servo stiffness of the tests."""
    config = load_robot(robot)
    kp = np.where(config.servo_kp > 50.0, STANDING_KP, config.servo_kp)
    return WholeBodyModel.from_config(dataclasses.replace(config, servo_kp=kp))


def standing_simulator(model: WholeBodyModel, settings: SimulatorSettings) -> Simulator:
    """A simulator with the robot standing, servos holding the initial posture."""
    sim = Simulator(model, settings)
    q0 = model.initial_configuration()
    contacts = [sole.frame for sole in model.config.soles] if model.config else []
    feed_forward = (
        model.static_contact_torques(q0, contacts)[0] if contacts else model.gravity_forces(q0)[6:]
    )
    sim.set_command(JointCommand(position=model.joint_positions(q0), effort=feed_forward))
    return sim


def core_real_time_factor(
    model: WholeBodyModel,
    contact_model: str,
    integrator: str,
    *,
    duration: float = 1.0,
    runs: int = 5,
) -> Timing:
    """Real-time factor (simulated seconds per wall second) of ``Simulator.step``.

    Each run simulates ``duration`` seconds of standing from the initial state (after a 0.1 s
    settling that is not timed).
    """
    settings = SimulatorSettings(contact_model=contact_model, integrator=integrator)
    factors = []
    for _ in range(runs):
        sim = standing_simulator(model, settings)
        sim.step(100)
        steps = round(duration / settings.dt)
        start = time.perf_counter()
        sim.step(steps)
        factors.append(steps * settings.dt / (time.perf_counter() - start))
    return Timing.of(factors)


def forward_dynamics_cost(model: WholeBodyModel, *, calls: int = 2000, runs: int = 5) -> Timing:
    """Cost of one bare ``pin.aba`` call at the standing configuration [s]."""
    data = model.model.createData()
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    tau = np.zeros(model.nv)
    costs = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            pin.aba(model.model, data, q, v, tau)
        costs.append((time.perf_counter() - start) / calls)
    return Timing.of(costs)
