"""Push sweep of walking: one push at each of several phases of a stride, per direction.

iCub walks at 0.2 m/s (torque mode, in-process rig of :mod:`wbm_bringup.walking_rig`: its
estimator and ankle F/T; ``--robot g1``: the Unitree G1 at 0.12 m/s, config/g1, 0.5 ms engine
step, pushed on ``torso_link``), then takes ONE push on the torso (``--impulse`` N s over 0.1 s) at
``--phases`` times spread over one stride (two steps), in each ``--directions``, and walks on
for ``--after`` s. The walk before each push is shared: the rig walks once and forks a child
process at each push time (the rig is deterministic, so the child is the run that would have
walked there), which applies the push and reports. Per push it prints: when (seconds after
the first push time and the walking phase then), fell or not (and when), and the steps to
recover: the touch-downs after the push until the DCM error (estimated minus planned) stays
below ``--recovered`` for the rest of the run.

usage: python tools/walk_push_sweep.py [--robot icub|g1] [--engine compliant] [--impulse 4]
       [--jobs 2] [--velocity-cutoff HZ] (the estimator's, instead of the config's)
       [--no-accelerometer] (the estimator's low-pass alone: the code before the fusion)
       [--flat-ground] (the swing reference on the planned ground z = 0: main's behaviour
       before the ground-following swing)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from wbm_bringup.closed_loop import run_closed_loop
from wbm_bringup.share import config_directory
from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_control.walking import ActivateContact
from wbm_control.walking_behaviour import WalkingBehaviour
from wbm_description import WholeBodyModel, load_robot

DIRECTIONS = {
    "forward": np.array([1.0, 0.0]),
    "backward": np.array([-1.0, 0.0]),
    "left": np.array([0.0, 1.0]),
    "right": np.array([0.0, -1.0]),
}
PUSH_DURATION = 0.1  # [s]
ROBOTS = {  # robot: (pushed link, engine step [s], walking speed [m/s], first push time [s])
    "icub": ("torso", 1e-3, 0.2, 1.5),
    "g1": ("torso_link", 5e-4, 0.12, 3.0),
}


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="icub", choices=sorted(ROBOTS))
    parser.add_argument("--engine", default="compliant", choices=("compliant", "rigid", "mujoco"))
    parser.add_argument("--impulse", type=float, default=4.0, help="push impulse [N s]")
    parser.add_argument("--speed", type=float, default=None, help="walking speed [m/s]")
    parser.add_argument("--start", type=float, default=None, help="first push time [s]")
    parser.add_argument("--phases", type=int, default=8, help="push times over one stride")
    parser.add_argument("--after", type=float, default=3.0, help="walk after the push [s]")
    parser.add_argument("--directions", default="left,right,forward")
    parser.add_argument("--recovered", type=float, default=0.02, help="DCM error bound [m]")
    parser.add_argument("--jobs", type=int, default=2, help="children at a time")
    parser.add_argument("--controller", type=Path, default=None, help="controller.yaml")
    parser.add_argument("--velocity-cutoff", type=float, default=None, help="[Hz], 0: off")
    parser.add_argument(
        "--no-accelerometer",
        action="store_true",
        help="the estimator's first-order low-pass instead of the accelerometer fusion",
    )
    parser.add_argument("--flat-ground", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    return parser.parse_args(argv)


def phase_label(rig) -> str:
    """The walking state now, e.g. ``single_support(right swing) 40%``."""
    sm = rig.behaviour.walking.state_machine
    t = rig.controller_time()
    span = sm.phase_end - sm.phase_start
    share = (t - sm.phase_start) / span if math.isfinite(span) and span > 0 else 0.0
    swing = f" {sm.swing_side} swing" if sm.swing_side else f" next {sm.next_swing_side}"
    return f"{sm.state.value}{swing} {100 * share:3.0f}%"


def push_run(rig, direction: np.ndarray, args: argparse.Namespace) -> dict:
    """In the child: push, walk on, report."""
    t0 = rig.engine.time
    wrench = np.zeros(6)
    wrench[:2] = direction * args.impulse / PUSH_DURATION
    touchdowns: list[tuple[float, float]] = []  # (time, |DCM error| at it)
    errors: list[tuple[float, float]] = []
    original = rig._record  # noqa: SLF001

    def record(t: float) -> None:
        original(t)
        refs = rig.behaviour.references
        if refs is None:
            return
        error = float(np.linalg.norm(refs.dcm_error[:2]))
        errors.append((t, error))
        if any(isinstance(c, ActivateContact) for c in refs.contact_commands):
            touchdowns.append((t, error))

    rig._record = record  # noqa: SLF001
    rig.engine.apply_wrench(ROBOTS[args.robot][0], wrench, PUSH_DURATION)
    rig.run(args.after)
    fallen = rig.metrics.fallen
    last_bad = max((t for t, e in errors if e >= args.recovered), default=-math.inf)
    steps = None
    if not fallen:
        steps = sum(1 for t, _ in touchdowns if t <= last_bad)
        if last_bad > (touchdowns[-1][0] if touchdowns else -math.inf):
            steps = None  # still off at the end of the run
    return {
        "fallen": bool(fallen),
        "fell_after": round(rig.engine.time - t0, 3) if fallen else None,
        "steps_to_recover": steps,
        "max_dcm_error": round(max((e for _, e in errors), default=0.0), 4),
        "touchdowns": len(touchdowns),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the sweep and print the table."""
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.flat_ground:
        WalkingBehaviour.ground_height = lambda self, controller, estimate, lifted: 0.0
    directions = [d.strip() for d in args.directions.split(",") if d.strip()]
    for name in directions:
        if name not in DIRECTIONS:
            raise SystemExit(f"--directions: {name!r} is not one of {sorted(DIRECTIONS)}")
    _, dt, speed, start = ROBOTS[args.robot]
    args.speed = speed if args.speed is None else args.speed
    args.start = start if args.start is None else args.start
    config = args.controller or config_directory(args.robot) / "controller.yaml"
    model = WholeBodyModel.from_config(load_robot(args.robot))
    settings = controller_settings(config, "torque")
    if args.velocity_cutoff is not None:
        estimator = replace(settings.estimator, velocity_cutoff=args.velocity_cutoff)
        settings = replace(settings, estimator=estimator)
    rig = make_walking_rig(model, settings, args.engine, dt=dt, stand=0.0)
    if args.no_accelerometer:  # else the config's estimator.accelerometer
        rig.controller.estimator.accelerometer = False
    run_closed_loop(rig.controller, rig.engine, 1.0, robot_steps_per_control=rig.steps_per_control)
    rig.controller_time = lambda: rig.behaviour.references.time
    rig.command("set_velocity_command", args.speed, 0.0, 0.0)
    s = rig.behaviour.walking.settings
    stride = 2.0 * (s.single_support_duration + s.double_support_duration)
    print(
        f"# push sweep: {args.robot} {args.engine}, torque, {args.speed} m/s, {args.impulse} N s "
        f"on the torso over {PUSH_DURATION} s, {args.phases} phases over a {stride:.2f} s stride "
        f"from {args.start} s, {args.after} s after each push; flat ground: {args.flat_ground}; "
        f"velocity cutoff {settings.estimator.velocity_cutoff} Hz, accelerometer "
        f"{rig.controller.estimator.accelerometer}; "
        f"config {config}",
        flush=True,
    )
    wall, cpu = time.perf_counter(), time.process_time()
    rig.run(args.start)
    running: dict[int, tuple[int, str, float, str]] = {}
    rows: list[dict] = []

    def reap(every: bool) -> None:
        """Collect finished children: until a slot is free, or (every) all of them."""
        while running and (every or len(running) >= args.jobs):
            pid, status = os.wait()
            fd, name, offset, label = running.pop(pid)
            with os.fdopen(fd) as pipe:
                text = pipe.read()
            row = json.loads(text) if text else {"error": f"child status {status}"}
            row.update(direction=name, offset=offset, phase=label)
            rows.append(row)

    for k in range(args.phases):
        offset = k * stride / args.phases
        target = args.start + offset
        ahead = target - rig.metrics.duration
        if ahead > 1e-9:
            rig.run(ahead)
        if rig.metrics.fallen:
            print("# the undisturbed walk fell", flush=True)
            break
        label = phase_label(rig)
        for name in directions:
            reap(every=False)
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                try:
                    result = push_run(rig, DIRECTIONS[name], args)
                    text = json.dumps(result)
                except BaseException as error:  # noqa: BLE001 - reported by the parent
                    text = json.dumps({"error": repr(error)})
                with os.fdopen(write, "w") as pipe:
                    pipe.write(text)
                os._exit(0)
            os.close(write)
            running[pid] = (read, name, round(offset, 3), label)
    reap(every=True)
    rows.sort(key=lambda r: (directions.index(r["direction"]), r["offset"]))
    print(
        f"{'direction':9s} {'t-t0 [s]':>8s}  {'phase at the push':32s} {'result':>12s}  "
        f"{'steps':>5s}  {'max|e_dcm|':>10s}"
    )
    for r in rows:
        if "error" in r:
            print(f"{r['direction']:9s} {r['offset']:8.3f}  {r['phase']:32s} ERROR {r['error']}")
            continue
        result = f"FELL +{r['fell_after']:.2f}s" if r["fallen"] else "walks on"
        steps = "-" if r["steps_to_recover"] is None else str(r["steps_to_recover"])
        print(
            f"{r['direction']:9s} {r['offset']:8.3f}  {r['phase']:32s} {result:>12s}  "
            f"{steps:>5s}  {r['max_dcm_error'] * 1e3:8.1f}mm"
        )
    for name in directions:
        mine = [r for r in rows if r["direction"] == name and "error" not in r]
        falls = sum(r["fallen"] for r in mine)
        print(f"# {name}: {len(mine) - falls}/{len(mine)} walk on")
    print(
        f"# parent wall {time.perf_counter() - wall:.0f} s, parent CPU "
        f"{time.process_time() - cpu:.0f} s",
        flush=True,
    )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
