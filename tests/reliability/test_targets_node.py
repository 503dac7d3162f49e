"""No target topples the robot: targets 5 m away and at the edge of feasibility, through the nodes.

The simulation bringup (`wbm launch launch/sim.launch.yaml pacing:=lockstep`: robot-interface
node with our simulator, controller node in torque mode, state publisher) runs as real processes
(iCub's config files, with the controller's wall-clock watchdog raised for a loaded machine:
targets_probe.lockstep_config);
this test is an rclpy node that publishes on ``targets/com``, ``targets/left_hand``,
``targets/right_hand`` and ``targets/left_foot`` as any user would, and judges the robot on
the simulator's truth: the base pose (``ground_truth/odom``) and the joints (``joint_states``,
noise-free in the default robot_interface.yaml), from which Pinocchio gives the soles' positions.

One bringup carries every target in sequence (lockstep: the result does not depend on the
machine's load, only the wall time does), each for about 1.3 s of simulated time, and ends back
at the initial targets:

* CoM 5 m ahead, 5 m behind, 5 m to the left, 5 m to the right (each straight from the previous
  one: a harder sequence than coming back in between), then at the edge of feasibility (the
  point the controller clamped the left target to, 1 mm inside), then back;
* left hand 5 m ahead, then at its edge (the clamped point, 1 mm inside), right hand 5 m to the
  right, then both back;
* the left foot (held in contact) 10 cm up: rejected.

Pass: the base height stays within 2 cm of its height before the targets (standing, swaying
and the CoM height band of 1 cm move it by millimetres; a fall drops it by tens of
centimetres); each sole moves less than 5 mm (a held sole slides or lifts by centimetres when
balance is lost, and the compliant contact lets it move by tenths of a millimetre when it is not);
no safe hold; the controller's log says which targets it clamped and that it rejected the foot's.
"""

from __future__ import annotations

import os
import random
import re
import time

import numpy as np
import pinocchio as pin
import pytest
from targets_probe import TruthProbe, lockstep_config, wbm_launch

pytestmark = [pytest.mark.process, pytest.mark.slow]

HEIGHT_TOLERANCE = 0.02  # [m], see the module docstring
SLIDE_TOLERANCE = 0.005  # [m], see the module docstring
HOLD = 1.3  # simulated seconds per target [s]
FAR = 5.0  # [m]


@pytest.fixture(autouse=True)
def ros_environment(monkeypatch):
    """A DDS domain of our own unless the environment sets one; discovery on localhost only."""
    if "ROS_DOMAIN_ID" not in os.environ:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(random.randint(120, 230)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def clamped_to(output: str, task: str, count: int) -> np.ndarray:
    """The point the controller's log says the ``count``-th clamped target of ``task`` went to."""
    lines = re.findall(rf"target for '{task}' clamped from \[[^\]]*\] to \[([^\]]*)\]", output)
    assert len(lines) >= count, output[-3000:]
    return np.array([float(x) for x in lines[count - 1].split()])


def test_no_target_topples_the_robot(icub, tmp_path):
    config = lockstep_config(tmp_path / "icub")
    launch = wbm_launch("sim.launch.yaml", "pacing:=lockstep", f"config_directory:={config}")
    probe = TruthProbe(icub)
    wall_start = time.monotonic()
    try:
        probe.run_for(0.5, launch)  # standing at the initial posture
        q0 = probe.latest_configuration(launch)
        z0, soles0 = q0[2], probe.soles(q0)
        com0 = icub.com_position(q0)
        hands0 = {
            name: icub.frame_placement(q0, frame)
            for name, frame in (("left_hand", "l_hand"), ("right_hand", "r_hand"))
        }
        checked_from = probe.sim_time

        for direction in ([1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]):
            probe.com_target(com0 + FAR * np.array(direction, dtype=float))
            probe.run_for(HOLD, launch)
        edge = clamped_to(launch.output, "com", 3)  # where the left target was clamped to
        edge += 1e-3 * (com0 - edge) / np.linalg.norm(com0 - edge)
        probe.com_target(edge)
        probe.run_for(HOLD, launch)
        probe.com_target(com0)
        probe.run_for(HOLD, launch)

        left, right = hands0["left_hand"], hands0["right_hand"]
        probe.frame_target("left_hand", pin.SE3(left.rotation, left.translation + [FAR, 0.0, 0.0]))
        probe.run_for(HOLD, launch)
        hand_edge = clamped_to(launch.output, "left_hand", 1)
        hand_edge += (
            1e-3 * (left.translation - hand_edge) / np.linalg.norm(left.translation - hand_edge)
        )
        probe.frame_target("left_hand", pin.SE3(left.rotation, hand_edge))
        probe.frame_target(
            "right_hand", pin.SE3(right.rotation, right.translation + [0.0, -FAR, 0.0])
        )
        probe.run_for(HOLD, launch)
        probe.frame_target("left_hand", left)
        probe.frame_target("right_hand", right)
        foot = icub.frame_placement(q0, "l_sole")
        probe.frame_target("left_foot", pin.SE3(foot.rotation, foot.translation + [0, 0, 0.1]))
        probe.run_for(HOLD, launch)
        wall = time.monotonic() - wall_start

        states = [(t, q) for t, q in probe.configurations() if t >= checked_from]
        assert len(states) > 500, launch.output[-3000:]
        drops = np.array([z0 - q[2] for _, q in states])
        slides = np.array(
            [
                max(np.linalg.norm(p - soles0[name]) for name, p in probe.soles(q).items())
                for _, q in states
            ]
        )
        times = np.array([t for t, _ in states])
        marks = [t for t, _ in probe.timeline] + [np.inf]
        for (start, what), end in zip(probe.timeline, marks[1:], strict=True):
            phase = (times >= start) & (times < end)
            if phase.any():
                low, high = -drops[phase].max() * 1e3, -drops[phase].min() * 1e3
                print(
                    f"\n  {start:5.2f} s {what:40s} base {low:6.1f}..{high:5.1f} mm, "
                    f"soles {slides[phase].max() * 1e3:.2f} mm",
                    end="",
                )
        print(
            f"\n{probe.sim_time:.1f} s simulated in {wall:.0f} s wall; base height change "
            f"[{-drops.max() * 1e3:.1f}, {-drops.min() * 1e3:.1f}] mm; largest sole motion "
            f"{slides.max() * 1e3:.2f} mm"
        )
        output = launch.output
        bad = np.flatnonzero((np.abs(drops) >= HEIGHT_TOLERANCE) | (slides >= SLIDE_TOLERANCE))
        timeline = "\n".join(f"{t:6.2f} s: {what}" for t, what in probe.timeline)
        assert len(bad) == 0, (
            f"base height or soles off from {times[bad[0]]:.2f} s, after:\n{timeline}\n"
            f"{output[-4000:]}"
        )
        assert "safe mode" not in output, output[-4000:]
        # The log says what was clamped and why, and what was rejected.
        assert len(re.findall(r"target for 'com' clamped .*support polygon", output)) >= 4
        assert re.search(r"target for 'left_hand' clamped .*reach", output), output[-3000:]
        assert re.search(r"target for 'right_hand' clamped .*reach", output), output[-3000:]
        assert re.search(r"target for 'left_foot' rejected.*held in contact", output)
        # The edge targets are feasible as given: accepted without a clamp.
        assert len(re.findall(r"target for 'com' clamped", output)) == 4, output[-3000:]
        assert len(re.findall(r"target for 'left_hand' clamped", output)) == 1
    finally:
        probe.close()
        launch.stop()
