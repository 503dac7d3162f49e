"""Benchmark: the time of a control step whose whole-body QP fails, and what it falls back on.

Run: ``python -m wbm_control.benchmark_fallback [--repeats N]``.

iCub standing on both soles (the config's initial posture, zero velocity, the static contact
wrenches on its F/T sensors), mode "torque". A feasible step is timed, then steps whose QP is
made infeasible by a minimum normal force of 3 kN per sole (iCub weighs 330 N; the torque limits
cannot hold the soles while pressing that hard), side by side:

* ``old``: proxsuite's iteration limit of 1000 and no fallback (the failed step ends in the
  damped hold), the behaviour before issue 15;
* ``new``: the configured iteration limit (``torque.max_iterations``) and the fallback chain
  (:mod:`wbm_control.qp_fallback`).

Each row gives the median, 90th percentile and maximum of the step's wall time and CPU time
(``time.process_time``, less sensitive to other processes on the machine), the median wall time
of the fallback chain alone, and the level used.
A machine reference is printed beside them: the median time of one ``pin.aba`` on iCub.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_description.registry import load_robot
from wbm_description.robot_io import ImuReading, RobotReadings
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.whole_body_model import WholeBodyModel


def standing_readings(model: WholeBodyModel, t: float) -> RobotReadings:
    """The sensors of the robot standing still at its initial posture (flat ground)."""
    q = model.initial_configuration()
    data = model.model.createData()
    pin.framesForwardKinematics(model.model, data, q)
    _, by_frame = model.static_contact_torques(q, [s.frame for s in model.config.soles])
    wrenches = {}
    for sensor in model.config.ft_sensors:
        sensor_pose = data.oMf[model.frame_id(sensor.frame)]
        parent = model.model.frames[model.frame_id(sensor.frame)].parentJoint
        total = np.zeros(6)
        for sole in model.config.soles:
            if model.model.frames[model.frame_id(sole.frame)].parentJoint != parent:
                continue
            sole_pose = data.oMf[model.frame_id(sole.frame)]
            at_origin = pin.SE3(np.eye(3), sole_pose.translation).act(
                pin.Force(by_frame[sole.frame])
            )
            total += sensor_pose.actInv(at_origin).vector
        wrenches[sensor.name] = total
    imu = data.oMf[model.frame_id(model.config.imu_frame)]
    return RobotReadings(
        time=t,
        joint_positions=q[7:].copy(),
        joint_velocities=np.zeros(model.ndof),
        joint_efforts=np.zeros(model.ndof),
        imu=ImuReading(
            orientation_xyzw=quaternion_of_rotation(imu.rotation).coeffs().copy(),
            angular_velocity=np.zeros(3),
            linear_acceleration=imu.rotation.T @ -np.asarray(model.config.gravity, dtype=float),
        ),
        wrenches=wrenches,
    )


def aba_reference(model: WholeBodyModel, repeats: int = 2000) -> float:
    """Median time of one pin.aba on the model [s] (machine reference)."""
    data = model.model.createData()
    q, v, tau = model.initial_configuration(), np.zeros(model.nv), np.zeros(model.nv)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        pin.aba(model.model, data, q, v, tau)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def failing_steps(
    model: WholeBodyModel, settings: ControllerSettings, repeats: int
) -> tuple[list[float], list[float], list[str], list[float]]:
    """Steps whose QP is infeasible: wall and CPU times [s], outcomes, fallback chain times.

    The chain's wall time [s] is 0 without a fallback.
    """
    controller = WholeBodyController(model, settings)
    t = 0.0
    for _ in range(5):  # a few good steps: the solver is warm, as in a running loop
        controller.step(standing_readings(model, t))
        t += settings.control_period
    controller.settings = settings.replace(torque=settings.torque.replace(min_normal_force=3000.0))
    walls, cpus, outcomes, chain = [], [], [], []
    for _ in range(repeats):
        readings = standing_readings(model, t)
        wall, cpu = time.perf_counter(), time.process_time()
        controller.step(readings)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        status = controller.status
        outcomes.append("damped hold" if status.safe else status.fallback or "solved")
        fallback = getattr(controller.mode, "fallback", None)
        result = fallback.last_result if fallback is not None else None
        chain.append(result.solve_time if result is not None and status.fallback else 0.0)
        t += settings.control_period
    return walls, cpus, outcomes, chain


def summary(values: Sequence[float]) -> str:
    """Median, 90th percentile and maximum [ms]."""
    v = np.asarray(values) * 1e3
    return f"{np.median(v):7.2f} {np.percentile(v, 90):7.2f} {v.max():7.2f}"


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="failing steps per row")
    args = parser.parse_args(argv)
    model = WholeBodyModel.from_config(load_robot("icub"))
    base = ControllerSettings(robot="icub", mode="torque")
    rows = {
        "old (max_iter 1000, no fallback)": base.replace(
            torque=base.torque.replace(max_iterations=1000),
            fallback=base.fallback.replace(enabled=False),
        ),
        f"new (max_iter {base.torque.max_iterations}, fallback)": base,
    }
    print(f"machine reference: pin.aba on iCub {aba_reference(model) * 1e6:.1f} us (median)")
    print(
        f"{'failing step':36s} {'wall ms: median p90 max':>25s} {'cpu ms: median p90 max':>25s}"
        f" {'chain ms':>9s}   outcome"
    )
    for _ in range(2):  # interleaved rounds: both rows see the same machine load
        for label, settings in rows.items():
            walls, cpus, outcomes, chain = failing_steps(model, settings, args.repeats)
            levels = ", ".join(f"{o} x{outcomes.count(o)}" for o in sorted(set(outcomes)))
            print(
                f"{label:36s} {summary(walls):>25s} {summary(cpus):>25s} "
                f"{np.median(chain) * 1e3:9.2f}   {levels}"
            )


if __name__ == "__main__":
    main()
