"""G1 through the real nodes: `wbm launch sim.launch.yaml robot:=g1` in lockstep, as processes.

The robot interface (our simulator), the controller (torque mode) and the state publisher run with
G1's parameter files over real DDS. References: the true base height (ground_truth/odom) for
"stays up" (a fall drops the pelvis by tens of centimetres; standing keeps it within millimetres:
3 cm separates them, as for iCub); the controller's diagnostics for what it estimates without F/T
sensors (no measured ZMP, an estimated one within 1 cm of the CoM's ground projection when
standing still: the static closed form, with 1 cm for the residual sway); the state publisher's
markers for the estimated CoP.
"""

from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, ReliabilityPolicy
from visualization_msgs.msg import Marker, MarkerArray

from tests.bringup.bringup_helpers import Probe, wbm_launch

pytestmark = [pytest.mark.process, pytest.mark.slow]

SIM_SECONDS = 4.0  # [s] of simulated time
HEIGHT_TOLERANCE = 0.03  # [m], see the module docstring
WALL_TIMEOUT = 240.0  # [s] for 4 s of simulated G1 in lockstep on a loaded 2-core machine


def test_g1_stands_through_the_nodes_and_reports_its_estimated_zmp():
    launch = wbm_launch("sim.launch.yaml", "robot:=g1", "pacing:=lockstep")
    probe = Probe()
    diagnostics: list[dict[str, str]] = []
    markers: dict[tuple[str, int], Marker] = {}

    def on_diagnostics(message: DiagnosticArray) -> None:
        diagnostics.append({kv.key: kv.value for kv in message.status[0].values})

    def on_markers(message: MarkerArray) -> None:
        markers.update({(m.ns, m.id): m for m in message.markers})

    qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.BEST_EFFORT)
    probe.node.create_subscription(DiagnosticArray, "diagnostics", on_diagnostics, qos)
    probe.node.create_subscription(MarkerArray, "markers", on_markers, qos)
    try:
        probe.spin_until(lambda: probe.sim_time >= SIM_SECONDS, WALL_TIMEOUT, "4 s", launch)
        heights = np.array([z for t, z in probe.heights if t >= 0.5])
        assert len(heights) > 100, launch.output[-3000:]
        drop = float(heights[0] - heights.min())
        print(f"G1 base height drop {drop * 1e3:.2f} mm over {SIM_SECONDS} s")
        assert drop < HEIGHT_TOLERANCE, launch.output[-3000:]
        assert "safe mode" not in launch.output, launch.output[-3000:]
        last = diagnostics[-1]
        assert "zmp_measured" not in last  # no F/T sensors: nothing measured
        zmp = np.array([float(x) for x in last["zmp_estimated"].split()])
        com = np.array([float(x) for x in last["com"].split()])
        print(f"estimated ZMP {zmp}, CoM {com}")
        assert np.linalg.norm(zmp[:2] - com[:2]) < 0.01
        assert last["active_contacts"] == "left_foot,right_foot"
        assert ("cop", 0) not in markers and markers[("cop_estimated", 0)].action == Marker.ADD
    finally:
        probe.close()
        launch.stop()
