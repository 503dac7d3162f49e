"""Robot backends: what the robot-interface node hosts (this simulator, MuJoCo, hardware).

:class:`RobotBackend` is the interface they share; :class:`EngineBackend` adapts any engine
(:class:`~wbm_dynamics.engine.Engine`) to it; :func:`create_backend` builds one by name: a
built-in one of :data:`BACKENDS` or a driver registered in the ``wbm.robot_backends``
entry-point group (docs/hardware_driver.md), with its own settings class.
"""

from wbm_dynamics.backends.backend import BackendDescription, BaseState, NoSettings, RobotBackend
from wbm_dynamics.backends.engine_backend import EngineBackend
from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.mujoco.backend import MujocoBackend

BACKENDS = {"simulator": SimulatorBackend, "mujoco": MujocoBackend}

from wbm_dynamics.backends.plugins import (  # noqa: E402  (plugins reads BACKENDS lazily)
    available_backends,
    create_backend,
    load_backend,
)

__all__ = [
    "BACKENDS",
    "BackendDescription",
    "BaseState",
    "EngineBackend",
    "MujocoBackend",
    "NoSettings",
    "RobotBackend",
    "SimulatorBackend",
    "available_backends",
    "create_backend",
    "load_backend",
]
