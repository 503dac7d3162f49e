"""An infeasible whole-body QP does not drop the robot: the fallback chain, through the nodes.

The simulation bringup (`wbm launch launch/sim.launch.yaml pacing:=lockstep`) runs as real
processes with a copy of iCub's config directory (targets_probe.lockstep_config: the
wall-clock watchdog raised for a loaded machine) whose controller.yaml asks each held sole for
a normal force of at least 3 kN (``torque.min_normal_force``; iCub weighs 330 N): with the soles
held and the joint torques limited, no solution of the whole-body QP exists, at any step. The
controller must then solve its relaxed problem (no minimum force, no CoP margin, slack on the
contact accelerations; wbm_control.qp_fallback), not fall into its damped hold, and say so.

Pass, over 2 s of simulated time: the base height stays within 2 cm of its start and each sole
moves less than 5 mm (as in test_targets_node.py: a fall or a lost contact moves them by
centimetres); no safe hold; the diagnostics report ``fallback: relaxed`` with the failed
solve's reason; the log says the fallback is in use.
"""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, ReliabilityPolicy
from targets_probe import TruthProbe, lockstep_config, wbm_launch

pytestmark = [pytest.mark.process, pytest.mark.slow]

HEIGHT_TOLERANCE = 0.02  # [m], see the module docstring
SLIDE_TOLERANCE = 0.005  # [m]
SIM_SECONDS = 2.0


@pytest.fixture(autouse=True)
def ros_environment(monkeypatch):
    """A DDS domain of our own unless the environment sets one; discovery on localhost only."""
    if "ROS_DOMAIN_ID" not in os.environ:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(random.randint(120, 230)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def test_an_infeasible_qp_every_step_leaves_the_robot_standing(tmp_path, icub):
    config = lockstep_config(tmp_path / "icub", min_normal_force="3000.0")
    launch = wbm_launch("sim.launch.yaml", "pacing:=lockstep", f"config_directory:={config}")
    probe = TruthProbe(icub)
    statuses: list[dict[str, str]] = []
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    probe.node.create_subscription(
        DiagnosticArray,
        "diagnostics",
        lambda m: statuses.extend(
            {v.key: v.value for v in s.values} | {"message": s.message} for s in m.status
        ),
        qos,
    )
    wall = time.monotonic()
    try:
        probe.run_for(SIM_SECONDS, launch)
        wall = time.monotonic() - wall
        output = launch.output
        states = probe.configurations()
        assert len(states) > 500, output[-3000:]
        _, q0 = states[0]
        soles0 = probe.soles(q0)
        drop = max(abs(q[2] - q0[2]) for _, q in states)
        slide = max(
            np.linalg.norm(p - soles0[name])
            for _, q in states
            for name, p in probe.soles(q).items()
        )
        print(
            f"\n{probe.sim_time:.1f} s simulated in {wall:.0f} s wall; largest base height "
            f"change {drop * 1e3:.2f} mm, sole motion {slide * 1e3:.3f} mm"
        )
        assert drop < HEIGHT_TOLERANCE, output[-4000:]
        assert slide < SLIDE_TOLERANCE, output[-4000:]
        assert "safe mode" not in output, output[-4000:]
        assert "whole-body QP fallback 'relaxed'" in output, output[-3000:]
        controller = [s for s in statuses if "fallback" in s]
        assert len(controller) > 5, statuses[-3:]
        assert {s["fallback"] for s in controller[1:]} == {"relaxed"}, controller[-3:]
        assert "no solution found" in controller[-1]["fallback_reason"]
        assert controller[-1]["message"] == "controlling with fallback relaxed"
    finally:
        probe.close()
        launch.stop()
