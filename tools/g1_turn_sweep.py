"""The G1's 90 degree turn in place after a walk, swept: is it a knife edge?

The G1 (torque mode, in-process rig of :mod:`wbm_bringup.walking_rig`, engine step ``--dt``,
default 0.5 ms) walks ``--distance`` at 0.12 m/s and stops, once; then one child process per
variant (forked: the rig is deterministic, so each child continues the same run) turns 90 degrees
in place on a goal pose at the spot, the goal moved by (dx, dy) [m], commanded ``delay`` [s] later,
or turning right (``right``). Per variant it prints the turn, how far the mid-feet point moved, and
issue 12's criteria (fall, slide, ZMP margin, estimate error, touch-downs).

usage: python tools/g1_turn_sweep.py [--engine compliant|mujoco] [--distance 2.0] [--dt 5e-4]
       [--variants 0:0:0,0:0.005:0,0:-0.005:0,0.005:0:0,0:0:0.1,0:0:0.25,right]
"""

from __future__ import annotations

import argparse
import math
import os
import time

from wbm_bringup.share import config_directory
from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_description import WholeBodyModel, load_robot

SPEED = 0.12  # [m/s]
DT = 5e-4  # default engine step [s] (tests/walking_e2e/test_g1_walk.py: MuJoCo there 1 ms)


def turn(rig, dx: float, dy: float, delay: float, angle: float) -> str:
    """One turn from the rig's state; its line of results."""
    if delay > 0.0:
        rig.run(delay)
    turned, moved = rig.turn_on_goal(angle, 14.0, dx, dy)
    m = rig.metrics
    return (
        f"turned {math.degrees(turned):.2f} deg, moved {moved * 1e3:.1f} mm; fallen {m.fallen},"
        f" standing {rig.standing()}; {m.steps} steps {m.touchdowns}; slide"
        f" {m.slide * 1e3:.2f} mm; ZMP margin {m.zmp_margin * 1e3:.1f} mm at {m.zmp_margin_at};"
        f" estimate error {m.estimate_error * 1e3:.1f} mm"
    )


def main() -> None:
    """Walk once, then one forked turn per variant (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="compliant")
    parser.add_argument("--distance", type=float, default=2.0, help="[m]")
    parser.add_argument("--dt", type=float, default=DT, help="engine step [s]")
    parser.add_argument(
        "--variants", default="0:0:0,0:0.005:0,0:-0.005:0,0.005:0:0,0:0:0.1,0:0:0.25,right"
    )
    args = parser.parse_args()
    g1 = WholeBodyModel.from_config(load_robot("g1"))
    settings = controller_settings(config_directory("g1") / "controller.yaml", "torque")
    rig = make_walking_rig(g1, settings, args.engine, dt=args.dt)
    start = time.time()
    rig.command("set_velocity_command", SPEED, 0.0, 0.0)
    distance = args.distance
    rig.run(distance / SPEED * 1.5, until=lambda: rig.mid_feet()[0] >= distance)
    rig.behaviour.stop()
    rig.walk_until_standing(4.0)
    m = rig.metrics
    print(
        f"walk {distance} m ({args.engine}): fallen {m.fallen}, slide {m.slide * 1e3:.2f} mm,"
        f" estimate error {m.estimate_error * 1e3:.1f} mm, {time.time() - start:.0f} s wall",
        flush=True,
    )
    for variant in args.variants.split(","):
        if variant == "right":
            dx, dy, delay, angle = 0.0, 0.0, 0.0, -math.pi / 2
        else:
            dx, dy, delay = (float(x) for x in variant.split(":"))
            angle = math.pi / 2
        pid = os.fork()
        if pid == 0:
            line = turn(rig, dx, dy, delay, angle)
            print(f"{variant}: {line}", flush=True)
            os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
