"""End to end: iCub walks on cmd_vel from a separate node, through `wbm launch` in lockstep.

sim.launch.yaml (our simulator, compliant contact, torque mode, lockstep pacing) runs as real
processes; this test's own rclpy node publishes geometry_msgs/Twist on cmd_vel (0.2 m/s forward)
and follows the true base pose (ground_truth/odom), the walking state in diagnostics and the plan
on walking/markers. Walking: the base moves forward by at least 0.25 m in 5 s of walking (0.2 m/s
commanded, minus the CoM lowering and the first double support); the base stays above its
standing height minus 12 cm (walking bends the knees: the CoM is lowered 4 cm, the pelvis about 8
cm, measured 0.51 m against 0.59 m standing; a fall drops it by 30 cm or more); the controller
reports both single-support phases in diagnostics and publishes footstep markers. Twice: in the
strict loop, and with ``command_delay:=0.002`` (the simulator one sample ahead, every command
acting one control period after its sample, as on a robot's bus): 0.751 and 0.749 m in one run
each, the same bounds.
"""

from __future__ import annotations

import time

import pytest
from bringup_helpers import Probe, wbm_launch
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile
from visualization_msgs.msg import MarkerArray

pytestmark = [pytest.mark.process, pytest.mark.slow]

WALK_SECONDS = 6.0  # of simulated time after the first cmd_vel
WALL_TIMEOUT = 600.0  # [s]: lockstep on a loaded 2-core machine
MIN_ADVANCE = 0.25  # [m], see the module docstring


class WalkingProbe(Probe):
    """The e2e probe, plus the base x, the walking phases, the markers and a cmd_vel publisher."""

    def __init__(self):
        super().__init__()
        self.positions: list[tuple[float, float, float]] = []
        self.phases: set[str] = set()
        self.markers = 0
        qos = QoSProfile(depth=10)
        self.node.create_subscription(Odometry, "ground_truth/odom", self._on_position, qos)
        self.node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, qos)
        self.node.create_subscription(MarkerArray, "walking/markers", self._on_markers, qos)
        self.cmd_vel = self.node.create_publisher(Twist, "cmd_vel", qos)

    def _on_position(self, message: Odometry) -> None:
        p = message.pose.pose.position
        self.positions.append((self.sim_time, p.x, p.z))

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            for kv in status.values:
                if kv.key == "walking/phase":
                    self.phases.add(kv.value)

    def _on_markers(self, message: MarkerArray) -> None:
        self.markers += int(any(m.ns == "footsteps" for m in message.markers))


@pytest.mark.parametrize("command_delay", ["0.0", "0.002"])
def test_icub_walks_on_cmd_vel_from_a_separate_node_in_lockstep(command_delay):
    launch = wbm_launch("sim.launch.yaml", "pacing:=lockstep", f"command_delay:={command_delay}")
    probe = WalkingProbe()
    try:
        probe.spin_until(lambda: probe.sim_time >= 1.0, WALL_TIMEOUT, "1 s", launch)
        start_time = probe.sim_time
        x0, z0 = probe.positions[-1][1:]
        twist = Twist()
        twist.linear.x = 0.2
        deadline = time.monotonic() + WALL_TIMEOUT
        while probe.sim_time < start_time + WALK_SECONDS:
            assert time.monotonic() < deadline, launch.output[-4000:]
            probe.cmd_vel.publish(twist)
            for _ in range(20):
                probe.executor.spin_once(timeout_sec=0.01)
        x1 = probe.positions[-1][1]
        lowest = min(z for t, _, z in probe.positions if t >= start_time)
        print(
            f"\nbase advanced {x1 - x0:.3f} m in {WALK_SECONDS} s; lowest base {lowest:.3f} m "
            f"(standing {z0:.3f} m); phases {sorted(probe.phases)}; {probe.markers} marker sets"
        )
        assert x1 - x0 >= MIN_ADVANCE, launch.output[-3000:]
        assert lowest > z0 - 0.12, launch.output[-3000:]
        assert {"single_support_left", "single_support_right"} <= probe.phases
        assert probe.markers > 0
    finally:
        probe.close()
        launch.stop()
