"""``wbm_benchmark_controller``: time the IK and whole-body QP steps.

Prints, for the robot of ``--config`` (iCub by default; G1: ``config/g1/controller.yaml``)
standing in double support (the config's initial posture, sensors of a robot
at rest), the median and 99th percentile wall time of:

- the machine reference: one ``pin.aba`` and one ``pin.crba`` on the robot (compare figures across
  machines by their ratio to it);
- the IK's QP built directly and by pink's ``build_ik`` (the reference: same matrices), one IK
  step (direct build + the IK's solver, quadprog by default) and one whole controller step in
  mode "ik" (each sample's joints at the last command's positions and velocities: a
  position-controlled robot tracking its references), with the step's own breakdown
  (estimator, kinematics, ZMP estimation, targets, IK, feed-forward, command) and its CPU time
  per step (``time.process_time``, less sensitive to other processes than wall time);
- one whole-body QP solve by proxsuite (warm-started as in the loop, with the polish) and by the
  step's solver (the KKT solve on the last active set, proxsuite only when that is not the
  optimum, :mod:`wbm_control.qp`), and one whole controller step in mode "torque" with its
  breakdown (estimator, kinematics: the step's one pass shared by the ZMP estimate and the
  mode, ZMP estimation, QP build, solve (proxsuite; its call only when the last active set
  answered), polish (or the last active set's KKT solve), command);
- the same whole-body QP solved by references: quadprog through qpsolvers (a dual active-set
  solver) and a dense KKT solve on proxsuite's active set, with their distance to proxsuite's
  solution. tsid (the issue's reference library) cannot be installed here: its PyPI source
  distribution needs libtsid, which has no binary wheel, so ``pip install tsid`` fails.

The largest push the controller survives in closed loop with the simulator is measured by
``wbm_benchmark_push`` (wbm_bringup), which needs both packages.

Run: ``wbm_benchmark_controller [--config config/icub/controller.yaml] [--samples 500]``
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.qp import DenseQPSolver
from wbm_description.registry import load_robot
from wbm_description.robot_io import ImuReading, RobotReadings
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.whole_body_model import WholeBodyModel

IDLE_PAUSE = 0.0015
"""Sleep between the steps of the paused row [s]: the wait of a 500 Hz controller node."""


def standing_readings(model: WholeBodyModel) -> RobotReadings:
    """Sensor values of the robot standing still in its initial posture (exact, from the model)."""
    q = model.initial_configuration()
    _, wrenches = model.static_contact_torques(q, [s.frame for s in model.config.soles])
    data = model.model.createData()
    pin.framesForwardKinematics(model.model, data, q)
    imu = data.oMf[model.frame_id(model.config.imu_frame)]
    readings = {}
    for sensor in model.config.ft_sensors:
        placement = data.oMf[model.frame_id(sensor.frame)]
        sensor_joint = model.model.frames[model.frame_id(sensor.frame)].parentJoint
        total = np.zeros(6)
        for sole in model.config.soles:
            frame = model.model.frames[model.frame_id(sole.frame)]
            if frame.parentJoint == sensor_joint:
                origin = data.oMf[model.frame_id(sole.frame)].translation
                at_world = pin.SE3(np.eye(3), origin).act(pin.Force(wrenches[sole.frame]))
                total += placement.actInv(at_world).vector
        readings[sensor.name] = total
    return RobotReadings(
        time=0.0,
        joint_positions=q[7:].copy(),
        joint_velocities=np.zeros(model.ndof),
        joint_efforts=np.zeros(model.ndof),
        imu=ImuReading(
            quaternion_of_rotation(imu.rotation).coeffs().copy(), np.zeros(3), np.zeros(3)
        ),
        wrenches=readings,
    )


def _timed(function, samples: int) -> np.ndarray:
    times = np.empty(samples)
    for i in range(samples):
        start = time.perf_counter()
        function()
        times[i] = time.perf_counter() - start
    return times


def _timed_steps(
    controller: WholeBodyController,
    readings: RobotReadings,
    samples: int,
    *,
    follow: bool = False,
    pause: float = 0.0,
):
    """Wall times of ``samples`` controller steps, per part (``controller.timings``) and total.

    ``pause``: a sleep after each step [s] (not timed), as a node waits for its next sample.

    ``follow``: the joints of each sample are those the last command asked for (positions and
    velocities): a position-controlled robot that tracks its references exactly, as mode "ik"
    assumes. Without it every sample is ``readings``: a robot that never moves, which mode "ik"
    keeps commanding motions it never sees happen (its feed-forward's accelerations grow until
    the wrench distribution is infeasible in about half of the steps).

    Returns:
        (total wall times [s], part name to wall times [s], CPU time per step [s]).
    """
    period = controller.settings.control_period
    total = np.empty(samples)
    parts: dict[str, np.ndarray] = {}
    cpu_start = time.process_time()
    sample = readings
    for i in range(samples):
        sample = replace(sample, time=(i + 1) * period)
        start = time.perf_counter()
        command = controller.step(sample)
        total[i] = time.perf_counter() - start
        if follow and command.position is not None and command.velocity is not None:
            sample = replace(
                sample,
                joint_positions=np.array(command.position, dtype=float),
                joint_velocities=np.array(command.velocity, dtype=float),
            )
        for name, value in controller.timings.items():
            parts.setdefault(name, np.empty(samples))[i] = value
        if pause > 0.0:
            time.sleep(pause)
    return total, parts, (time.process_time() - cpu_start) / samples


def machine_reference(model: WholeBodyModel, samples: int = 2000) -> dict[str, float]:
    """Median wall time [s] of one ``pin.aba`` and one ``pin.crba`` on the model, standing."""
    data = model.model.createData()
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    return {
        "pin.aba": float(np.median(_timed(lambda: pin.aba(model.model, data, q, v, v), samples))),
        "pin.crba": float(np.median(_timed(lambda: pin.crba(model.model, data, q), samples))),
    }


def _step_rows(name: str, note: str, total, parts, cpu) -> list[str]:
    rows = [_row(name, total, f"{note}; CPU {cpu * 1e3:.3f} ms per step")]
    for part, times in parts.items():
        share = 100.0 * np.median(times) / np.median(total)
        rows.append(_row(f"    {part}", times, f"{share:.0f} % of the median step"))
    return rows


def _row(name: str, times: np.ndarray, note: str = "") -> str:
    median, p99 = np.median(times) * 1e3, np.percentile(times, 99) * 1e3
    return f"| {name:<52} | {median:9.3f} | {p99:9.3f} | {note} |"


def _active_set_kkt(problem, x: np.ndarray, tolerance: float = 1e-6):
    """Dense KKT solve of the equality-constrained QP on the inequalities active at x."""
    Cx = problem.C @ x
    upper = np.abs(Cx - problem.u) <= tolerance * np.maximum(1.0, np.abs(problem.u))
    lower = np.abs(Cx - problem.l) <= tolerance * np.maximum(1.0, np.abs(problem.l))
    rows = np.vstack([problem.A, problem.C[upper], problem.C[lower]])
    rhs = np.concatenate([problem.b, problem.u[upper], problem.l[lower]])
    n, m = problem.H.shape[0], rows.shape[0]

    def solve() -> np.ndarray:
        kkt = np.zeros((n + m, n + m))
        kkt[:n, :n] = problem.H
        kkt[:n, n:] = rows.T
        kkt[n:, :n] = rows
        return np.linalg.lstsq(kkt, np.concatenate([-problem.g, rhs]), rcond=None)[0][:n]

    return solve, int(upper.sum() + lower.sum())


def benchmark_steps(
    model: WholeBodyModel, settings: ControllerSettings, samples: int
) -> list[str]:
    """The timing table (markdown lines)."""
    readings = standing_readings(model)
    reference = machine_reference(model)
    lines = [
        f"{model.config.name}, double support, {samples} samples per row, times in ms",
        "machine reference (median, this machine): "
        + ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in reference.items()),
        "",
        "| step | median | p99 | note |",
        "|---|---|---|---|",
    ]
    period = settings.control_period
    ik_controller = WholeBodyController(model, settings.replace(mode="ik"))
    ik_controller.step(readings)
    ik = ik_controller.mode.ik
    q_ik = ik_controller.mode.q.copy()
    direct, reference = ik.build(q_ik, period), ik.build_with_pink(q_ik, period)
    difference = max(
        float(np.max(np.abs(getattr(direct, name) - getattr(reference, name))))
        for name in ("P", "q", "G", "h")
    )
    lines += [
        _row(
            "IK QP build, direct (one kinematics pass)",
            _timed(lambda: ik.build(q_ik, period), samples),
            f"max abs difference to pink's build_ik {difference:.1e}",
        ),
        _row(
            "IK QP build, pink's build_ik (reference)",
            _timed(lambda: ik.build_with_pink(q_ik, period), samples),
        ),
        _row(
            f"IK step (direct build + {ik.solver})",
            _timed(lambda: ik.step(q_ik, period), samples),
            f"{model.nv} velocities, {len(ik.tasks)} tasks",
        ),
    ]
    lines += _step_rows(
        'controller step, mode "ik"',
        "estimator + IK + feed-forward"
        + (" (motion)" if settings.ik.motion_feedforward else " (quasi-static gravity)")
        + ", the joints tracking its references",
        *_timed_steps(ik_controller, readings, samples, follow=True),
    )
    controller = WholeBodyController(model, settings.replace(mode="torque"))
    controller.step(readings)
    problem = controller.mode.last_qp.problem.copy()  # the mode refills its QP at each step
    n, n_eq, n_in = problem.dimensions
    solver = controller.mode.solver
    x = solver.solve(problem)
    proxsuite_solver = DenseQPSolver(name="whole_body_qp", polish=True)
    proxsuite_solver.solve(problem)
    hits = solver.active_set_hits
    last_active_set = _timed(lambda: solver.solve(problem), samples)
    lines += [
        _row(
            "whole-body QP solve (proxsuite dense, warm, polished)",
            _timed(lambda: proxsuite_solver.solve(problem), samples),
            f"{n} variables, {n_eq} equalities, {n_in} inequalities",
        ),
        _row(
            "whole-body QP solve (the last active set's KKT)",
            last_active_set,
            f"the step's: answered {solver.active_set_hits - hits} of {samples} solves, "
            f"max abs difference to proxsuite's polished "
            f"{np.max(np.abs(solver.solve(problem) - proxsuite_solver.solve(problem))):.1e}",
        ),
    ]
    lines += _step_rows(
        'controller step, mode "torque"',
        "estimator + kinematics + QP build + solve",
        *_timed_steps(controller, readings, samples),
    )
    paused, _, paused_cpu = _timed_steps(controller, readings, samples, pause=IDLE_PAUSE)
    lines.append(
        _row(
            f'controller step, mode "torque", after {IDLE_PAUSE * 1e3:.1f} ms asleep',
            paused,
            f"as in a node, which sleeps until its next sample: the same step, its caches "
            f"(and on a virtual machine its CPU) cold; CPU {paused_cpu * 1e3:.3f} ms per step",
        )
    )
    try:
        import qpsolvers

        def quadprog_solve():
            return qpsolvers.solve_qp(
                problem.H,
                problem.g,
                np.vstack([problem.C, -problem.C]),
                np.concatenate([problem.u, -problem.l]),
                problem.A,
                problem.b,
                solver="quadprog",
            )

        reference = quadprog_solve()
        if reference is None:
            raise RuntimeError("quadprog found no solution")
        lines.append(
            _row(
                "reference: same QP, quadprog (qpsolvers)",
                _timed(quadprog_solve, samples),
                f"max abs difference to proxsuite {np.max(np.abs(reference - x)):.2e}",
            )
        )
    except Exception as error:  # noqa: BLE001 (an optional reference: say why it is missing)
        lines.append(f"| reference: quadprog | - | - | unavailable: {error} |")
    kkt_solve, active = _active_set_kkt(problem, x)
    kkt_x = kkt_solve()
    lines.append(
        _row(
            "reference: dense KKT solve on the active set (numpy)",
            _timed(kkt_solve, samples),
            f"{active} active inequalities, max abs difference to proxsuite "
            f"{np.max(np.abs(kkt_x - x)):.2e}",
        )
    )
    lines.append(
        "| reference: tsid | - | - | not installable here: `pip install tsid` fails (libtsid "
        "has no binary wheel); formulation not compared |"
    )
    return lines


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``wbm_benchmark_controller``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=Path("config/icub/controller.yaml"))
    parser.add_argument("--samples", type=int, default=500)
    args = parser.parse_args(argv)
    settings = (
        ControllerSettings.from_yaml(args.config) if args.config.exists() else ControllerSettings()
    )
    model = WholeBodyModel.from_config(load_robot(settings.robot))
    source = args.config if args.config.exists() else "built-in defaults"
    print(f"controller settings: {source}")
    for line in benchmark_steps(model, settings, args.samples):
        print(line)


if __name__ == "__main__":
    main()
