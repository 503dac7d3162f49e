"""The template hardware driver against the emulated robot (real UDP sockets on 127.0.0.1).

The emulator (``device_emulator.py``) runs our simulator in real time behind the template
protocol, in device units (degrees, g, scalar-first quaternions, F/T parent-on-child); the
driver must hand out exactly the simulator's own readings in wbm's conventions. Tolerances come
from the wire's float32 (relative 6e-8): 1e-6 rad on joint positions (values up to 180 deg).
"""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest
from driver_helpers import mask_runs, state_at

from wbm_description.conventions import rotation_from_quaternion_xyzw
from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.backends.template_driver import (
    TemplateDriver,
    TemplateDriverSettings,
    _is_newer,
)
from wbm_dynamics.exceptions import BackendError
from wbm_dynamics.settings import SimulatorSettings

PERIOD = 0.002  # the emulator's cycle [s]
F32 = {"rtol": 2e-7}  # float32 on the wire, relative


def connect(emulator, **settings) -> TemplateDriver:
    """The driver on the emulator; state_timeout 0.5 s unless given: a test machine shared with
    other jobs can stall a process for more than the default 0.1 s (seen with two suites in
    parallel on 2 cores)."""
    settings = {"state_timeout": 0.5, **settings}
    return TemplateDriver(emulator.model, TemplateDriverSettings(port=emulator.port, **settings))


@pytest.fixture()
def posture(icub) -> JointCommand:
    """iCub's standing command: initial posture plus the static torques of standing."""
    return SimulatorBackend(icub, SimulatorSettings()).hold_posture_command()


@pytest.fixture()
def emulator(emulator, icub):
    emulator.model = icub
    return emulator


def test_readings_have_the_names_units_and_signs_of_the_simulator(emulator, icub, posture):
    with connect(emulator) as driver:
        driver.write(posture)
        readings = []
        for _ in range(30):
            driver.advance(0.01)
            readings.append(driver.read())
        description = driver.description
        # The base class's posture command, from the model: the same for a driver.
        hold = driver.hold_posture_command()
        np.testing.assert_array_equal(hold.position, posture.position)
        np.testing.assert_array_equal(hold.effort, posture.effort)
    dump = emulator.stop()

    assert description.joint_names == icub.joint_names
    assert description.ft_sensor_frames == {
        "left_foot": "l_foot_ft_sensor",
        "right_foot": "r_foot_ft_sensor",
    }
    assert description.imu_frame == "imu_frame"
    assert description.base_frame is None
    assert list(dump["joint_names"]) == list(icub.joint_names)
    for reading in readings:
        i = state_at(dump, reading.time)
        np.testing.assert_allclose(reading.joint_positions, dump["joint_positions"][i], atol=1e-6)
        np.testing.assert_allclose(
            reading.joint_velocities, dump["joint_velocities"][i], atol=1e-6, **F32
        )
        np.testing.assert_allclose(
            reading.joint_efforts, dump["joint_efforts"][i], atol=1e-5, **F32
        )
        np.testing.assert_allclose(
            reading.imu.orientation_xyzw, dump["imu_orientation"][i], atol=1e-6
        )
        np.testing.assert_allclose(
            reading.imu.angular_velocity, dump["imu_angular_velocity"][i], atol=1e-6, **F32
        )
        np.testing.assert_allclose(
            reading.imu.linear_acceleration, dump["imu_linear_acceleration"][i], atol=1e-5, **F32
        )
        for name in ("left_foot", "right_foot"):
            np.testing.assert_allclose(
                reading.wrenches[name], dump[f"wrench_{name}"][i], atol=1e-4, **F32
            )
    # The conventions themselves, standing on both feet after 0.3 s:
    last = readings[-1]
    up = rotation_from_quaternion_xyzw(last.imu.orientation_xyzw) @ last.imu.linear_acceleration
    np.testing.assert_allclose(up, [0.0, 0.0, 9.81], atol=0.5)  # proper acceleration: +g up
    # Child (foot) on parent (leg), sensor z pointing down: -f_z is the weight above each
    # sensor; both together carry the robot but its feet (between 85 % and 100 % of m g).
    carried = -(last.wrenches["left_foot"][2] + last.wrenches["right_foot"][2])
    weight = icub.total_mass * 9.81
    assert 0.85 * weight < carried < weight, (carried, weight)
    np.testing.assert_allclose(last.joint_positions, icub.initial_posture, atol=0.02)


def test_commands_reach_the_device_clamped_and_finite(emulator, icub, posture):
    lower, upper = icub.joint_position_limits
    limits = icub.torque_limits
    position = posture.position.copy()
    position[0] = upper[0] + 0.5  # beyond the upper limit [rad]
    position[1] = lower[1] - 0.5  # beyond the lower limit
    position[2] = np.nan  # not commanded
    effort = posture.effort.copy()
    effort[3] = 10.0 * limits[3]
    effort[4] = -10.0 * limits[4]
    names = icub.joint_names
    with connect(emulator) as driver:
        driver.write(JointCommand(position=position, effort=effort))
        assert driver.clamped_joints == (names[0], names[1], names[3], names[4])
        driver.advance(0.02)
        bad = position.copy()
        bad[5] = np.inf
        with pytest.raises(InputError, match=rf"command.position.*inf at \['{names[5]}'\]"):
            driver.write(JointCommand(position=bad))
        driver.advance(0.02)
    dump = emulator.stop()

    values = dump["command_values"]
    assert np.isfinite(values).all(), "a NaN or inf reached the device"
    expected_mask = np.full(icub.ndof, 1 | 4)
    expected_mask[2] = 4  # position not commanded (NaN)
    # Damping until the write, then the clamped command every cycle (the inf one never sent).
    runs = mask_runs(dump["command_mask"])
    assert [run[0] for run in runs] == [(2,) * icub.ndof, tuple(expected_mask)], runs
    first, count = runs[1][1], runs[1][2]
    assert count >= 15, "fewer command packets than cycles in 40 ms"
    for position_deg, velocity_deg, effort_sent in values[first:]:
        assert position_deg[2] == 0.0 and not velocity_deg.any()
        np.testing.assert_allclose(position_deg[0], np.rad2deg(upper[0]), atol=1e-4)
        np.testing.assert_allclose(position_deg[1], np.rad2deg(lower[1]), atol=1e-4)
        np.testing.assert_allclose(position_deg[5:], np.rad2deg(position[5:]), atol=1e-4)
        np.testing.assert_allclose(effort_sent[3:5], [limits[3], -limits[4]], rtol=1e-6)
        np.testing.assert_allclose(effort_sent[5:], effort[5:], rtol=1e-6, atol=1e-6)


def _advance_timed(driver, duration: float) -> float:
    """``driver.advance(duration)``; the wall time it took [s]."""
    called = time.monotonic()
    driver.advance(duration)
    return time.monotonic() - called


def test_advance_follows_device_time(emulator):
    with connect(emulator) as driver:
        driver.advance(0.0)
        start_device, start_wall = driver.time, time.monotonic()
        total = 0.0
        for duration in (0.002, 0.01, 0.004, 0.004, 0.05, 0.2):
            took = _advance_timed(driver, duration)
            total += duration
            moved = driver.time - start_device
            # One schedule, no drift: device time moves in whole cycles, so the first packet
            # at or after the target (half a cycle of rounding), or later by the time this
            # thread took to wake up and read it: 5 cycles, or as much as the call itself
            # outlasted its duration (a stall of the loaded machine: 44 ms once in a CI run).
            # A schedule that drifted (each call from its own start) would be late by the
            # callers' time between the calls, which the calls' own time does not excuse.
            late = max(0.0, took - duration)
            assert total - PERIOD / 2 <= moved <= total + 5 * PERIOD + late, (total, moved, late)
            time.sleep(0.001)  # the caller's own work between calls (publishing)
        # The emulator keeps real time or falls behind it, never ahead.
        assert time.monotonic() - start_wall >= total - PERIOD - 0.005
        # No drift over many calls: ten calls of 10 ms with 4 ms of the caller's own work
        # between them end 100 ms after the first one's start, within 10 cycles of waking up
        # (5 were exceeded once beside three busy processes: the emulator's packets come in
        # bursts when it catches up). A schedule restarted from each call's start ends 40 ms
        # later or more (measured with that change: 0.140 s, and this fails).
        driver.advance(0.0)  # a new schedule: the caller was late by more than 0 s
        first = driver.time
        for _ in range(10):
            time.sleep(0.004)
            took = _advance_timed(driver, 0.01)
        late = max(0.0, took - 0.01)
        moved = driver.time - first
        assert 0.1 - PERIOD / 2 <= moved <= 0.1 + 10 * PERIOD + late + 1e-9, (moved, late)
        # A caller late by more than a duration restarts the schedule from the latest state.
        time.sleep(0.05)
        late_state = driver.time
        took = _advance_timed(driver, 0.01)
        late = max(0.0, took - 0.01)
        assert 0.01 - PERIOD / 2 <= driver.time - late_state <= 0.01 + 5 * PERIOD + late
        with pytest.raises(InputError, match="duration"):
            driver.advance(-0.01)
        with pytest.raises(InputError, match="duration"):
            driver.advance(float("nan"))


def test_state_watchdog_fires_when_the_robot_stops(emulator):
    with connect(emulator, state_timeout=0.1) as driver:
        driver.advance(0.02)
        emulator.terminate()  # the robot stops sending
        start = time.monotonic()
        with pytest.raises(BackendError, match=r"no state packet .* > state_timeout = 0.1 s"):
            driver.advance(1.0)
        waited = time.monotonic() - start
        assert waited < 0.5, waited  # 0.1 s after the last packet, plus scheduling
        with pytest.raises(BackendError, match="state_timeout = 0.1 s"):
            driver.read()
    emulator.stop()


def test_connect_timeout_names_the_address_timeout_and_rejected_packet(icub):
    fake = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # a device that answers nonsense
    fake.bind(("127.0.0.1", 0))
    fake.settimeout(2.0)
    port = fake.getsockname()[1]
    received: list[bytes] = []

    def answer_once() -> None:
        data, driver_address = fake.recvfrom(65536)
        received.append(data)
        fake.sendto(b"WBS1 not a state packet", driver_address)

    thread = threading.Thread(target=answer_once)
    thread.start()
    try:
        start = time.monotonic()
        with pytest.raises(BackendError) as error:
            TemplateDriver(icub, TemplateDriverSettings(port=port, connect_timeout=0.3))
        assert 0.3 <= time.monotonic() - start < 1.0
        assert f"no state packet from 127.0.0.1:{port} within connect_timeout = 0.3 s" in str(
            error.value
        )
        # 29 joints, 2 F/T sensors: 20 + 4 (3 x 29 + 10 + 12) bytes.
        assert "last packet rejected: state packet of 23 bytes, expected 456" in str(error.value)
        thread.join()
        # What it sent meanwhile is damping: 16-byte header + 29 masks + 3 x 29 float32.
        data = received[0]
        assert data[:4] == b"WBC1" and len(data) == 16 + 29 + 12 * 29
        mask = np.frombuffer(data, np.uint8, 29, 16)
        np.testing.assert_array_equal(mask, np.full(29, 2))  # velocity only
        assert not np.frombuffer(data, "<f4", 3 * 29, 16 + 29).any()  # of 0
    finally:
        thread.join()
        fake.close()


def test_sequence_numbers_wrap():
    assert _is_newer(1, 0) and _is_newer(0, 2**32 - 1) and _is_newer(5, 2**32 - 3)
    assert not _is_newer(7, 7) and not _is_newer(6, 7) and not _is_newer(2**32 - 1, 0)


def test_command_watchdog_sends_damping_then_the_firmware_takes_over(emulator, icub, posture):
    with connect(emulator, command_timeout=0.1) as driver:
        driver.write(posture)
        driver.advance(0.05)
        assert not driver.command_watchdog_tripped
        driver.advance(0.15)
        assert driver.command_watchdog_tripped
        driver.write(posture)
        assert not driver.command_watchdog_tripped
        driver.advance(0.05)
        last_write = driver.time
    # The driver is gone: the firmware's own watchdog (0.2 s of device time) trips. 1.5 s of
    # wall time: the emulator's device time moves in its own cycles, slower than the wall
    # clock when a loaded machine starves it (0.4 s was once not enough, at load 16).
    time.sleep(1.5)
    dump = emulator.stop()

    times, masks, values = dump["command_time"], dump["command_mask"], dump["command_values"]
    # Damping (before the first write), held, damping (watchdog), held again (write).
    runs = mask_runs(masks)
    damping, holding = (2,) * icub.ndof, (1 | 4,) * icub.ndof
    # A loaded machine can keep this process from closing the driver for more than the
    # 0.05 s left of command_timeout after the last write: the driver's own watchdog then
    # sends damping once more before it closes, command_timeout after that write.
    extra = runs[4:]
    assert [run[0] for run in runs[:4]] == [damping, holding, damping, holding], runs
    assert [run[0] for run in extra] in ([], [damping]), runs
    (_, held, n_held), (_, tripped, n_damping), (_, again, n_again) = runs[1:4]
    assert n_held >= 30 and n_damping >= 30 and n_again >= 15, runs  # 50, 50, 25 cycles
    assert not values[tripped : tripped + n_damping].any()  # velocity references 0
    # The switch comes command_timeout after the write (receive times: +-30 ms of lag).
    assert abs(times[tripped] - times[held] - 0.1) < 0.03, times[tripped] - times[held]
    if extra:
        assert abs(times[extra[0][1]] - times[again] - 0.1) < 0.03, runs
    # The driver kept sending while it lived: the firmware's watchdog tripped only after it
    # closed, 0.2 s of device time after the last command packet (within 2 cycles).
    trips = dump["watchdog_trips"]
    assert len(trips) == 1, trips
    assert times[-1] >= last_write - PERIOD
    assert 0.2 < trips[0] - times[-1] <= 0.2 + 2 * PERIOD + 1e-9


def test_settings_from_file_name_the_wrong_key(tmp_path):
    path = tmp_path / "driver.yaml"
    path.write_text("host: 127.0.0.1\nport: 50200\nstate_timeout: 0.05\n")
    settings = TemplateDriverSettings.from_yaml(path)
    assert (settings.port, settings.state_timeout, settings.period) == (50200, 0.05, 0.002)
    # The same as a ROS parameters file (the form of the node's own section).
    ros = tmp_path / "driver_params.yaml"
    ros.write_text("/**:\n  ros__parameters:\n    port: 50200\n    state_timeout: 0.05\n")
    assert TemplateDriverSettings.from_yaml(ros) == settings
    path.write_text("port: 50200\nstate_timout: 0.05\n")
    with pytest.raises(ConfigError, match="key 'state_timout': expected one of"):
        TemplateDriverSettings.from_yaml(path)
    path.write_text("state_timeout: -1\n")
    with pytest.raises(ConfigError, match=r"driver.yaml: key 'state_timeout'.*got -1"):
        TemplateDriverSettings.from_yaml(path)
    path.write_text("port: 0\n")
    with pytest.raises(ConfigError, match=r"driver.yaml: key 'port'"):
        TemplateDriverSettings.from_yaml(path)
    path.write_text("host: ''\n")
    with pytest.raises(ConfigError, match=r"driver.yaml: key 'host'"):
        TemplateDriverSettings.from_yaml(path)
    path.write_text("command_timeout: 0\nperiod: 0\n")  # 0 disables the one, not the other
    with pytest.raises(ConfigError, match=r"driver.yaml: key 'period'"):
        TemplateDriverSettings.from_yaml(path)
    with pytest.raises(ConfigError, match="key 'port'"):
        TemplateDriverSettings(port=70000)
    with pytest.raises(ConfigError, match="readable YAML"):
        TemplateDriverSettings.from_yaml(tmp_path / "missing.yaml")
    assert TemplateDriver.settings_class is TemplateDriverSettings
