"""The lateral sway of a walk, per single support, and the lag of the estimated CoM velocity.

The robot walks forward (torque mode, in-process rig of :mod:`wbm_bringup.walking_rig`, compliant
ground; ``--robot g1``: 0.12 m/s at a 0.5 ms engine step, iCub 0.2 m/s at 1 ms) for ``--seconds``
after the CoM lowering. Per single support it prints, laterally in the stance sole's frame
(+: to the sole's left) [mm] from the sole rectangle's centre: the planned ZMP (min/max), the
planned CoM (min/max), the true centre of pressure (mean) and the DCM error (estimated minus
planned, mean). A symmetric walk has mirrored rows (the ZMP near 0 on both soles, the CoM's
ranges equal in size and opposite in sign). Then the estimated CoM velocity's lag behind the
true one: the delay (in control periods) that minimizes the RMS difference, and that RMS.

``--no-accelerometer``: the estimator's first-order low-pass alone (the code before the
accelerometer fusion); ``--lead right``: the first step with the right foot (default: left).

usage: python tools/walk_sway.py [--robot g1] [--seconds 7] [--no-accelerometer]
       [--lead right]
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
import pinocchio as pin

from wbm_bringup.closed_loop import run_closed_loop
from wbm_bringup.share import config_directory
from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_control.walking.footstep_planner import FootstepPlanner
from wbm_description import WholeBodyModel, load_robot

ROBOTS = {"icub": (1e-3, 0.2), "g1": (5e-4, 0.12)}  # robot: (engine step [s], speed [m/s])


def lateral(feet, step, point) -> float:
    """A point's lateral offset from a footstep's sole centre, in the sole's frame [m]."""
    d = np.asarray(point)[:2] - feet.center(step)
    return -math.sin(step.yaw) * d[0] + math.cos(step.yaw) * d[1]


def main(argv: list[str] | None = None) -> int:
    """Walk, record, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="g1", choices=sorted(ROBOTS))
    parser.add_argument("--seconds", type=float, default=7.0)
    parser.add_argument("--no-accelerometer", action="store_true")
    parser.add_argument("--lead", default="left", choices=("left", "right"))
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.lead == "right":
        FootstepPlanner.lead_side = staticmethod(lambda lateral, yaw: "right")
    dt, speed = ROBOTS[args.robot]
    model = WholeBodyModel.from_config(load_robot(args.robot))
    settings = controller_settings(config_directory(args.robot) / "controller.yaml", "torque")
    rig = make_walking_rig(model, settings, "compliant", dt=dt, stand=0.0)
    if args.no_accelerometer:  # else the config's estimator.accelerometer
        rig.controller.estimator.accelerometer = False
    run_closed_loop(rig.controller, rig.engine, 1.0, robot_steps_per_control=rig.steps_per_control)
    rig.command("set_velocity_command", speed, 0.0, 0.0)
    rows: list[dict] = []
    record = rig._record  # noqa: SLF001
    data = rig.controller.pin_model.createData()

    def traced(t: float) -> None:
        record(t)
        refs = rig.behaviour.references
        if refs is None:
            return
        estimate, truth = rig.controller._last_estimate, rig.truth()  # noqa: SLF001
        pin.centerOfMass(rig.controller.pin_model, data, estimate.q, estimate.v)
        estimated = data.vcom[0][1]
        pin.centerOfMass(rig.controller.pin_model, data, truth.q, truth.v)
        sm = rig.behaviour.walking.state_machine
        rows.append(
            {
                "t": t,
                "stance": sm.stance_side,
                "step": sm.foot(sm.stance_side) if sm.stance_side else None,
                "zmp": refs.zmp[:2].copy(),
                "com": refs.com[:2].copy(),
                "cop": rig.true_cop(),
                "dcm_error": float(refs.dcm_error[1]),
                "v": (float(estimated), float(data.vcom[0][1])),
            }
        )

    rig._record = traced  # noqa: SLF001
    rig.run(args.seconds)
    feet = rig.behaviour.walking.geometry.feet
    print(
        f"# {args.robot} compliant torque {speed} m/s, lead {args.lead}, accelerometer "
        f"{rig.controller.estimator.accelerometer}, fallen {rig.metrics.fallen}"
    )
    print("stance  start   ZMP plan min/max   CoM plan min/max   true CoP  DCM error  [mm]")
    groups: list[list[dict]] = []
    previous = None
    for row in rows:
        if row["stance"] is not None:
            new = previous is None or previous["stance"] is None
            if new or previous["step"] is not row["step"]:
                groups.append([])
            groups[-1].append(row)
        previous = row
    for group in groups:
        step = group[0]["step"]
        zmp = [lateral(feet, step, r["zmp"]) * 1e3 for r in group]
        com = [lateral(feet, step, r["com"]) * 1e3 for r in group]
        cop = [lateral(feet, step, r["cop"]) * 1e3 for r in group if r["cop"] is not None]
        error = np.mean([r["dcm_error"] for r in group]) * 1e3  # world y: the sole's, walking on x
        print(
            f"{step.side:6s} {group[0]['t']:6.2f}  {min(zmp):7.1f} {max(zmp):7.1f}    "
            f"{min(com):7.1f} {max(com):7.1f}    {np.mean(cop):7.1f}  {error:7.1f}"
        )
    estimated, true = (np.array(v) for v in zip(*(r["v"] for r in rows), strict=True))
    lags = [
        (float(np.sqrt(np.mean((estimated[k:] - true[: len(true) - k]) ** 2))), k)
        for k in range(0, 30)
    ]
    rms, lag = min(lags)
    period = settings.control_period
    print(
        f"# estimated CoM lateral velocity: lag {lag} control periods"
        f" ({lag * period * 1e3:.0f} ms), RMS {rms * 1e3:.1f} mm/s at that lag,"
        f" {lags[0][0] * 1e3:.1f} mm/s at none"
        f" (true RMS {np.sqrt(np.mean(true**2)) * 1e3:.0f} mm/s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
