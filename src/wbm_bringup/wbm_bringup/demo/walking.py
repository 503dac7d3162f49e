"""The demo's walking part: walk, turn, take a push, stop; its plot from above.

In-process closed loop (:mod:`wbm_bringup.walking_rig`: the same controller, estimator and
walking the controller node hosts, on our simulator at 1 ms), so that it takes a minute rather
than a lockstep launch's ten. Timeline (simulated time after the CoM is lowered to the walking
height):

- 0 s: ``cmd_vel`` 0.2 m/s forward;
- 4 s: 0.1 m/s forward turning at 0.3 rad/s;
- 7 s: 0.2 m/s forward; 8.5 s: a lateral push of ``push`` N s on the torso (0.1 s);
- 11 s: zero command: the robot stops with the feet side by side.

The plot ``walking_top.png`` shows from above the landed footsteps (sole rectangles), the true
CoM, the planned ZMP and DCM and the ZMP measured by the F/T sensors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wbm_bringup.walking_rig import WalkingRig, controller_settings, make_walking_rig
from wbm_description.whole_body_model import WholeBodyModel

PUSH_DURATION = 0.1  # [s]


@dataclass
class WalkingDemoResult:
    """What the walking part did."""

    rig: WalkingRig
    push: float

    def text(self) -> str:
        """The report lines."""
        m = self.rig.metrics
        mid = self.rig.mid_feet()
        return "\n".join(
            [
                "walking: walk 0.2 m/s, turn 0.3 rad/s, lateral push, stop",
                f"  fallen             {m.fallen}",
                f"  distance           {m.distance:.2f} m in {m.duration:.1f} s, {m.steps} steps",
                f"  end (mid-feet)     x {mid[0]:.3f} m, y {mid[1]:.3f} m, "
                f"yaw {np.degrees(self.rig.mid_yaw()):.1f} deg, standing {self.rig.standing()}",
                f"  push survived      {self.push:.1f} N s lateral",
                f"  largest slide      {m.slide * 1e3:.2f} mm (held soles)",
                f"  smallest ZMP margin {m.zmp_margin * 1e3:.1f} mm (F/T ZMP in the held soles)",
                f"  base estimate err  {m.estimate_error * 1e3:.1f} mm (largest)",
            ]
        )


def run_walking_demo(
    model: WholeBodyModel,
    config: Path,
    *,
    mode: str = "torque",
    engine: str = "compliant",
    push: float = 4.0,
) -> WalkingDemoResult:
    """Run the walking part (see the module docstring)."""
    rig = make_walking_rig(model, controller_settings(config, mode), engine, stand=0.5)
    rig.record_trace = True
    rig.command("set_velocity_command", 0.2, 0.0, 0.0)
    wrench = np.zeros(6)
    wrench[1] = push / PUSH_DURATION
    events = {
        rig.engine.time + 4.0: lambda: rig.behaviour.set_velocity_command(0.1, 0.0, 0.3),
        rig.engine.time + 7.0: lambda: rig.behaviour.set_velocity_command(0.2, 0.0, 0.0),
        rig.engine.time + 8.5: lambda: rig.engine.apply_wrench("torso", wrench, PUSH_DURATION),
        rig.engine.time + 11.0: rig.behaviour.stop,
    }
    rig.run(11.05, events=events)
    if not rig.metrics.fallen:
        rig.walk_until_standing(4.0)
    return WalkingDemoResult(rig, push)


def write_walking_plot(result: WalkingDemoResult, directory: Path) -> Path:
    """``walking_top.png``: footsteps, CoM, planned ZMP and DCM, measured ZMP, from above."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Polygon

    directory.mkdir(parents=True, exist_ok=True)
    rig = result.rig
    trace = rig.trace
    fig, ax = plt.subplots(figsize=(9, 7))
    walking = rig.behaviour.walking
    if walking is not None:
        feet = walking.geometry.feet
        for step in walking.state_machine.landed:
            color = "tab:green" if step.side == "left" else "tab:red"
            corners = feet.rectangle(step)
            ax.add_patch(Polygon(corners, closed=True, fill=False, edgecolor=color, lw=1.0))
    for key, label, style in (
        ("com", "CoM (true)", "b-"),
        ("zmp_ref", "ZMP planned", "-"),
        ("dcm_ref", "DCM planned", "m--"),
    ):
        points = np.array([r[key] for r in trace])
        if len(points):
            ax.plot(points[:, 0], points[:, 1], style, lw=1.0, label=label)
    measured = np.array([r["zmp"] for r in trace if r["zmp"] is not None])
    if len(measured):
        ax.plot(measured[:, 0], measured[:, 1], ".", ms=1, color="0.5", label="ZMP (F/T)")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title("walking from above: footsteps (left green, right red), CoM, ZMP, DCM")
    ax.legend(loc="best", fontsize=8)
    path = directory / "walking_top.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
