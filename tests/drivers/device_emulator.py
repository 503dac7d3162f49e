"""A robot's firmware, emulated: the wbm simulator in real time behind the template UDP protocol.

Run: ``python tests/drivers/device_emulator.py --port 0 --dump /tmp/emulator.npz``. It binds
127.0.0.1 (port 0: any free port), prints ``READY <port>`` on stdout and waits for a first
command packet (the robot is powered on: device time starts then, at 0). Then, every
``--period`` of wall time, it steps :class:`wbm_dynamics.simulator.Simulator` by that much and
streams one state packet to the address that last sent it a command packet. Commands are
applied as the firmware would (mask bits to "commanded" terms of the servo law); when command
packets stop for ``--command-timeout`` of device time, the firmware itself puts the joints in
damping (its own watchdog, for a driver that died).

The protocol is implemented here from its specification (the module docstring of
:mod:`wbm_dynamics.backends.template_driver`), not with the driver's code, so that a conversion
error in the driver is not cancelled by the same error here. Device units differ from wbm's on
purpose: degrees, g, scalar-first quaternions, F/T as the parent's wrench on the child.

On SIGTERM or SIGINT it stops and writes ``--dump`` (numpy .npz): per state packet sent, its
sequence, device time and the simulator's own readings in wbm's conventions; per command
packet received, its device time, sequence, mask and values as received (device units); and
the device times at which the firmware watchdog tripped.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import socket
import struct
import sys
import time

import numpy as np

from wbm_description import WholeBodyModel, load_robot
from wbm_description.robot_io import JointCommand
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

STATE_HEADER = struct.Struct("<4sHHIQ")  # magic, n_joints, n_ft, sequence, device time [us]
COMMAND_HEADER = struct.Struct("<4sHHII")  # magic, n_joints, 0, sequence, acknowledged state
G = 9.80665  # [m/s^2]
HISTORY = 20000  # samples kept for the dump


class Firmware:
    """The emulated robot: a simulator, its socket and what it records."""

    def __init__(self, robot: str, port: int, period: float, dt: float, command_timeout: float):
        self.model = WholeBodyModel.from_config(load_robot(robot))
        self.config = self.model.config
        self.simulator = Simulator(self.model, SimulatorSettings(dt=dt))
        self.steps = max(1, round(period / dt))
        self.period = self.steps * dt
        self.command_timeout = command_timeout
        self.n = self.model.ndof
        # Firmware order = the robot config's joint list; the simulator uses model order.
        self.model_from_device = np.array(
            [self.config.joints.index(name) for name in self.model.joint_names]
        )
        self.ft_names = [sensor.name for sensor in self.config.ft_sensors]
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", port))
        self.socket.setblocking(False)
        self.port = self.socket.getsockname()[1]
        self.peer: tuple[str, int] | None = None
        self.sequence = 0
        self.last_command_time: float | None = None
        self.damping = False
        self.states: collections.deque = collections.deque(maxlen=HISTORY)
        self.commands: collections.deque = collections.deque(maxlen=HISTORY)
        self.watchdog_trips: list[float] = []
        self.running = True

    # ---------------------------------------------------------------- commands

    def receive_commands(self) -> None:
        while True:
            try:
                data, address = self.socket.recvfrom(65536)
            except BlockingIOError:
                return
            size = COMMAND_HEADER.size + self.n + 12 * self.n
            if len(data) != size:
                continue
            magic, n_joints, _, sequence, _ack = COMMAND_HEADER.unpack_from(data)
            if magic != b"WBC1" or n_joints != self.n:
                continue
            mask = np.frombuffer(data, np.uint8, self.n, COMMAND_HEADER.size).copy()
            values = np.frombuffer(data, "<f4", 3 * self.n, COMMAND_HEADER.size + self.n)
            values = values.reshape(3, self.n).astype(float)
            self.peer = address
            self.last_command_time = self.simulator.time
            self.commands.append((self.simulator.time, sequence, mask, values))
            self.damping = False
            self.apply(mask, values)

    def apply(self, mask: np.ndarray, values: np.ndarray) -> None:
        """Mask bits -> commanded terms; degrees -> radians; firmware -> model order."""
        mask = mask[self.model_from_device]
        values = values[:, self.model_from_device]
        position = np.where(mask & 1, np.deg2rad(values[0]), np.nan)
        velocity = np.where(mask & 2, np.deg2rad(values[1]), np.nan)
        effort = np.where(mask & 4, values[2], np.nan)
        self.simulator.set_command(JointCommand(position, velocity, effort))

    def watchdog(self) -> None:
        if self.damping or self.last_command_time is None or self.command_timeout <= 0.0:
            return
        if self.simulator.time - self.last_command_time > self.command_timeout:
            self.damping = True
            self.watchdog_trips.append(self.simulator.time)
            self.simulator.set_command(JointCommand(velocity=np.zeros(self.n)))

    # ---------------------------------------------------------------- state

    def state_packet(self) -> bytes:
        readings = self.simulator.readings()
        self.sequence = (self.sequence + 1) % 2**32
        device = np.empty((3, self.n))
        device[:, self.model_from_device] = np.array(
            [
                np.rad2deg(readings.joint_positions),
                np.rad2deg(readings.joint_velocities),
                readings.joint_efforts,
            ]
        )
        imu = np.zeros(10)
        if readings.imu is not None:
            x, y, z, w = readings.imu.orientation_xyzw
            imu = np.concatenate(
                [
                    [w, x, y, z],
                    np.rad2deg(readings.imu.angular_velocity),
                    readings.imu.linear_acceleration / G,
                ]
            )
        ft = [-readings.wrenches[name] for name in self.ft_names]  # parent on child
        values = np.concatenate([device.ravel(), imu, *ft]).astype("<f4")
        header = STATE_HEADER.pack(
            b"WBS1", self.n, len(self.ft_names), self.sequence, round(readings.time * 1e6)
        )
        self.states.append((self.sequence, readings))
        return header + values.tobytes()

    # ---------------------------------------------------------------- loop

    def run(self) -> None:
        next_wall = time.monotonic()
        while self.running:
            self.receive_commands()
            if self.peer is None:  # powered on by the first command packet: time starts then
                time.sleep(self.period)
                next_wall = time.monotonic()
                continue
            self.watchdog()
            self.simulator.step(self.steps)
            packet = self.state_packet()
            if self.peer is not None:
                try:
                    self.socket.sendto(packet, self.peer)
                except OSError:
                    pass  # the driver went away; keep running like a robot would
            next_wall += self.period
            delay = next_wall - time.monotonic()
            if delay > 0.0:
                time.sleep(delay)
            elif delay < -0.1:
                next_wall = time.monotonic()  # too slow: device time falls behind wall time

    def dump(self, path: str) -> None:
        readings = [r for _, r in self.states]
        commands = list(self.commands)
        np.savez(
            path,
            joint_names=np.array(self.model.joint_names),
            ft_names=np.array(self.ft_names),
            state_sequence=np.array([s for s, _ in self.states], dtype=np.int64),
            state_time=np.array([r.time for r in readings]),
            joint_positions=np.array([r.joint_positions for r in readings]),
            joint_velocities=np.array([r.joint_velocities for r in readings]),
            joint_efforts=np.array([r.joint_efforts for r in readings]),
            imu_orientation=np.array([r.imu.orientation_xyzw for r in readings]),
            imu_angular_velocity=np.array([r.imu.angular_velocity for r in readings]),
            imu_linear_acceleration=np.array([r.imu.linear_acceleration for r in readings]),
            **{
                f"wrench_{name}": np.array([r.wrenches[name] for r in readings])
                for name in self.ft_names
            },
            command_time=np.array([c[0] for c in commands]),
            command_sequence=np.array([c[1] for c in commands], dtype=np.int64),
            command_mask=np.array([c[2] for c in commands], dtype=np.uint8).reshape(-1, self.n),
            command_values=np.array([c[3] for c in commands]).reshape(-1, 3, self.n),
            watchdog_trips=np.array(self.watchdog_trips),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="icub")
    parser.add_argument("--port", type=int, default=0, help="UDP port on 127.0.0.1 (0: any)")
    parser.add_argument("--period", type=float, default=0.002, help="cycle [s]")
    parser.add_argument("--dt", type=float, default=0.001, help="simulator step [s]")
    parser.add_argument(
        "--command-timeout", type=float, default=0.2, help="firmware watchdog [s]; 0: off"
    )
    parser.add_argument("--dump", default=None, help=".npz written on exit")
    args = parser.parse_args()
    firmware = Firmware(args.robot, args.port, args.period, args.dt, args.command_timeout)

    def stop(*_: object) -> None:
        firmware.running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"READY {firmware.port}", flush=True)
    firmware.run()
    if args.dump:
        firmware.dump(args.dump)
    sys.stdout.flush()
    os._exit(0)  # no interpreter finalization: it restores SIGTERM's default action


if __name__ == "__main__":
    main()
