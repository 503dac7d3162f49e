"""Robot backends: what the robot-interface node hosts (this simulator, MuJoCo, hardware).

:class:`RobotBackend` is the small interface they share; :func:`create_backend` builds one by
name: a built-in one of :data:`BACKENDS` or a driver registered in the ``wbm.robot_backends``
entry-point group (docs/hardware_driver.md).
"""

from wbm_dynamics.backends.backend import RobotBackend
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
    "MujocoBackend",
    "RobotBackend",
    "SimulatorBackend",
    "available_backends",
    "create_backend",
    "load_backend",
]
