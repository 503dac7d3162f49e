"""A template hardware driver: a real robot behind a small UDP protocol, as a robot backend.

Copy this module to start the driver of your robot (docs/hardware_driver.md walks through it).
It is a complete, tested driver for a robot whose firmware speaks the protocol below; the tests
run it against an emulated robot (``tests/drivers/device_emulator.py``: our simulator behind the
same protocol on 127.0.0.1).

What a driver does for the robot-interface node (:class:`~wbm_dynamics.backends.RobotBackend`):

- **read**: the latest state the robot sent, converted to wbm's conventions
  (:mod:`wbm_description.robot_io`): model joint order, rad, rad/s, N m, IMU quaternion
  (x, y, z, w), F/T as the wrench of the child side on the parent side;
- **write**: hold a joint command, clamped to the robot config's joint position and torque
  limits (NaN means "not commanded"; NaN and inf never reach the wire);
- **advance(duration)**: block until the robot has moved on by ``duration`` seconds of *device*
  time since the previous advance (a real robot cannot be stepped: ``steppable`` is False);
- **watchdogs**: no state packet for ``state_timeout`` seconds (wall time) raises a
  :class:`~wbm_dynamics.exceptions.BackendError` naming the timeout; no ``write`` for
  ``command_timeout`` seconds (device time) makes the driver send the safe damping command
  (every joint tracks zero velocity with its servo damping) until the next ``write``.

Protocol (UDP, little-endian, float32 values). The firmware listens on ``host:port`` and streams
one state packet per cycle (``period``) to the address that last sent it a command packet; it
applies each command packet until the next one, and goes to damping by itself when command
packets stop for its own timeout (the firmware's watchdog, for a driver that died).

State packet, firmware to driver::

    header  "<4sHHIQ": magic b"WBS1", n_joints u16, n_ft u16, sequence u32 (+1 per packet,
            wraps), device_time u64 [us since the firmware started]
    joints  3 * n_joints f32: positions [deg], then velocities [deg/s], then efforts [N m],
            in the firmware's joint order (the robot config's ``joints`` list)
    imu     10 f32: orientation quaternion (w, x, y, z) of the IMU frame in the world (z up),
            angular velocity [deg/s] and proper acceleration [g = 9.80665 m/s^2] in IMU axes
            (zeros for a robot without an IMU)
    ft      6 * n_ft f32: per sensor (robot config order) force [N] and torque [N m] that the
            parent side exerts on the child side, at the sensor origin, sensor axes

Command packet, driver to firmware::

    header  "<4sHHII": magic b"WBC1", n_joints u16, 0 u16, sequence u32, the sequence of the
            last state packet the driver received u32
    mask    n_joints u8: bit 0 position, bit 1 velocity, bit 2 effort (0: joint not commanded)
    values  3 * n_joints f32: position references [deg], velocity references [deg/s],
            feed-forward efforts [N m]; 0 where the mask bit is clear

The firmware's servo law per joint is ``tau = effort + kp (position - q) + kd (velocity - dq)``
with each term present where its mask bit is set, the same as our simulator's.
"""

from __future__ import annotations

import math
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_io import ImuReading, JointCommand, RobotReadings
from wbm_description.settings import Settings, setting
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.backend import BackendDescription, RobotBackend
from wbm_dynamics.exceptions import BackendError

STATE_MAGIC = b"WBS1"
COMMAND_MAGIC = b"WBC1"
STATE_HEADER = struct.Struct("<4sHHIQ")
COMMAND_HEADER = struct.Struct("<4sHHII")
IMU_VALUES = 10
POSITION_BIT, VELOCITY_BIT, EFFORT_BIT = 1, 2, 4
STANDARD_GRAVITY = 9.80665  # [m/s^2] per g, the accelerometer's unit on the wire


@dataclass(frozen=True)
class TemplateDriverSettings(Settings):
    """Where the robot is and how long the driver waits for it.

    Read by the node from the section named after the driver's backend name (e.g.
    ``template_udp:``) or from the file ``backend_config`` names (a plain YAML mapping of these
    keys, or a ROS parameters file): ``TemplateDriverSettings.from_yaml(path)``.

    Attributes:
        host: The firmware's IP address (or host name).
        port: The firmware's UDP port.
        period: The firmware's cycle: one state packet per period [s of device time].
        state_timeout: Longest wall-clock gap between state packets before the driver gives up
            with a BackendError [s].
        command_timeout: Longest gap between two ``write`` calls before the driver sends the
            damping command instead of the held one [s of device time]; 0 disables it. Keep it
            at least the node's own ``command_timeout``.
        connect_timeout: How long the constructor waits for the first state packet [s].
    """

    host: str = setting("127.0.0.1", nonempty=True, doc="the firmware's IP address")
    port: int = setting(50100, gt=0, lt=65536, doc="the firmware's UDP port")
    period: float = setting(0.002, gt=0.0, unit="s", doc="the firmware's cycle")
    state_timeout: float = setting(
        0.1, gt=0.0, unit="s", doc="wall-clock silence of the robot before a BackendError"
    )
    command_timeout: float = setting(
        0.5, ge=0.0, unit="s", doc="device time without write() before damping; 0: off"
    )
    connect_timeout: float = setting(2.0, gt=0.0, unit="s", doc="wait for the first state packet")


class TemplateDriver(RobotBackend):
    """A real robot behind the template UDP protocol (see the module docstring).

    The constructor opens the socket, starts the receiving thread and waits for the first state
    packet; :meth:`close` (or leaving a ``with`` block) stops them. The receiving thread keeps
    the latest state and answers each state packet with the current command, so the firmware
    receives one command per cycle whatever the node's rate.

    Args:
        model: The whole-body model of the robot (robot config required: joint order, limits,
            F/T sensors and IMU come from it).
        settings: Driver settings; None for the defaults.

    Raises:
        ConfigError: A model without robot config, or settings of the wrong type.
        BackendError: No state packet within ``connect_timeout``, or a state packet that does
            not match the robot config (its joint or F/T sensor count).
    """

    settings_class: ClassVar[type[TemplateDriverSettings]] = TemplateDriverSettings
    steppable: ClassVar[bool] = False

    def __init__(self, model: WholeBodyModel, settings: TemplateDriverSettings | None = None):
        settings = self.checked_settings(settings)
        config = model.config
        if config is None:
            raise ConfigError(None, "robot", "a model built from a robot config", None)
        super().__init__(model)
        self.settings = settings
        self.address = (settings.host, settings.port)
        # A real robot has no ground truth odometry: no base frame.
        self._description = BackendDescription.of(
            model, period=settings.period, ground_truth=False
        )
        # The firmware's joint order is the robot config's (model.from_config_order).
        self._ft_names = [sensor.name for sensor in config.ft_sensors]
        self._ndof = model.ndof
        lower, upper = model.joint_position_limits
        self._lower = np.where(np.isfinite(lower), lower, -np.inf)
        self._upper = np.where(np.isfinite(upper), upper, np.inf)
        limits = np.asarray(model.torque_limits, dtype=float)
        self._torque_limits = np.where(np.isfinite(limits) & (limits > 0.0), limits, np.inf)
        self._damping = JointCommand(velocity=np.zeros(self._ndof))
        self._state_size = STATE_HEADER.size + 4 * (
            3 * self._ndof + IMU_VALUES + 6 * len(self._ft_names)
        )

        # Shared with the receiving thread, under the condition's lock.
        self._condition = threading.Condition()
        self._readings: RobotReadings | None = None
        self._sequence: int | None = None
        self._last_packet_wall = time.monotonic()
        self._rejected: str | None = None  # why the last bad packet was dropped
        # The command sent every cycle: damping until the first write.
        self._held_packet, _ = self._encode_command(self._damping)
        self._last_write_time: float | None = None  # device time of the last write
        self._schedule: float | None = None  # device time the last advance waited for
        self.command_watchdog_tripped = False
        self.clamped_joints: tuple[str, ...] = ()  # joints clamped by the last write
        self._command_sequence = 0
        self._running = True

        try:  # the numeric address state packets come from (host may be a name)
            self._firmware_address = (socket.gethostbyname(settings.host), settings.port)
        except OSError as error:
            raise ConfigError(
                None, "host", "a reachable IP address or host name", settings.host
            ) from error
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        local = "127.0.0.1" if self._firmware_address[0].startswith("127.") else "0.0.0.0"
        self._socket.bind((local, 0))  # any free port: the firmware answers to it
        self._socket.settimeout(min(0.02, settings.state_timeout / 2.0))
        self._thread = threading.Thread(target=self._receive_loop, name="driver", daemon=True)
        self._thread.start()
        try:
            self._wait_for_first_state()
        except BackendError:
            self.close()
            raise

    # ------------------------------------------------------------------ the node's interface

    @property
    def description(self) -> BackendDescription:
        """Names and cycle of the robot."""
        return self._description

    @property
    def time(self) -> float:
        """Device time of the latest state packet [s since the firmware started]."""
        with self._condition:
            return self._readings.time

    def read(self) -> RobotReadings:
        """The latest state packet in wbm's conventions.

        Raises:
            BackendError: No state packet for ``state_timeout`` (the robot is gone).
        """
        with self._condition:
            self._check_state_timeout()
            return self._readings

    def write(self, command: JointCommand) -> None:
        """Hold ``command`` (clamped to the limits) until the next write.

        Position references are clamped to the joint position limits and efforts to the torque
        limits (the joints clamped are in :attr:`clamped_joints`); NaN means "not commanded".
        The command is sent at once and then once per firmware cycle.

        Raises:
            InputError: An array of the wrong length or holding inf (nothing is sent).
        """
        packet, clamped = self._encode_command(command)
        with self._condition:
            self.clamped_joints = clamped
            self._held_packet = packet
            self._last_write_time = self._readings.time
            if self.command_watchdog_tripped:
                self.command_watchdog_tripped = False
            self._send(packet)

    def advance(self, duration: float) -> None:
        """Block until the device time has moved on by ``duration`` [s].

        Consecutive calls follow one schedule: each returns once the device time reaches the
        end of the previous call plus ``duration`` (within half a period: device time moves in
        whole periods), so a caller that spends some time between calls (publishing) does not
        drift behind the robot. A caller that fell behind by ``duration`` or more restarts the
        schedule from the latest state (no burst of immediate returns).

        Raises:
            InputError: A negative or non-finite duration.
            BackendError: No state packet for ``state_timeout`` while waiting.
        """
        if not (isinstance(duration, int | float) and math.isfinite(duration) and duration >= 0):
            raise InputError("duration", "a finite duration >= 0 [s]", duration)
        with self._condition:
            now = self._readings.time
            behind = self._schedule is None or now - self._schedule >= duration
            self._schedule = (now if behind else self._schedule) + duration
            target = self._schedule - 0.5 * self.settings.period
            # ... and never without a new state when asked to move on at all.
            while self._readings.time < target or (duration > 0.0 and self._readings.time <= now):
                self._check_state_timeout()
                self._condition.wait(timeout=self.settings.state_timeout / 4.0)
            self._check_state_timeout()

    def close(self) -> None:
        """Stop the receiving thread and close the socket (the firmware then times out)."""
        with self._condition:  # no command leaves after close() (the receiver checks it)
            self._running = False
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=1.0)
        self._socket.close()

    # ------------------------------------------------------------------ watchdogs

    def _wait_for_first_state(self) -> None:
        """Send the damping command until the firmware streams its state to us."""
        deadline = time.monotonic() + self.settings.connect_timeout
        with self._condition:
            while self._readings is None:
                if time.monotonic() > deadline:
                    why = f" (last packet rejected: {self._rejected})" if self._rejected else ""
                    raise BackendError(
                        f"no state packet from {self.address[0]}:{self.address[1]} within "
                        f"connect_timeout = {self.settings.connect_timeout:g} s{why}"
                    )
                self._send(self._held_packet)
                self._condition.wait(timeout=0.01)
            self._last_packet_wall = time.monotonic()

    def _check_state_timeout(self) -> None:
        """Raise when the latest state packet is older than state_timeout (lock held)."""
        if not self._running:
            raise BackendError(f"{type(self).__name__} for {self.address} is closed")
        silence = time.monotonic() - self._last_packet_wall
        if silence > self.settings.state_timeout:
            why = f"; last packet rejected: {self._rejected}" if self._rejected else ""
            raise BackendError(
                f"no state packet from {self.address[0]}:{self.address[1]} for "
                f"{silence:.3f} s > state_timeout = {self.settings.state_timeout:g} s "
                f"(last device time {self._readings.time:.3f} s){why}"
            )

    def _command_for_this_cycle(self) -> bytes:
        """The held command, or damping once writes stopped for command_timeout (lock held)."""
        timeout = self.settings.command_timeout
        if self._last_write_time is None or timeout == 0.0:
            return self._held_packet
        if self._readings.time - self._last_write_time > timeout:
            if not self.command_watchdog_tripped:
                self.command_watchdog_tripped = True
                self._held_packet, _ = self._encode_command(self._damping)
        return self._held_packet

    # ------------------------------------------------------------------ receiving thread

    def _receive_loop(self) -> None:
        while self._running:
            try:
                data, sender = self._socket.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                break  # socket closed
            if sender != self._firmware_address:
                continue  # not our robot: a stray datagram on our port
            with self._condition:
                if not self._running:
                    break
                try:
                    sequence, readings = self._decode_state(data)
                except BackendError as error:
                    self._rejected = str(error)
                    continue
                if self._sequence is not None and not _is_newer(sequence, self._sequence):
                    continue  # a late or duplicated packet
                self._sequence = sequence
                self._readings = readings
                self._last_packet_wall = time.monotonic()
                self._send(self._command_for_this_cycle())
                self._condition.notify_all()

    def _send(self, packet: bytes) -> None:
        """Send a command packet, stamped with our sequence and the last state's (lock held)."""
        self._command_sequence = (self._command_sequence + 1) % 2**32
        header = COMMAND_HEADER.pack(
            COMMAND_MAGIC, self._ndof, 0, self._command_sequence, self._sequence or 0
        )
        try:
            self._socket.sendto(header + packet, self._firmware_address)
        except OSError as error:
            self._rejected = f"cannot send to the firmware: {error}"

    # ------------------------------------------------------------------ conversions

    def _decode_state(self, data: bytes) -> tuple[int, RobotReadings]:
        """A state packet in wbm's conventions (see the module docstring for the wire format).

        Raises:
            BackendError: Wrong magic, size or counts.
        """
        if len(data) != self._state_size:
            raise BackendError(f"state packet of {len(data)} bytes, expected {self._state_size}")
        magic, n_joints, n_ft, sequence, time_us = STATE_HEADER.unpack_from(data)
        if magic != STATE_MAGIC or n_joints != self._ndof or n_ft != len(self._ft_names):
            raise BackendError(
                f"state packet {magic!r} with {n_joints} joints and {n_ft} F/T sensors, "
                f"expected {STATE_MAGIC!r}, {self._ndof} and {len(self._ft_names)}"
            )
        values = np.frombuffer(data, dtype="<f4", offset=STATE_HEADER.size).astype(float)
        n = self._ndof
        joints = [self.model.from_config_order(row) for row in values[: 3 * n].reshape(3, n)]
        imu = values[3 * n : 3 * n + IMU_VALUES]
        ft = values[3 * n + IMU_VALUES :].reshape(-1, 6)
        imu_reading = None
        if self._description.imu_frame is not None:
            w, x, y, z = imu[0:4]
            imu_reading = ImuReading(
                orientation_xyzw=np.array([x, y, z, w]) / np.linalg.norm(imu[0:4]),
                angular_velocity=np.deg2rad(imu[4:7]),
                linear_acceleration=imu[7:10] * STANDARD_GRAVITY,
            )
        readings = RobotReadings(
            time=time_us * 1e-6,
            joint_positions=np.deg2rad(joints[0]),
            joint_velocities=np.deg2rad(joints[1]),
            joint_efforts=joints[2],
            imu=imu_reading,
            # Parent on child on the wire; child on parent in wbm: the opposite wrench.
            wrenches={name: -ft[i] for i, name in enumerate(self._ft_names)},
        )
        return sequence, readings

    def _encode_command(self, command: JointCommand) -> tuple[bytes, tuple[str, ...]]:
        """Mask and values of a command packet, clamped to the limits, in firmware order.

        Returns:
            The packet's mask and values, and the names of the joints that were clamped.

        Raises:
            InputError: An array of the wrong length or holding inf.
        """
        n = self._ndof
        mask = np.zeros(n, dtype=np.uint8)
        values = np.zeros((3, n))
        clamped = np.zeros(n, dtype=bool)
        fields = (
            ("position", command.position, POSITION_BIT, self._lower, self._upper),
            ("velocity", command.velocity, VELOCITY_BIT, None, None),
            ("effort", command.effort, EFFORT_BIT, -self._torque_limits, self._torque_limits),
        )
        for row, (name, array, bit, lower, upper) in enumerate(fields):
            if array is None:
                continue
            array = np.asarray(array, dtype=float)
            if array.shape != (n,):
                raise InputError(f"command.{name}", f"an array of {n} values", array.shape)
            if np.isinf(array).any():
                joints = [
                    self._description.joint_names[i] for i in np.flatnonzero(np.isinf(array))
                ]
                raise InputError(f"command.{name}", "finite values or NaN", f"inf at {joints}")
            given = ~np.isnan(array)
            mask[given] |= bit
            value = np.where(given, array, 0.0)
            if lower is not None:
                limited = np.clip(value, lower, upper)
                clamped |= given & (limited != value)
                value = limited
            values[row] = value
        values[0:2] = np.rad2deg(values[0:2])  # rad -> deg on the wire
        device = np.array([self.model.to_config_order(row) for row in values])  # firmware order
        device_mask = self.model.to_config_order(mask).astype(np.uint8)
        names = tuple(str(name) for name in np.asarray(self._description.joint_names)[clamped])
        return device_mask.tobytes() + device.astype("<f4").tobytes(), names


def _is_newer(sequence: int, previous: int) -> bool:
    """Whether a wrapping u32 sequence number comes after ``previous``."""
    return 0 < (sequence - previous) % 2**32 < 2**31


__all__ = ["TemplateDriver", "TemplateDriverSettings"]
