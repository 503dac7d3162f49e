"""The node's core helpers without a node: parameters file, watchdog, backend, command merge."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy
import yaml
from node_helpers import PARAMS_FILE
from rclpy.context import Context
from sensor_msgs.msg import JointState

from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.backends import RobotBackend, SimulatorBackend
from wbm_dynamics.exceptions import BackendError
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.ros.robot_interface_node import RobotInterfaceNode
from wbm_dynamics.ros.robot_messages import CommandAccumulator
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.watchdog import CommandWatchdog, damping_command


def params_file_values() -> dict:
    return yaml.safe_load(PARAMS_FILE.read_text())["/**"]["ros__parameters"]


def test_the_icub_params_file_is_valid_and_documents_the_defaults():
    settings = RobotInterfaceSettings.from_parameters(
        params_file_values(), source=str(PARAMS_FILE)
    )
    assert settings == RobotInterfaceSettings()  # the file spells out every default
    assert settings.publish_steps == 2  # 500 Hz at 1 ms
    assert settings.control_steps == 10
    # Every value carries a comment (the file is the parameters' documentation).
    lines = [line for line in PARAMS_FILE.read_text().splitlines() if ":" in line]
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#") or stripped.endswith(":") or "ros__parameters" in line:
            continue
        assert "#" in line, f"value without a comment: {line}"


def test_ros_encodings_of_boxes_and_unset_tangential_constants():
    values = params_file_values()
    values["simulator"]["box_names"] = ["step"]
    values["simulator"]["boxes"] = {
        "step": {"center": [0.3, 0.0, 0.025], "size": [0.2, 0.6, 0.05]}
    }
    values["simulator"]["compliant"]["tangential_stiffness"] = 5.0e5
    settings = RobotInterfaceSettings.from_parameters(values)
    assert [box.name for box in settings.simulator.boxes] == ["step"]
    assert settings.simulator.compliant.tangential_stiffness == 5.0e5
    assert settings.simulator.compliant.tangential_damping is None  # 0 in the file


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"pacing": "slow"}, "pacing"),
        ({"real_time_factor": 0.0}, "real_time_factor"),
        ({"command_timeout": -1.0}, "command_timeout"),
        ({"publish_rate": "fast"}, "publish_rate"),
        ({"unknown_parameter": 1}, "unknown_parameter"),
        ({"simulator": {"dt": 0.0}}, "simulator.dt"),
        ({"simulator": {"compliant": {"damping": -1.0}}}, "simulator.compliant.damping"),
        ({"simulator": {"boxes": {"step": {}}}}, "simulator.box_names"),
        ({"simulator": {"box_names": ["step"]}}, "simulator.boxes.step"),
    ],
)
def test_bad_parameters_are_named(change, key):
    values = params_file_values()
    values.update(change)
    with pytest.raises(ConfigError) as error:
        RobotInterfaceSettings.from_parameters(values, source="simulator.yaml")
    assert error.value.key == key


def test_watchdog_trips_after_the_timeout_once_and_resumes():
    watchdog = CommandWatchdog(0.5)
    assert not watchdog.check(10.0)  # disarmed before any command
    watchdog.command_received(1.0)
    assert not watchdog.check(1.5)
    assert watchdog.check(1.501)
    assert not watchdog.check(2.0)  # reported once
    assert watchdog.tripped
    assert watchdog.command_received(2.1)  # resumed
    assert not watchdog.tripped
    assert not CommandWatchdog(0.0).check(1e9)  # 0 disables it
    with pytest.raises(InputError):
        CommandWatchdog(-1.0)
    np.testing.assert_array_equal(damping_command(3).velocity, np.zeros(3))


def test_command_accumulator_merges_subsets_by_name():
    merge = CommandAccumulator(("a", "b", "c"))
    merge.merge(JointState(name=["a", "b"], position=[1.0, 2.0], effort=[0.5, 0.6]))
    command = merge.merge(JointState(name=["c", "a"], velocity=[3.0, 4.0]))
    # a: named again with only a velocity: its position and effort are no longer commanded.
    np.testing.assert_array_equal(command.position, [np.nan, 2.0, np.nan])
    np.testing.assert_array_equal(command.velocity, [4.0, np.nan, 3.0])
    np.testing.assert_array_equal(command.effort, [np.nan, 0.6, np.nan])
    for bad in (
        JointState(name=["x"], effort=[1.0]),
        JointState(name=["a", "a"], effort=[1.0, 1.0]),
        JointState(name=["a"], effort=[1.0, 2.0]),
        JointState(name=["a"], effort=[float("inf")]),
    ):
        with pytest.raises(InputError):
            merge.merge(bad)
    np.testing.assert_array_equal(merge.command().velocity, [4.0, np.nan, 3.0])  # unchanged


def test_simulator_backend_implements_the_interface(icub):
    backend = SimulatorBackend(icub, SimulatorSettings())
    assert isinstance(backend, RobotBackend) and backend.steppable
    description = backend.description
    assert description.joint_names == icub.joint_names
    assert description.ft_sensor_frames == {
        "left_foot": "l_foot_ft_sensor",
        "right_foot": "r_foot_ft_sensor",
    }
    assert (description.imu_frame, description.base_frame) == ("imu_frame", "base_link")
    backend.write(JointCommand(effort=np.ones(icub.ndof)))
    backend.advance(0.01)
    assert backend.time == pytest.approx(0.01)
    np.testing.assert_array_equal(backend.read().joint_efforts, np.ones(icub.ndof))
    base = backend.base_state()
    np.testing.assert_array_equal(base.configuration, backend.simulator.q[:7])
    backend.reset()
    assert backend.time == 0.0


def test_posture_command_holds_the_initial_posture(panda, icub):
    # Fixed base: PD on the posture with the exact gravity torques: the arm does not move.
    backend = SimulatorBackend(panda, SimulatorSettings())
    backend.write(backend.posture_command())
    backend.advance(0.5)
    np.testing.assert_allclose(backend.simulator.q, panda.initial_configuration(), atol=1e-9)
    # Floating base: the feed-forward is the static torques of standing on both soles.
    command = SimulatorBackend(icub, SimulatorSettings()).posture_command()
    q0 = icub.initial_configuration()
    np.testing.assert_array_equal(command.position, icub.joint_positions(q0))
    expected, _ = icub.static_contact_torques(q0, ["l_sole", "r_sole"])
    np.testing.assert_array_equal(command.effort, expected)


def test_a_backend_of_a_real_robot_cannot_reset_or_push():
    class Hardware(RobotBackend):
        description = None
        time = 0.0

        def read(self):
            raise NotImplementedError

        def write(self, command):
            raise NotImplementedError

        def advance(self, duration):
            raise NotImplementedError

    hardware = Hardware()
    assert not hardware.steppable and hardware.base_state() is None
    with pytest.raises(BackendError):
        hardware.reset()
    with pytest.raises(BackendError):
        hardware.apply_wrench("base_link", np.zeros(6), 0.1)


def test_the_node_maps_its_ros_parameters_boxes_included(tmp_path):
    """The node's parameter layer (in-process, own rclpy context): params file -> settings."""
    params = tmp_path / "boxes.yaml"
    params.write_text(
        "/**:\n"
        "  ros__parameters:\n"
        "    pacing: lockstep\n"
        "    simulator:\n"
        "      box_names: [step, wall]\n"
        "      boxes:\n"
        "        step: {center: [0.3, 0.0, 0.025], size: [0.2, 0.6, 0.05]}\n"
        "        wall: {center: [1.0, 0.0, 0.5], size: [0.1, 2.0, 1.0], friction: 0.5}\n"
    )
    context = Context()
    rclpy.init(context=context)
    try:
        node = RobotInterfaceNode(
            context=context, cli_args=["--ros-args", "--params-file", str(params)]
        )
        boxes = node.settings.simulator.boxes
        node.destroy_node()
        assert [(b.name, b.center, b.friction) for b in boxes] == [
            ("step", (0.3, 0.0, 0.025), 0.8),
            ("wall", (1.0, 0.0, 0.5), 0.5),
        ]
        with pytest.raises(ConfigError) as error:
            RobotInterfaceNode(
                context=context, cli_args=["--ros-args", "-p", "simulator.integrator:=euler"]
            )
        assert error.value.key == "simulator.integrator"
    finally:
        rclpy.shutdown(context=context)
