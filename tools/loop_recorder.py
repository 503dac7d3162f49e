"""A flight recorder of the control loop: what robot side and controller said around an event.

Beside a running bringup (e.g. ``wbm_benchmark_soak``), it keeps the last ``--window`` samples
of ``joint_states`` and ``joint_commands`` (stamp [s], arrival [s of this machine's monotonic
clock], names, positions [rad], velocities [rad/s], efforts [N m]) and, when any joint of a
``joint_states`` sample moves faster than ``--speed`` rad/s, writes them ``--after`` seconds
later (so the event's aftermath is in) to ``<prefix>_<n>.json``, then prints one line per
sample around the event: the stamp, the largest joint speed and its joint, and the latency of
the command that answered it (its arrival minus the sample's). This is how the soak's falls
were traced to the watchdog's posture hold (README, "Why the soak falls").

Run it with a real-time priority so the loop's own SCHED_FIFO threads do not starve it (its
samples would have gaps): ``chrt -f 45 python tools/loop_recorder.py /tmp/event``; the same
``ROS_DOMAIN_ID`` as the bringup.

usage: python tools/loop_recorder.py PREFIX [--speed 15] [--window 6000] [--after 1.0]
"""

from __future__ import annotations

import argparse
import collections
import json
import time

import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState


def stamp_of(message: JointState) -> float:
    """The message's stamp [s]."""
    return message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec


def record(message: JointState) -> list:
    """One sample: stamp, arrival, names, positions, velocities, efforts."""
    return [
        stamp_of(message),
        time.monotonic(),
        list(message.name),
        list(message.position),
        list(message.velocity),
        list(message.effort),
    ]


def summary(states: list, commands: list, event: float, before: float = 0.1) -> list[str]:
    """One line per state sample from ``before`` s before the event: speed and answer latency."""
    answered = {round(c[0], 6): c[1] for c in commands}
    lines = []
    for stamp, arrival, names, _, velocities, _ in states:
        if stamp < event - before or not velocities:
            continue
        speeds = np.abs(np.asarray(velocities))
        fastest = int(speeds.argmax())
        answer = answered.get(round(stamp, 6))
        latency = "none" if answer is None else f"{(answer - arrival) * 1e3:.1f} ms"
        fastest_text = f"fastest {names[fastest]} {speeds[fastest]:.2f} rad/s"
        lines.append(f"{stamp:.3f} s: {fastest_text}, answer {latency}")
    return lines


class LoopRecorder(Node):
    """The recorder node (see the module docstring)."""

    def __init__(self, prefix: str, speed: float, window: int, after: float):
        super().__init__("loop_recorder")
        qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.prefix, self.speed, self.after = prefix, speed, after
        self.states: collections.deque = collections.deque(maxlen=window)
        self.commands: collections.deque = collections.deque(maxlen=window)
        self.create_subscription(JointState, "joint_states", self.on_state, qos)
        self.create_subscription(JointState, "joint_commands", self.commands_append, qos)
        self.event: tuple[float, float] | None = None  # (stamp, arrival)
        self.dumps = 0

    def commands_append(self, message: JointState) -> None:
        """Keep a joint_commands sample."""
        self.commands.append(record(message))

    def on_state(self, message: JointState) -> None:
        """Keep a joint_states sample; detect the event; write the window after it."""
        sample = record(message)
        self.states.append(sample)
        if self.event is None and sample[4] and max(map(abs, sample[4])) > self.speed:
            self.event = (sample[0], sample[1])
            self.get_logger().warning(f"event at t = {sample[0]:.3f} s")
        if self.event is not None and time.monotonic() - self.event[1] > self.after:
            self.dump(self.event[0])
            self.event = None

    def dump(self, event: float) -> None:
        """Write the window to the next file and print its summary."""
        self.dumps += 1
        path = f"{self.prefix}_{self.dumps}.json"
        states, commands = list(self.states), list(self.commands)
        with open(path, "w") as file:
            json.dump({"event": event, "states": states, "commands": commands}, file)
        print(f"wrote {path}", *summary(states, commands, event), sep="\n", flush=True)


def main() -> int:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", help="output files <prefix>_<n>.json")
    parser.add_argument("--speed", type=float, default=15.0, help="event: a joint faster [rad/s]")
    parser.add_argument("--window", type=int, default=6000, help="samples kept per topic")
    parser.add_argument("--after", type=float, default=1.0, help="wall time recorded after [s]")
    args = parser.parse_args()
    rclpy.init()
    node = LoopRecorder(args.prefix, args.speed, args.window, args.after)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
