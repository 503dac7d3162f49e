"""Recorded simulator trajectories: iCub standing and pushed, every contact model and integrator.

The reference file ``data/trajectory_reference.npz`` was written by this module with the simulator
as it was before the speed work of issue 11 (main at ef78723): ``python
tests/dynamics/trajectory_reference.py`` rewrites it (only do that for an intended change of
the physics). ``tests/dynamics/test_trajectory_regression.py`` replays the same runs with the
current code and compares.

Each run: iCub (servo stiffness 300 N m/rad, the tests' standing model) holding its initial
posture with the static torques as feed-forward, 1 ms step, 0.5 s. The push run applies 40 N
forward and 5 N m about z on ``root_link`` from 0.1 s for 0.1 s. Recorded every 25 steps: q, v,
the contact forces of the step, and the readings (joint torques, IMU, F/T wrenches).
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np

from wbm_description import WholeBodyModel, load_robot
from wbm_description.robot_io import JointCommand
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

REFERENCE_FILE = Path(__file__).resolve().parent / "data" / "trajectory_reference.npz"
CONTACT_MODELS = ("compliant", "rigid")
INTEGRATORS = ("semi_implicit_euler", "rk4")
SCENARIOS = ("standing", "push")
STEPS = 500  # 0.5 s at 1 ms
EVERY = 25  # record every 25 steps
PUSH_START = 100  # [steps]
PUSH_WRENCH = (40.0, 0.0, 0.0, 0.0, 0.0, 5.0)  # [N, N m], world axes at root_link's origin
PUSH_DURATION = 0.1  # [s]


def standing_model() -> WholeBodyModel:
    """iCub with servo stiffness 300 N m/rad on every joint stiffer than 50 (the tests')."""
    config = load_robot("icub")
    kp = np.where(config.servo_kp > 50.0, 300.0, config.servo_kp)
    return WholeBodyModel.from_config(dataclasses.replace(config, servo_kp=kp))


def run_names() -> list[str]:
    """``"<scenario>/<contact model>/<integrator>"`` of every recorded run."""
    return [
        f"{scenario}/{contact}/{integrator}"
        for scenario, contact, integrator in itertools.product(
            SCENARIOS, CONTACT_MODELS, INTEGRATORS
        )
    ]


def record(model: WholeBodyModel, name: str) -> dict[str, np.ndarray]:
    """Run one scenario and return its recorded arrays (keys ``q, v, forces, torques, ...``)."""
    scenario, contact, integrator = name.split("/")
    sim = Simulator(model, SimulatorSettings(contact_model=contact, integrator=integrator))
    q0 = model.initial_configuration()
    soles = [sole.frame for sole in model.config.soles]
    feed_forward = model.static_contact_torques(q0, soles)[0]
    sim.set_command(JointCommand(position=model.joint_positions(q0), effort=feed_forward))
    rows: dict[str, list[np.ndarray]] = {
        key: [] for key in ("q", "v", "forces", "torques", "imu", "ft")
    }
    for step in range(STEPS):
        if scenario == "push" and step == PUSH_START:
            sim.apply_wrench("root_link", PUSH_WRENCH, PUSH_DURATION)
        sim.step()
        if (step + 1) % EVERY:
            continue
        readings = sim.readings()
        truth = sim.ground_truth()
        rows["q"].append(truth.q)
        rows["v"].append(truth.v)
        rows["forces"].append(sim.contact_force_array().ravel())
        rows["torques"].append(readings.joint_efforts)
        imu = readings.imu
        rows["imu"].append(
            np.concatenate([imu.orientation_xyzw, imu.angular_velocity, imu.linear_acceleration])
        )
        rows["ft"].append(
            np.concatenate([readings.wrenches[k] for k in sorted(readings.wrenches)])
        )
    return {key: np.array(value) for key, value in rows.items()}


def write_reference() -> None:
    """Record every run into :data:`REFERENCE_FILE`."""
    model = standing_model()
    arrays = {}
    for name in run_names():
        for key, value in record(model, name).items():
            arrays[f"{name}/{key}"] = value
    REFERENCE_FILE.parent.mkdir(exist_ok=True)
    np.savez_compressed(REFERENCE_FILE, **arrays)


if __name__ == "__main__":
    write_reference()
