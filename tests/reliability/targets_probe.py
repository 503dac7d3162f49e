"""The probe of the reliability tests: the simulator's truth (base pose, joints), targets.

An rclpy node in its own context (:class:`bringup_helpers.Probe`) that also records the joints
(``joint_states``) and the base pose (``ground_truth/odom``) by stamp, gives the true
configurations where both arrived and the soles' positions in them (Pinocchio), and publishes
targets on ``targets/com`` and ``targets/<task>``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import PointStamped, PoseStamped
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bringup"))
from bringup_helpers import Probe, Process, wbm_launch  # noqa: E402

from wbm_bringup.share import config_directory  # noqa: E402
from wbm_description.whole_body_model import WholeBodyModel  # noqa: E402

WALL_TIMEOUT = 600.0  # [s] for any one wait in lockstep on a loaded 2-core machine

__all__ = ["TruthProbe", "lockstep_config", "wbm_launch"]


def lockstep_config(directory: Path, **controller_values: str) -> Path:
    """A copy of iCub's config directory for a lockstep test on a loaded machine.

    The controller's ``stale_timeout`` is raised to 5 s: in lockstep the inputs come one per
    command and are never stale in simulated time, but the controller's wall-clock watchdog
    (max of its 0.5 s and stale_timeout) trips when another process stalls the machine for
    half a second, and its safe hold would then perturb a test that is about something else.

    Args:
        directory: Where to put the copy (it must not exist).
        controller_values: Further ``key: value`` lines of controller.yaml to replace, by key
            (each key must appear once in the file, e.g. ``min_normal_force="3000.0"``).
    """
    shutil.copytree(config_directory("icub"), directory)
    path = directory / "controller.yaml"
    lines = path.read_text().splitlines()
    values = {"stale_timeout": "5.0", **controller_values}
    for key, value in values.items():
        found = [i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:")]
        assert len(found) == 1, (key, found)
        indent = lines[found[0]][: len(lines[found[0]]) - len(lines[found[0]].lstrip())]
        lines[found[0]] = f"{indent}{key}: {value}"
    path.write_text("\n".join(lines) + "\n")
    return directory


class TruthProbe(Probe):
    """The bringup probe, plus the joints and the target publishers."""

    def __init__(self, model: WholeBodyModel):
        super().__init__()
        self.model = model
        self.joints: dict[float, np.ndarray] = {}
        self.poses: dict[float, np.ndarray] = {}
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(JointState, "joint_states", self._on_joints, qos)
        self.node.create_subscription(Odometry, "ground_truth/odom", self._on_pose, qos)
        self.com_publisher = self.node.create_publisher(PointStamped, "targets/com", qos)
        self.frame_publishers = {
            name: self.node.create_publisher(PoseStamped, f"targets/{name}", qos)
            for name in ("left_hand", "right_hand", "left_foot")
        }
        self.names = list(model.joint_names)
        self.timeline: list[tuple[float, str]] = []

    def _on_joints(self, message: JointState) -> None:
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        index = {name: i for i, name in enumerate(message.name)}
        self.joints[round(stamp, 6)] = np.array([message.position[index[n]] for n in self.names])

    def _on_pose(self, message: Odometry) -> None:
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        p, o = message.pose.pose.position, message.pose.pose.orientation
        self.poses[round(stamp, 6)] = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])

    def configurations(self) -> list[tuple[float, np.ndarray]]:
        """True configurations (q) at the stamps where both the pose and the joints arrived."""
        stamps = sorted(set(self.joints) & set(self.poses))
        return [(t, np.concatenate([self.poses[t], self.joints[t]])) for t in stamps]

    def latest_configuration(self, process: Process) -> np.ndarray:
        """The newest true configuration, waiting for a first one if none has come.

        On a loaded machine the probe's subscriptions can match after the first simulated
        half second of a lockstep run (a suite run had none by then): its joints and pose come
        from then on.
        """
        self.spin_until(
            lambda: bool(set(self.joints) & set(self.poses)),
            WALL_TIMEOUT,
            "a first true configuration (joint_states and ground_truth/odom of one stamp)",
            process,
        )
        return self.configurations()[-1][1]

    def soles(self, q: np.ndarray) -> dict[str, np.ndarray]:
        return {
            sole.name: self.model.frame_placement(q, sole.frame).translation.copy()
            for sole in self.model.config.soles
        }

    def mark(self, what: str) -> None:
        """Note what was sent at this simulated time (for the failure message)."""
        self.timeline.append((self.sim_time, what))

    def run_for(self, seconds: float, process: Process) -> None:
        end = self.sim_time + seconds
        self.spin_until(lambda: self.sim_time >= end, WALL_TIMEOUT, f"{end:.1f} s", process)

    def com_target(self, point) -> None:
        self.mark(f"com {np.round(point, 3)}")
        message = PointStamped()
        message.header.frame_id = "world"
        message.point.x, message.point.y, message.point.z = (float(x) for x in point)
        self.com_publisher.publish(message)

    def frame_target(self, name: str, pose: pin.SE3) -> None:
        self.mark(f"{name} {np.round(pose.translation, 3)}")
        message = PoseStamped()
        message.header.frame_id = "world"
        p = pose.translation
        x, y, z, w = pin.Quaternion(pose.rotation).coeffs()
        message.pose.position.x, message.pose.position.y, message.pose.position.z = map(float, p)
        o = message.pose.orientation
        o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)
        self.frame_publishers[name].publish(message)
