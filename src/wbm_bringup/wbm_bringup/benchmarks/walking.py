"""``wbm_benchmark_walking``: how fast and how robustly a humanoid walks, per engine and mode.

In-process closed loop (:mod:`wbm_bringup.walking_rig`: controller with its estimator and the
ankle F/T touch-down, or the touch-down estimated from the joint torques on a robot without F/T
sensors such as the G1; engine at 1 ms, the G1's at 0.5 ms as in
``tests/walking_e2e/test_g1_walk.py``), per robot (``--robot icub g1``, each with its own
``config/<robot>/controller.yaml``), per engine (``compliant``, ``rigid``, ``mujoco``) and
controller mode (``torque``, ``ik``):

- the fastest forward speed sustained over ``--distance`` (3 m) without a fall: the commanded
  speeds of ``--speeds`` (above the walking settings' ``max_forward_velocity`` they are clamped
  to it: tried once) are tried in decreasing order until one walks the distance without a fall
  and without sliding more than 5 mm (the first success ends the search: one 3 m run when the
  fastest holds); the speed is the distance over the time from the command to the mid-feet
  crossing it, and (as ``tests/walking_e2e/test_walk_forward.py`` measures it) from the first
  lift-off;
- at that speed: the largest footstep placement error (sole at touch-down vs planned), the
  smallest ZMP margin (F/T ZMP in the held soles' polygon, 50 ms after switches excluded), the
  largest base estimate error, the controller step time while walking (wall clock: median,
  p99) and the CPU time per control tick of the whole closed loop (controller, walking and
  engine: ``time.process_time`` over the run, less sensitive to a loaded machine);
- the largest push on the torso (``--push-duration`` 0.1 s) survived while walking at 0.2 m/s,
  sagittal and lateral, by bisection (``--push-iterations``).

Run: ``wbm_benchmark_walking [--robot icub g1] [--engines compliant mujoco] [--modes torque]
[--speeds 0.2 0.3]``. The first row printed is the machine reference: the median of one
``pin.aba`` on iCub.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from wbm_bringup.benchmarks.push import PUSH_LINKS
from wbm_bringup.share import config_directory
from wbm_bringup.walking_rig import DT, ENGINES, controller_settings, make_walking_rig
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel

SLIDE_LIMIT = 5e-3  # [m] a faster run that slides more than this does not count

#: The engine step per robot [s]: the G1's light feet rock on the compliant ground at 1 ms
#: (``tests/walking_e2e/test_g1_walk.py``); others: the walking rig's default.
ENGINE_STEPS = {"g1": 5e-4}


def aba_reference(model: WholeBodyModel, repeats: int = 2000) -> float:
    """Median time of one pin.aba on the model [s] (machine reference)."""
    data = model.model.createData()
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    tau = np.zeros(model.nv)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        pin.aba(model.model, data, q, v, tau)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def forward_run(model, settings, engine: str, speed: float, distance: float, dt: float = DT):
    """(reached speed [m/s] or None on a fall, the rig) for one walk over ``distance``."""
    rig = make_walking_rig(model, settings, engine, stand=0.5, dt=dt)
    rig.command("set_velocity_command", speed, 0.0, 0.0)
    start = rig.engine.time
    cpu = time.process_time()
    rig.run(distance / max(speed, 0.05) * 1.5 + 2.0, until=lambda: rig.mid_feet()[0] >= distance)
    rig.cpu_per_tick = (time.process_time() - cpu) / max(len(rig.metrics.step_times), 1)
    elapsed = rig.engine.time - start
    m = rig.metrics
    ok = not m.fallen and rig.mid_feet()[0] >= distance and m.slide <= SLIDE_LIMIT
    rig.speed_from_liftoff = distance / (rig.engine.time - m.first_liftoff) if ok else None
    return (distance / elapsed if ok else None), rig


def survives_push(
    model,
    settings,
    engine: str,
    impulse: float,
    axis: int,
    duration: float,
    *,
    link: str = "torso",
    dt: float = DT,
    speed: float = 0.2,
):
    """Whether the robot walking at ``speed`` survives a push on ``link`` (no fall in 3 s)."""
    rig = make_walking_rig(model, settings, engine, stand=0.5, dt=dt)
    rig.command("set_velocity_command", speed, 0.0, 0.0)
    rig.run(1.5)
    if rig.metrics.fallen:
        return False
    wrench = np.zeros(6)
    wrench[axis] = impulse / duration
    rig.engine.apply_wrench(link, wrench, duration)
    rig.run(3.0)
    return not rig.metrics.fallen


def largest_push(model, settings, engine, axis, duration, iterations, upper=16.0, **run) -> float:
    """Bisection of the largest impulse [N s] survived (0 if even the smallest tried falls).

    ``run``: ``link``, ``dt`` and ``speed`` of :func:`survives_push`.
    """
    low, high = 0.0, upper
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        low, high = (
            (middle, high)
            if survives_push(model, settings, engine, middle, axis, duration, **run)
            else (low, middle)
        )
    return low


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``wbm_benchmark_walking``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", nargs="+", default=["icub"], help="registered robot names")
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="controller parameter file (one robot only); default config/<robot>/controller.yaml",
    )
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--modes", nargs="+", default=["torque", "ik"], choices=["torque", "ik"])
    parser.add_argument("--speeds", nargs="+", type=float, default=[0.2, 0.25, 0.3, 0.35])
    parser.add_argument("--distance", type=float, default=3.0, help="[m]")
    parser.add_argument("--push-duration", type=float, default=0.1, help="[s]")
    parser.add_argument("--push-iterations", type=int, default=4)
    parser.add_argument(
        "--push-speed", type=float, default=0.2, help="walking speed during the pushes [m/s]"
    )
    parser.add_argument("--no-push", action="store_true", help="skip the push bisection")
    args = parser.parse_args(argv)
    if args.config is not None and len(args.robot) != 1:
        parser.error("--config takes one robot")
    icub = WholeBodyModel.from_config(load_robot("icub"))
    print(f"machine reference: pin.aba on iCub {aba_reference(icub) * 1e6:.1f} us (median)")
    print(
        f"| robot | engine | mode | fastest over {args.distance} m [m/s] (from the first "
        "lift-off) | placement [mm] | ZMP margin [mm] | estimate error [mm] | slide [mm] | "
        "step time median/p99 [ms] | CPU per tick [ms] | push sagittal [N s] | "
        "push lateral [N s] |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for robot in args.robot:
        for engine in args.engines:
            for mode in args.modes:
                print(_row(args, robot, engine, mode), flush=True)


def _row(args: argparse.Namespace, robot: str, engine: str, mode: str) -> str:
    """One table row: ``robot`` walking on ``engine`` in ``mode``."""
    path = args.config or config_directory(robot) / "controller.yaml"
    settings = controller_settings(path, mode)
    model = WholeBodyModel.from_config(load_robot(settings.robot))
    dt = ENGINE_STEPS.get(robot, DT)
    best, best_rig = None, None
    limit = settings.walking.max_forward_velocity
    for speed in sorted({min(speed, limit) for speed in args.speeds}, reverse=True):
        reached, rig = forward_run(model, settings, engine, speed, args.distance, dt)
        if reached is not None:
            best, best_rig = reached, rig
            break
    cells = ["fell"] + ["-"] * 6
    if best_rig is not None:
        m = best_rig.metrics
        steps = np.array(m.step_times) * 1e3
        cells = [
            f"{best:.3f} ({best_rig.speed_from_liftoff:.3f})",
            f"{m.placement_error * 1e3:.1f}",
            f"{m.zmp_margin * 1e3:.1f}",
            f"{m.estimate_error * 1e3:.1f}",
            f"{m.slide * 1e3:.2f}",
            f"{np.median(steps):.2f}/{np.percentile(steps, 99):.2f}",
            f"{best_rig.cpu_per_tick * 1e3:.2f}",
        ]
    pushes = ["-", "-"]
    if not args.no_push:
        run = {
            "link": PUSH_LINKS.get(robot, model.config.base_link),
            "dt": dt,
            "speed": min(args.push_speed, limit),
        }
        pushes = [
            f"{largest_push(model, settings, engine, axis, args.push_duration, args.push_iterations, **run):.1f}"  # noqa: E501
            for axis in (0, 1)
        ]
    return f"| {robot} | {engine} | {mode} | " + " | ".join(cells + pushes) + " |"


if __name__ == "__main__":
    main()
