"""Backend selection by name: built-in backends and entry points ``wbm.robot_backends``.

Plugins are installed the way pip installs them: a ``<name>-<version>.dist-info`` directory with
an ``entry_points.txt`` on ``sys.path``; the real ``importlib.metadata`` lookup finds them.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import rclpy
from driver_helpers import TEMPLATE, write_dist_info
from rclpy.context import Context

from wbm_description.exceptions import ConfigError
from wbm_dynamics.backends.plugins import (
    ENTRY_POINT_GROUP,
    available_backends,
    create_backend,
    load_backend,
)
from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.backends.template_driver import TemplateDriver, TemplateDriverSettings
from wbm_dynamics.exceptions import BackendError
from wbm_dynamics.noise import NoiseSettings, SensorNoise
from wbm_dynamics.ros.robot_interface_node import RobotInterfaceNode
from wbm_dynamics.settings import SimulatorSettings

_counter = itertools.count()


@pytest.fixture()
def install(tmp_path, monkeypatch):
    """install(entries, name=...): a fresh sys.path entry holding one distribution."""

    def install(entries: dict[str, str], name: str = "wbm-test-driver") -> Path:
        root = tmp_path / f"site_{next(_counter)}"
        write_dist_info(root, entries, name)
        monkeypatch.syspath_prepend(str(root))
        return root

    return install


def test_an_entry_point_name_loads_its_class(install):
    install({"template_udp": TEMPLATE})
    assert load_backend("template_udp") is TemplateDriver
    sources = available_backends()
    assert [s.origin for s in sources["template_udp"]] == [f"{TEMPLATE} (wbm-test-driver 0.1)"]
    assert [s.origin for s in sources["simulator"]] == ["built-in"]
    assert load_backend("simulator") is SimulatorBackend


def test_an_unknown_name_lists_the_names_available(install):
    install({"template_udp": TEMPLATE})
    with pytest.raises(BackendError) as error:
        load_backend("my_robot")
    message = str(error.value)
    assert "unknown robot backend 'my_robot'; available: " in message
    assert "simulator (built-in)" in message
    assert f"template_udp ({TEMPLATE} (wbm-test-driver 0.1))" in message
    assert f"entry point group '{ENTRY_POINT_GROUP}'" in message


def test_a_plugin_that_fails_to_import_is_named_with_the_error(install):
    install({"broken": "wbm_no_such_driver_module.driver:Driver"}, name="broken-driver")
    with pytest.raises(BackendError) as error:
        load_backend("broken")
    message = str(error.value)
    assert "robot backend 'broken'" in message
    assert "wbm_no_such_driver_module.driver:Driver (broken-driver 0.1)" in message
    assert "failed to import: ModuleNotFoundError" in message
    assert isinstance(error.value.__cause__, ModuleNotFoundError)


def test_a_plugin_that_is_not_a_backend_is_refused(install):
    install({"function": "wbm_dynamics.backends.plugins:create_backend"})
    with pytest.raises(BackendError, match="expected a subclass of .*RobotBackend"):
        load_backend("function")


def test_a_name_registered_twice_is_an_error(install):
    install({"simulator": TEMPLATE}, name="shadowing-driver")
    with pytest.raises(BackendError) as error:
        load_backend("simulator")
    message = str(error.value)
    assert "registered more than once: built-in; " in message
    assert "(shadowing-driver 0.1)" in message


def test_a_plugin_whose_settings_class_is_not_settings_is_refused(install):
    install({"broken_settings": "driver_helpers:BrokenSettingsBackend"})
    with pytest.raises(BackendError, match="settings_class .* expected a subclass of .*Settings"):
        load_backend("broken_settings")


def test_create_backend_passes_its_own_settings_or_reads_them_from_a_file(
    install, icub, emulator, tmp_path
):
    simulator = create_backend("simulator", icub, SimulatorSettings(dt=0.002))
    assert isinstance(simulator, SimulatorBackend)
    assert simulator.description.period == 0.002
    # Any backend reads its own settings class from a file; the wrong file is named.
    config = tmp_path / "driver.yaml"
    config.write_text(f"port: {emulator.port}\nstate_timeout: 0.2\n")
    with pytest.raises(ConfigError) as error:
        create_backend("simulator", icub, config_file=config)
    assert (error.value.path, error.value.key) == (str(config), "port")
    simulation = tmp_path / "simulator.yaml"
    simulation.write_text("dt: 0.0005\n")
    assert create_backend("simulator", icub, config_file=simulation).description.period == 5e-4
    with pytest.raises(ConfigError, match="not both"):
        create_backend("simulator", icub, SimulatorSettings(), config_file=simulation)
    with pytest.raises(ConfigError, match="SimulatorSettings"):
        create_backend("simulator", icub, TemplateDriverSettings())
    install({"template_udp": TEMPLATE})
    # Sensor noise is for simulated robots only.
    noise = SensorNoise(NoiseSettings(joint_position=1e-3))
    with pytest.raises(BackendError, match="'template_udp' .* sensor noise applies to engine"):
        create_backend("template_udp", icub, config_file=config, noise=noise)
    assert create_backend("simulator", icub, noise=noise).noise is noise
    with create_backend("template_udp", icub, config_file=config) as driver:
        assert isinstance(driver, TemplateDriver)
        assert driver.settings.state_timeout == 0.2
        driver.advance(0.01)
        assert driver.read().joint_positions.shape == (icub.ndof,)
    emulator.stop()


def test_the_node_reads_the_driver_section_named_after_the_backend(install, icub, emulator):
    """In-process node (own rclpy context): backend:=template_udp with its settings in the
    parameters' template_udp section, read with the driver's own settings class."""
    install({"template_udp": TEMPLATE})
    context = Context()
    rclpy.init(context=context)

    def node(*parameters: str) -> RobotInterfaceNode:
        arguments = ["--ros-args", "-p", "backend:=template_udp"]
        for parameter in parameters:
            arguments += ["-p", parameter]
        return RobotInterfaceNode(context=context, cli_args=arguments)

    try:
        built = node(
            f"template_udp.port:={emulator.port}",
            "template_udp.state_timeout:=0.5",
            "simulator.dt:=0.002",  # another backend's section: not read
        )
        try:
            assert isinstance(built.backend, TemplateDriver)
            assert built.backend.settings == TemplateDriverSettings(
                port=emulator.port, state_timeout=0.5
            )
        finally:
            built.stop()
            built.destroy_node()
        with pytest.raises(ConfigError) as error:
            node("template_udp.prt:=1")
        assert error.value.key == "template_udp.prt"
    finally:
        rclpy.shutdown(context=context)
    emulator.stop()
