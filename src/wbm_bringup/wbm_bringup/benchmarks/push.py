"""``wbm_benchmark_push``: the largest push the controller survives on the simulator.

Bisects the largest impulse on the torso (front and side, ``--push-duration`` long) that the
whole-body controller survives in closed loop with the simulator core, in both controller modes:
not falling (the CoM stays above 70 % of its initial height) and no foot moving more than 1 mm
within 2.5 s. In-process (no ROS), the same controller and simulator the nodes host. One row per
robot and mode (``--robot icub g1``), each with its own ``config/<robot>/controller.yaml``.

Run: ``wbm_benchmark_push [--robot icub g1] [--contact-model rigid]``
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from wbm_bringup.closed_loop import run_closed_loop
from wbm_bringup.share import config_directory
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

#: The link pushed, per robot (the upper body's main link); others: the base link.
PUSH_LINKS = {"icub": "torso", "g1": "torso_link"}


def largest_push(
    model: WholeBodyModel,
    config: ControllerSettings,
    direction: np.ndarray,
    *,
    contact_model: str,
    duration: float,
    iterations: int,
    upper: float,
    link: str,
) -> float:
    """Bisect the largest impulse [N s] on ``link`` survived (no fall, feet within 1 mm)."""
    settings = SimulatorSettings(dt=1e-3, contact_model=contact_model)
    steps = round(config.control_period / settings.dt)
    fall_height = 0.7 * model.com_position(model.initial_configuration())[2]

    def survives(impulse: float) -> bool:
        sim = Simulator(model, settings)
        sim.reset()
        controller = WholeBodyController(model, config)
        run_closed_loop(controller, sim, 1.5, robot_steps_per_control=steps)
        q0 = sim.ground_truth().q
        feet0 = [model.frame_placement(q0, s.frame).translation for s in model.config.soles]
        wrench = np.concatenate([impulse / duration * direction, np.zeros(3)])
        sim.apply_wrench(link, wrench, duration)

        def fallen() -> bool:
            com_height = model.com_position(sim.ground_truth().q)[2]
            return com_height < fall_height or sim.diverged is not None

        run_closed_loop(controller, sim, 2.5, robot_steps_per_control=steps, stop=fallen)
        q = sim.ground_truth().q
        feet = [model.frame_placement(q, s.frame).translation for s in model.config.soles]
        moved = max(np.linalg.norm(a - b) for a, b in zip(feet, feet0, strict=True))
        return not fallen() and moved < 1e-3

    low, high = 0.0, upper
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if survives(middle) else (low, middle)
    return low


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``wbm_benchmark_push``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", nargs="+", default=["icub"], help="registered robot names")
    parser.add_argument(
        "--config",
        type=Path,
        help="controller parameter file (one robot only); default config/<robot>/controller.yaml",
    )
    parser.add_argument("--push-duration", type=float, default=0.2, help="[s]")
    parser.add_argument("--push-iterations", type=int, default=6)
    parser.add_argument("--contact-model", default="compliant", choices=["compliant", "rigid"])
    args = parser.parse_args(argv)
    if args.config is not None and len(args.robot) != 1:
        parser.error("--config takes one robot")
    print(
        f"largest push on the torso survived ({args.contact_model} contacts, "
        f"{args.push_duration} s push, no fall and feet within 1 mm, bisection of "
        f"{args.push_iterations} steps):"
    )
    print("| robot | mode | front [N s] | side [N s] | mass [kg] |")
    print("|---|---|---|---|---|")
    for robot in args.robot:
        path = args.config or config_directory(robot) / "controller.yaml"
        config = ControllerSettings.from_yaml(path)
        model = WholeBodyModel.from_config(load_robot(config.robot))
        link = PUSH_LINKS.get(robot, model.config.base_link)
        for mode in ("torque", "ik"):
            mode_config = replace(config, mode=mode)
            results = [
                largest_push(
                    model,
                    mode_config,
                    np.array(axis, dtype=float),
                    contact_model=args.contact_model,
                    duration=args.push_duration,
                    iterations=args.push_iterations,
                    upper=16.0,
                    link=link,
                )
                for axis in ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
            ]
            print(
                f"| {robot} | {mode} | {results[0]:.2f} | {results[1]:.2f} | "
                f"{model.total_mass:.1f} |"
            )


if __name__ == "__main__":
    main()
