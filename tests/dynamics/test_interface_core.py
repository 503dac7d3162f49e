"""The node's core helpers without a node: parameters file, watchdog, backend, command merge.

(The pacing loop has its own tests: test_pacing.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
import rclpy
import yaml
from dynamics_helpers import UnreachedHardware
from node_helpers import PARAMS_FILE
from rclpy.context import Context
from sensor_msgs.msg import JointState

from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.backends import (
    BACKENDS,
    EngineBackend,
    NoSettings,
    SimulatorBackend,
)
from wbm_dynamics.exceptions import BackendError
from wbm_dynamics.held_command import HeldCommand
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.mujoco.settings import MujocoSettings
from wbm_dynamics.pacing import PacingLoop
from wbm_dynamics.ros.robot_interface_node import RobotInterfaceNode
from wbm_dynamics.ros.robot_messages import command_update
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.watchdog import CommandWatchdog, damping_command


def params_file_values() -> dict:
    return yaml.safe_load(PARAMS_FILE.read_text())["/**"]["ros__parameters"]


def node_level(values: dict) -> dict:
    """The node-level keys: without the backends' sections (each read by its backend)."""
    return {key: value for key, value in values.items() if key not in BACKENDS}


def test_the_icub_params_file_is_valid_and_documents_the_defaults(icub):
    values = params_file_values()
    settings = RobotInterfaceSettings.from_mapping(node_level(values), source=str(PARAMS_FILE))
    # The file spells out every default, for the node and for each built-in backend.
    assert settings == RobotInterfaceSettings()
    assert SimulatorSettings.from_mapping(values["simulator"]) == SimulatorSettings()
    assert MujocoSettings.from_mapping(values["mujoco"]) == MujocoSettings()
    loop = PacingLoop(SimulatorBackend(icub), settings, publish=print, log=print)
    assert loop.publish_steps == 2  # 500 Hz at 1 ms
    assert loop.control_steps == 10  # 100 Hz at 1 ms
    # Every value carries a comment (the file is the parameters' documentation).
    lines = [line for line in PARAMS_FILE.read_text().splitlines() if ":" in line]
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#") or stripped.endswith(":") or "ros__parameters" in line:
            continue
        assert "#" in line, f"value without a comment: {line}"


def test_ros_encodings_of_boxes_and_unset_tangential_constants():
    section = params_file_values()["simulator"]
    section["boxes"] = {
        "names": ["step"],
        "step": {"center": [0.3, 0.0, 0.025], "size": [0.2, 0.6, 0.05]},
    }
    section["compliant"]["tangential_stiffness"] = 5.0e5
    settings = SimulatorSettings.from_mapping(section)
    assert list(settings.boxes) == ["step"] and settings.boxes["step"].name == "step"
    assert settings.compliant.tangential_stiffness == 5.0e5
    assert settings.compliant.tangential_damping is None  # 0 in the file


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"pacing": "slow"}, "pacing"),
        ({"real_time_factor": 0.0}, "real_time_factor"),
        ({"control_rate": 0.0}, "control_rate"),
        ({"command_timeout": -1.0}, "command_timeout"),
        ({"publish_rate": "fast"}, "publish_rate"),
        ({"hold_posture_at_start": "yes"}, "hold_posture_at_start"),
        ({"robot": ""}, "robot"),
        ({"noise": {"ft_force": -1.0}}, "noise.ft_force"),
        ({"seed": -2}, "seed"),
        ({"unknown_parameter": 1}, "unknown_parameter"),
    ],
)
def test_bad_parameters_are_named(change, key):
    values = node_level(params_file_values())
    values.update(change)
    with pytest.raises(ConfigError) as error:
        RobotInterfaceSettings.from_mapping(values, source="robot_interface.yaml")
    assert error.value.key == key
    assert "robot_interface.yaml" in str(error.value)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"dt": 0.0}, "dt"),
        ({"compliant": {"damping": -1.0}}, "compliant.damping"),
        ({"boxes": {"step": {}}}, "boxes.step.center"),
        ({"boxes": {"names": ["step"]}}, "boxes.step"),
        ({"boxes": {"names": [], "step": {"size": [1, 1, 1]}}}, "boxes.step"),
    ],
)
def test_bad_simulator_section_values_are_named(change, key):
    section = params_file_values()["simulator"]
    section.update(change)
    with pytest.raises(ConfigError) as error:
        SimulatorSettings.from_mapping(section, source="robot_interface.yaml")
    assert error.value.key == key


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"timestep": 0.0}, "timestep"),
        ({"timestep": 0.1}, "timestep"),
        ({"integrator": "verlet"}, "integrator"),
        ({"cone": "round"}, "cone"),
        ({"solref": [0.02]}, "solref"),
        ({"solref": [0.02, -1.0]}, "solref"),
        ({"solimp": [0.9, 0.95, 0.001, 0.5]}, "solimp"),
        ({"solimp": [1.5, 0.95, 0.001, 0.5, 2.0]}, "solimp"),
        ({"solimp": [0.9, 0.95, 0.0, 0.5, 2.0]}, "solimp[2]"),
        ({"solimp": [0.9, 0.95, 0.001, 1.5, 2.0]}, "solimp[3]"),
        ({"solimp": [0.9, 0.95, 0.001, 0.5, 0.5]}, "solimp[4]"),
        ({"friction": -0.1}, "friction"),
        ({"sole_thickness": 0.0}, "sole_thickness"),
        ({"solver_iterations": 0}, "solver_iterations"),
        ({"boxes": {}}, "boxes"),  # MuJoCo has the ground plane only
    ],
)
def test_bad_mujoco_section_values_are_named(change, key):
    section = params_file_values()["mujoco"]
    section.update(change)
    with pytest.raises(ConfigError) as error:
        MujocoSettings.from_mapping(section, source="robot_interface.yaml")
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


def test_joint_commands_merge_subsets_by_name():
    joints = {"a": 0, "b": 1, "c": 2}
    held = HeldCommand(3)

    def merge(message: JointState) -> JointCommand:
        return held.merge(command_update(message, joints))

    merge(JointState(name=["a", "b"], position=[1.0, 2.0], effort=[0.5, 0.6]))
    command = merge(JointState(name=["c", "a"], velocity=[3.0, 4.0]))
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
            merge(bad)
    np.testing.assert_array_equal(held.command().velocity, [4.0, np.nan, 3.0])  # unchanged
    held.clear()
    assert np.isnan(held.command().effort).all()


def test_simulator_backend_implements_the_interface(icub):
    backend = SimulatorBackend(icub, SimulatorSettings())
    assert isinstance(backend, EngineBackend) and backend.steppable
    assert SimulatorBackend.settings_class is SimulatorSettings
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
    np.testing.assert_array_equal(base.configuration, backend.engine.q[:7])
    backend.reset()
    assert backend.time == 0.0
    with pytest.raises(ConfigError) as error:
        SimulatorBackend(icub, MujocoSettings())  # each backend reads its own settings class
    assert "SimulatorSettings" in error.value.expected


def test_hold_posture_command_holds_the_initial_posture(panda, icub):
    # Fixed base: PD on the posture with the exact gravity torques: the arm does not move.
    backend = SimulatorBackend(panda, SimulatorSettings())
    backend.write(backend.hold_posture_command())
    backend.advance(0.5)
    np.testing.assert_allclose(backend.engine.q, panda.initial_configuration(), atol=1e-9)
    # Floating base: the feed-forward is the static torques of standing on both soles.
    command = SimulatorBackend(icub, SimulatorSettings()).hold_posture_command()
    q0 = icub.initial_configuration()
    np.testing.assert_array_equal(command.position, icub.joint_positions(q0))
    expected, _ = icub.static_contact_torques(q0, ["l_sole", "r_sole"])
    np.testing.assert_array_equal(command.effort, expected)


def test_a_backend_of_a_real_robot_has_the_defaults_and_cannot_reset_or_push(icub):
    hardware = UnreachedHardware(icub)
    assert not hardware.steppable and hardware.base_state() is None
    assert (
        hardware.settings_class is NoSettings
        and UnreachedHardware.checked_settings(None) == NoSettings()
    )
    hardware.close()  # nothing to release
    # The posture command comes from the model: the same for every backend.
    expected = SimulatorBackend(icub).hold_posture_command()
    command = hardware.hold_posture_command()
    np.testing.assert_array_equal(command.position, expected.position)
    np.testing.assert_array_equal(command.effort, expected.effort)
    with pytest.raises(BackendError, match="UnreachedHardware cannot be reset"):
        hardware.reset()
    with pytest.raises(BackendError, match="cannot apply external wrenches"):
        hardware.apply_wrench("base_link", np.zeros(6), 0.1)


def test_the_node_maps_its_ros_parameters_boxes_included(tmp_path):
    """The node's parameter layer (in-process, own rclpy context): params file -> settings."""
    params = tmp_path / "boxes.yaml"
    params.write_text(
        "/**:\n"
        "  ros__parameters:\n"
        "    pacing: lockstep\n"
        "    noise: {joint_position: 0.001}\n"
        "    simulator:\n"
        "      boxes:\n"
        "        names: [step, wall]\n"
        "        step: {center: [0.3, 0.0, 0.025], size: [0.2, 0.6, 0.05]}\n"
        "        wall: {center: [1.0, 0.0, 0.5], size: [0.1, 2.0, 1.0], friction: 0.5}\n"
        "    mujoco:\n"
        "      timestep: -1.0\n"  # the section of another backend: not read
    )
    context = Context()
    rclpy.init(context=context)

    def node(*arguments: str) -> RobotInterfaceNode:
        return RobotInterfaceNode(context=context, cli_args=["--ros-args", *arguments])

    try:
        built = node("--params-file", str(params))
        boxes = built.backend.engine.settings.boxes.values()
        noise = built.backend.noise
        built.destroy_node()
        assert [(b.name, b.center, b.friction) for b in boxes] == [
            ("step", (0.3, 0.0, 0.025), 0.8),
            ("wall", (1.0, 0.0, 0.5), 0.5),
        ]
        assert noise.settings.joint_position == 0.001 and noise.seed == 0
        for arguments, key in (
            (["-p", "simulator.integrator:=euler"], "simulator.integrator"),
            (["-p", "simulator.boxes.names:=[step]"], "simulator.boxes.step"),
            (["-p", "backend:=mujoco", "-p", "mujoco.timestep:=-1.0"], "mujoco.timestep"),
            (["-p", "backend:=mujoco", "-p", "mujoco.boxes.names:=[step]"], "mujoco.boxes"),
            (["-p", "control_period:=0.01"], "control_period"),  # renamed: control_rate
            (["-p", "backend_config:=sim.yaml", "-p", "simulator.dt:=0.002"], "simulator"),
        ):
            with pytest.raises(ConfigError) as error:
                node(*arguments)
            assert error.value.key == key, arguments
            assert "robot_interface" in str(error.value)
    finally:
        rclpy.shutdown(context=context)
