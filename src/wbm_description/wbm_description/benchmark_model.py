"""Benchmark of the whole-body model's main calls beside the bare Pinocchio calls they wrap.

Run ``wbm_benchmark_model [--robot icub] [--repeats 2000]``. For each call it prints the median
time and the 10-90 percentile spread over random states, for the wbm method and for the bare
Pinocchio call (the floor), and the wrapper overhead (input checks, copies, conversions).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from wbm_description.registry import DEFAULT_ROBOT, load_robot
from wbm_description.whole_body_model import WholeBodyModel


def time_call(function: Callable[[], object], repeats: int) -> np.ndarray:
    """Wall-clock durations [s] of ``repeats`` calls, after 50 warm-up calls."""
    for _ in range(50):
        function()
    durations = np.empty(repeats)
    for i in range(repeats):
        start = time.perf_counter()
        function()
        durations[i] = time.perf_counter() - start
    return durations


def rigid_contact_models(model: WholeBodyModel, frames: list[str]):
    """Pinocchio's own 6D rigid contacts (constraintDynamics) at the given frames."""
    contacts = pin.StdVec_RigidConstraintModel()
    for frame in frames:
        f = model.model.frames[model.frame_id(frame)]
        contacts.append(
            pin.RigidConstraintModel(
                pin.ContactType.CONTACT_6D,
                model.model,
                f.parentJoint,
                f.placement,
                pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
            )
        )
    datas = pin.StdVec_RigidConstraintData()
    for contact in contacts:
        datas.append(contact.createData())
    return contacts, datas


def run(
    robot: str = DEFAULT_ROBOT, repeats: int = 2000
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Time each call; returns (name, wbm durations, Pinocchio durations)."""
    model = WholeBodyModel.from_config(load_robot(robot))
    rng = np.random.default_rng(0)
    q = model.initial_configuration()
    v = rng.normal(size=model.nv) * 0.1
    tau = rng.normal(size=model.ndof)
    tau_full = model.generalized_torques(tau)
    frame = model.config.soles[0].frame if model.config.soles else model.frame_names[-1]
    frame_id = model.frame_id(frame)
    feet = [sole.frame for sole in model.config.soles]
    data = model.model.createData()
    m = model.model
    rows = [
        ("mass matrix", lambda: model.mass_matrix(q), lambda: pin.crba(m, data, q)),
        (
            "bias forces",
            lambda: model.bias_forces(q, v),
            lambda: pin.nonLinearEffects(m, data, q, v),
        ),
        (
            f"frame Jacobian ({frame}, mixed)",
            lambda: model.frame_jacobian(q, frame),
            lambda: pin.computeFrameJacobian(m, data, q, frame_id, pin.LOCAL_WORLD_ALIGNED),
        ),
        (
            "forward dynamics",
            lambda: model.forward_dynamics(q, v, tau),
            lambda: pin.aba(m, data, q, v, tau_full),
        ),
    ]
    if feet:
        contacts, datas = rigid_contact_models(model, feet)
        pin.initConstraintDynamics(m, data, contacts, datas)
        settings = pin.ProximalSettings(1e-12, 0.0, 1)
        rows.append(
            (
                f"contact forward dynamics ({len(feet)} x 6D)",
                lambda: model.contact_forward_dynamics(q, v, tau, feet),
                lambda: pin.constraintDynamics(m, data, q, v, tau_full, contacts, datas, settings),
            )
        )
    results = []
    for name, ours, bare in rows:
        results.append((name, time_call(ours, repeats), time_call(bare, repeats)))
    return results


def format_table(robot: str, results: list[tuple[str, np.ndarray, np.ndarray]]) -> str:
    """The benchmark table: median and 10-90 % spread in microseconds."""

    def cell(durations: np.ndarray) -> str:
        p10, p50, p90 = np.percentile(durations * 1e6, [10, 50, 90])
        return f"{p50:8.1f} [{p10:6.1f}-{p90:6.1f}]"

    header = (
        f"{'call (' + robot + ')':<38}{'wbm median [p10-p90] us':>26}"
        f"{'pinocchio median [p10-p90] us':>32}{'overhead':>10}"
    )
    lines = [header, "-" * len(header)]
    for name, ours, bare in results:
        ratio = np.median(ours) / np.median(bare)
        lines.append(f"{name:<38}{cell(ours):>26}{cell(bare):>32}{ratio:>9.2f}x")
    lines.append(
        "pinocchio column: the bare call (crba, nonLinearEffects, computeFrameJacobian, aba, "
        "constraintDynamics); overhead = wbm median / pinocchio median"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_model``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default=DEFAULT_ROBOT, help="robot name or config path")
    parser.add_argument("--repeats", type=int, default=2000, help="timed calls per row")
    args = parser.parse_args(argv)
    print(format_table(args.robot, run(args.robot, args.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
