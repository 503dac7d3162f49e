"""iCub's turn in place then 1 m sideways (test_walk_paths.py), swept: is it a knife edge?

The iCub (torque mode, in-process rig of :mod:`wbm_bringup.walking_rig`) walks the square
footstep plan of ``tests/walking_e2e/test_walk_paths.py`` once; then one child process per
variant (forked: the rig is deterministic, so each child continues the same run) turns
``angle`` degrees on a goal pose at the spot moved by (dx, dy) [m] (world),
commanded ``delay`` [s] later, and walks 1 m to its left on a lateral cmd_vel and stops, as the
test does (optionally ``later`` [s] after the turn, at ``speed`` times the lateral limit). Per
variant it prints the turn and the sideways walk with issue 12's criteria.

usage: python tools/icub_paths_sweep.py [--engine rigid|compliant|mujoco]
       [--variants dx:dy:delay:angle[:later[:speed]],...] [--diagnose]
       [--zmp-inward-offset M]  (default: config/icub's)
       (default: the test's run and six perturbations; --diagnose prints the sideways walk's
       contact switches with the true DCM)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_description import WholeBodyModel, load_robot

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "walking_e2e"))
from test_walk_paths import square_plan  # noqa: E402

VARIANTS = "0:0:0:90,0:0.005:0:90,0:-0.005:0:90,0.005:0:0:90,0:0:0.1:90,0:0:0:89.97,0:0:0:90.03"


def summary(rig) -> str:
    """The criteria of issue 12 the rig measured."""
    m = rig.metrics
    return (
        f"fallen {m.fallen}, standing {rig.standing()}; {m.steps} steps {m.touchdowns}; slide"
        f" {m.slide * 1e3:.2f} mm; ZMP margin {m.zmp_margin * 1e3:.1f} mm at {m.zmp_margin_at};"
        f" estimate error {m.estimate_error * 1e3:.1f} mm"
    )


def diagnose(rig, axis: np.ndarray) -> None:
    """Print, at each contact switch, the true DCM and CoP along ``axis`` relative to the soles.

    Lateral coordinates [mm] along the robot's left (``axis``) from the mid-feet start; the DCM
    is the true CoM plus its velocity over omega (the LIP at the walking CoM height).
    """
    record, origin = rig._record, rig.mid_feet()[:2].copy()  # noqa: SLF001
    settings = rig.behaviour.walking.settings
    omega = math.sqrt(settings.gravity / settings.com_height)
    forward = np.array([axis[1], -axis[0]])

    def lateral(point) -> float:
        return float((np.asarray(point)[:2] - origin) @ axis) * 1e3

    def hook(t: float) -> None:
        record(t)
        refs = rig.behaviour.references
        if refs is None or not refs.contact_commands:
            return
        truth = rig.truth()
        com = rig.model.com_position(truth.q)
        dcm = com[:2] + rig.model.com_velocity(truth.q, truth.v)[:2] / omega
        cop = rig.true_cop()
        soles = {
            side: lateral(rig.sole_position(name))
            for side, name in (("L", rig.behaviour.left_sole), ("R", rig.behaviour.right_sole))
        }
        along = float((dcm - origin) @ forward) * 1e3
        for command in refs.contact_commands:
            print(
                f"    {t:7.3f} {type(command).__name__[:7]} {command.side:5s}"
                f" {getattr(command, 'reason', ''):15s} soles L {soles['L']:7.1f} R"
                f" {soles['R']:7.1f}; DCM {lateral(dcm):7.1f} (ref {lateral(refs.dcm):7.1f},"
                f" along {along:5.1f}); CoP {lateral(cop) if cop is not None else math.nan:7.1f};"
                f" ZMP ref {lateral(refs.zmp):7.1f}",
                flush=True,
            )

    rig._record = hook  # noqa: SLF001


def variant(
    rig,
    dx: float,
    dy: float,
    delay: float,
    angle: float,
    later: float = 0.0,
    speed: float = 1.0,
    trace: bool = False,
) -> str:
    """The turn and the sideways walk from the rig's state; their results.

    ``later`` [s]: the sideways command this long after the turn's standing; ``speed``: the
    lateral command as a fraction of ``max_lateral_velocity``.
    """
    if delay > 0.0:
        rig.run(delay)
    turned, moved = rig.turn_on_goal(math.radians(angle), 12.0, dx, dy)
    lines = [f"  turn {math.degrees(turned):.2f} deg, moved {moved * 1e3:.1f} mm; {summary(rig)}"]
    if rig.metrics.fallen:
        return "\n".join(lines)
    if later > 0.0:
        rig.run(later)
    speed *= rig.behaviour.walking.settings.max_lateral_velocity
    if trace:
        yaw = rig.mid_yaw()
        diagnose(rig, np.array([-math.sin(yaw), math.cos(yaw)]))  # the walk's left axis
    sideways, along = rig.walk_sideways(1.0, speed)
    m = rig.metrics
    ok = (
        not m.fallen
        and rig.standing()
        and m.slide <= 5e-3
        and m.zmp_margin >= -m.estimate_error
        and sideways >= 1.0
        and along <= 0.01
        and set(m.touchdowns) <= {"touchdown", "early_touchdown"}
    )
    lines.append(
        f"  sideways {sideways:.3f} m in {m.duration:.1f} s, feet {along * 1e3:.1f} mm apart;"
        f" {summary(rig)}; {'PASS' if ok else 'FAIL'}"
    )
    return "\n".join(lines)


def main() -> None:
    """Walk the square once, then one forked turn and sideways walk per variant."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="rigid")
    parser.add_argument("--variants", default=VARIANTS)
    parser.add_argument("--diagnose", action="store_true", help="print each contact switch")
    parser.add_argument("--zmp-inward-offset", type=float, default=None, help="[m]")
    args = parser.parse_args()
    icub = WholeBodyModel.from_config(load_robot("icub"))
    settings = controller_settings(ROOT / "config" / "icub" / "controller.yaml", "torque")
    walking = settings.walking
    if args.zmp_inward_offset is not None:
        walking = walking.replace(zmp_inward_offset=args.zmp_inward_offset)
    rig = make_walking_rig(icub, settings, args.engine, walking)
    start = time.time()
    origin = rig.mid_feet()
    plan = square_plan(rig.sole_position("left_foot"), rig.sole_position("right_foot"))
    rig.command("set_footstep_plan", plan)
    rig.walk_until_standing(len(plan) * 0.7 + 3.0)
    back = float(np.linalg.norm((rig.mid_feet() - origin)[:2]))
    print(
        f"square ({args.engine}): back within {back * 1e3:.1f} mm; {summary(rig)};"
        f" {time.time() - start:.0f} s wall",
        flush=True,
    )
    for text in args.variants.split(","):
        dx, dy, delay, angle, *more = (float(x) for x in text.split(":"))
        pid = os.fork()
        if pid == 0:
            begin = time.time()
            line = variant(rig, dx, dy, delay, angle, *more, trace=args.diagnose)
            print(f"{text}: ({time.time() - begin:.0f} s wall)\n{line}", flush=True)
            os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
