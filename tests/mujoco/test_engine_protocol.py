"""The engine protocol (wbm_dynamics.engine.Engine), the same on our simulator and on MuJoCo.

Each test runs on both engines: the shared checks (step counts, reset states, pushes), the push
bookkeeping (a push acts for its duration rounded up to whole steps: checked against the impulse
it gives, a closed form) and the divergence state.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from wbm_description import WholeBodyModel, load_robot
from wbm_description.exceptions import InputError, NameNotFound
from wbm_description.robot_io import RobotReadings
from wbm_dynamics.engine import Engine, GroundTruth
from wbm_dynamics.exceptions import SimulationDiverged
from wbm_dynamics.mujoco.engine import MujocoEngine
from wbm_dynamics.mujoco.settings import MujocoSettings
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator


def simulator(model, *, max_speed=1e3, rk4=False) -> Simulator:
    integrator = "rk4" if rk4 else "semi_implicit_euler"
    return Simulator(model, SimulatorSettings(max_speed=max_speed, integrator=integrator))


def mujoco(model, *, max_speed=1e3, rk4=False) -> MujocoEngine:
    settings = MujocoSettings(integrator="rk4" if rk4 else "implicitfast")
    return MujocoEngine(model, settings, max_speed=max_speed)


ENGINES = {"simulator": simulator, "mujoco": mujoco}


@pytest.fixture(scope="module")
def icub_frictionless() -> WholeBodyModel:
    """iCub without joint friction: nothing but the push changes its horizontal momentum."""
    config = load_robot("icub")
    zeros = np.zeros(config.ndof)
    return WholeBodyModel.from_config(
        dataclasses.replace(config, viscous_friction=zeros, coulomb_friction=zeros)
    )


def airborne(model) -> np.ndarray:
    """The initial configuration 1 m up: no contact."""
    q = model.initial_configuration()
    q[2] += 1.0
    return q


@pytest.mark.parametrize("name", ENGINES)
def test_state_time_and_checked_inputs(icub, name):
    engine = ENGINES[name](icub)
    assert isinstance(engine, Engine)
    assert (engine.time, engine.steps, engine.diverged, engine.ndof) == (0.0, 0, None, icub.ndof)
    engine.step(0)
    engine.step(np.int64(7))
    assert engine.steps == 7 and engine.time == pytest.approx(7 * engine.dt, abs=1e-15)
    assert isinstance(engine.readings(), RobotReadings)
    assert isinstance(engine.ground_truth(), GroundTruth)
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError, match="number of steps"):
            engine.step(bad)
    for duration in (0.0, -1.0, float("inf"), "0.1"):
        with pytest.raises(InputError, match="duration"):
            engine.apply_wrench("root_link", np.zeros(6), duration)
    with pytest.raises(InputError, match="wrench"):
        engine.apply_wrench("root_link", [0.0, 0.0, np.nan, 0.0, 0.0, 0.0], 0.1)
    with pytest.raises(InputError, match="wrench"):
        engine.apply_wrench("root_link", np.zeros(5), 0.1)
    with pytest.raises(NameNotFound):
        engine.apply_wrench("no_such_link", np.zeros(6), 0.1)
    # Reset: time 0, the given state, the base quaternion normalized.
    q = airborne(icub)
    q[3:7] *= 1.0 + 5e-7  # within the model's check (squared norm 1 +- 2e-6)
    engine.reset(q)
    assert (engine.time, engine.steps) == (0.0, 0)
    np.testing.assert_allclose(np.linalg.norm(engine.q[3:7]), 1.0, atol=1e-15)
    np.testing.assert_allclose(engine.q[:3], q[:3], atol=1e-12)
    for bad in (q[:-1], np.concatenate([q[:3], 2.0 * q[3:7], q[7:]])):
        with pytest.raises(InputError, match="'q'"):
            engine.reset(bad)
    engine.close()


@pytest.mark.parametrize("name", ENGINES)
def test_a_push_acts_for_its_duration_in_whole_steps(icub_frictionless, name):
    """Airborne (no contact), a push of F along x for 3.5 ms acts for 4 steps of 1 ms: the
    robot's linear momentum along x grows by F * 4 ms (3 or 5 steps would be 25 % off; gravity
    is along z, the limp joints' limits are internal). RK4 on both engines: its momentum drift is
    at round-off (measured 6e-10 of the impulse; first-order schemes drift by ~3e-3 here, as the
    rotating robot's base twist is integrated in the base frame, see test_integrators), hence a
    tolerance of 1e-8 of the impulse."""
    model = icub_frictionless
    engine = ENGINES[name](model, rk4=True)
    engine.reset(airborne(model))
    force = 100.0

    def momentum_x() -> float:
        truth = engine.ground_truth()
        return model.total_mass * model.com_velocity(truth.q, truth.v)[0]

    before = momentum_x()
    engine.apply_wrench("root_link", np.array([force, 0.0, 0.0, 0.0, 0.0, 0.0]), 0.0035)
    engine.step(10)
    impulse = force * 0.004
    assert momentum_x() - before == pytest.approx(impulse, rel=1e-8)
    engine.step(10)  # the push has ended
    assert momentum_x() - before == pytest.approx(impulse, rel=1e-8)
    # A reset drops pushes in progress.
    engine.apply_wrench("root_link", np.array([force, 0.0, 0.0, 0.0, 0.0, 0.0]), 1.0)
    engine.reset(airborne(model))
    before = momentum_x()
    engine.step(10)
    assert momentum_x() - before == pytest.approx(0.0, abs=1e-8 * impulse)


@pytest.mark.parametrize("name", ENGINES)
def test_divergence_stops_the_engine_until_reset(icub, name):
    # Falling from 1 m, the base passes 0.5 m/s after about 50 ms.
    engine = ENGINES[name](icub, max_speed=0.5)
    engine.reset(airborne(icub))
    with pytest.raises(SimulationDiverged, match="0.5"):
        for _ in range(1000):  # step by step: MuJoCo checks at the end of each step() call
            engine.step(1)
    reason, stopped_at = engine.diverged, engine.time
    assert reason is not None and 0.03 < stopped_at < 0.1
    with pytest.raises(SimulationDiverged, match="call reset"):
        engine.step(1)
    engine.step(0)  # no step, no error
    assert engine.time == stopped_at
    engine.reset(airborne(icub))
    assert engine.diverged is None
    engine.step(10)
    assert engine.time == pytest.approx(10 * engine.dt)
