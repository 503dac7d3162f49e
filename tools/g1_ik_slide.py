"""Where the G1's held soles slide: one walk, each hold's displacement by phase (engine truth).

Walks the G1 forward at 0.12 m/s on cmd_vel (``--distance``, then the stop, as
``tests/walking_e2e/test_g1_walk_ik.py``) and prints the walking rig's metrics, then per held
sole (a hold: from the controller's contact activation to its release) the true displacement of
the sole frame's origin, horizontal [mm], from where it was ``SETTLE`` after the hold began (the
rig's ``slide``): at the end of the first double support, at the end of the single support, at
the release, and the largest one with when it was (seconds after the hold began); the sole's
true yaw change over the single support [deg]; the largest distance of the sole's own centre of
pressure ahead of its frame origin during the single support [mm] (the G1's toe edge is at
120 mm; MuJoCo only: our simulator reports its contacts per corner); the load at ``SETTLE``
[N]. Issue 14's diagnosis (README, the G1 "ik" rows).

Usage: python tools/g1_ik_slide.py --engine mujoco [--mode ik] [--distance 1.0] [--no-compensation]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from wbm_bringup.walking_rig import SETTLE, controller_settings, make_walking_rig
from wbm_description import WholeBodyModel, load_robot

CONTROLLER = Path(__file__).resolve().parents[1] / "config" / "g1" / "controller.yaml"
DT = {"compliant": 5e-4, "rigid": 5e-4, "mujoco": 1e-3}  # engine step [s] (test_g1_walk.py)
SPEED = 0.12  # [m/s]


def main() -> None:
    """Run the walk, print the metrics and the holds (see the module)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=sorted(DT), default="mujoco")
    parser.add_argument("--mode", choices=("ik", "torque"), default="ik")
    parser.add_argument("--distance", type=float, default=1.0, help="[m]")
    parser.add_argument(
        "--no-compensation",
        action="store_true",
        help="ik.sagittal_momentum_compensation off (the walk before it)",
    )
    args = parser.parse_args()
    settings = controller_settings(CONTROLLER, args.mode)
    if args.no_compensation:
        ik = replace(settings.ik, sagittal_momentum_compensation=False)
        settings = replace(settings, ik=ik)

    g1 = WholeBodyModel.from_config(load_robot("g1"))
    rig = make_walking_rig(g1, settings, args.engine, dt=DT[args.engine])
    soles = {s.name: s for s in g1.config.soles}
    rows: list[dict] = []
    record = rig._record  # noqa: SLF001 - the rig's own judge, then this trace

    def trace(t: float) -> None:
        record(t)
        truth = rig.truth()
        row = {"t": t, "held": set(rig.controller.contacts.active_names())}
        for name, sole in soles.items():
            placement = g1.frame_placement(truth.q, sole.frame)
            cop = truth.contact_positions.get(name)  # MuJoCo's per sole; ours per corner: none
            ahead = math.nan
            if cop is not None and np.all(np.isfinite(cop)):
                ahead = float(placement.rotation[:2, 0] @ (cop[:2] - placement.translation[:2]))
            row[name] = (
                placement.translation[:2].copy(),
                math.atan2(placement.rotation[1, 0], placement.rotation[0, 0]),
                rig.true_sole_forces()[name],
                ahead,
            )
        rows.append(row)

    rig._record = trace  # noqa: SLF001
    rig.command("set_velocity_command", SPEED, 0.0, 0.0)
    rig.run(args.distance / SPEED * 1.5, until=lambda: rig.mid_feet()[0] >= args.distance)
    if not rig.fallen():
        rig.behaviour.stop()
        rig.walk_until_standing(4.0)
    m = rig.metrics
    left, right = rig.sole_position("left_foot"), rig.sole_position("right_foot")
    print(
        f"G1 {args.engine} {args.mode}: fallen {m.fallen}, standing {rig.standing()}, {m.steps}"
        f" touch-downs {m.touchdowns}; slide {m.slide * 1e3:.2f} mm; ZMP margin"
        f" {m.zmp_margin * 1e3:.1f} mm; estimate error {m.estimate_error * 1e3:.1f} mm;"
        f" placement error {m.placement_error * 1e3:.1f} mm; feet"
        f" {abs(left[0] - right[0]) * 1e3:.1f} mm apart along x"
    )
    print(
        "sole   held at  load  first DS end   single end    release       max [mm] (at)"
        "   SS yaw  SS CoP ahead"
    )
    for name in soles:
        start = None
        for i, row in enumerate([*rows, None]):
            held = row is not None and name in row["held"]
            if held and start is None:
                start = i
            if held or start is None:
                continue
            hold, start = rows[start:i], None
            t0 = hold[0]["t"]
            k0 = next((k for k, r in enumerate(hold) if r["t"] - t0 >= SETTLE), None)
            if k0 is None:
                continue
            anchor = hold[k0][name][0]

            def moved(k, hold=hold, anchor=anchor, name=name):
                return (hold[k][name][0] - anchor) * 1e3

            single = [k for k in range(k0, len(hold)) if len(hold[k]["held"]) == 1]
            k_max = max(range(k0, len(hold)), key=lambda k: np.linalg.norm(moved(k)))
            cols = []
            if single:
                cols = [moved(single[0] - 1), moved(single[-1])]
            text = "  ".join(f"({d[0]:5.1f},{d[1]:5.1f})" for d in [*cols, moved(len(hold) - 1)])
            yaw = ahead = ""
            if single:
                yaws = [hold[k][name][1] for k in single]
                yaw = f"{math.degrees(max(yaws) - min(yaws)):5.2f}"
                aheads = [hold[k][name][3] for k in single if not math.isnan(hold[k][name][3])]
                ahead = f"{max(aheads) * 1e3:6.1f}" if aheads else ""
            print(
                f"{name[:5]:5s} {t0:7.2f} {hold[k0][name][2]:5.0f}  {text:40s}"
                f" {np.linalg.norm(moved(k_max)):5.2f} ({hold[k_max]['t'] - t0:4.2f})"
                f"  {yaw:>6s}  {ahead:>6s}"
            )


if __name__ == "__main__":
    main()
