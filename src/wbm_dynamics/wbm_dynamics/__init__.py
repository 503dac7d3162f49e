"""wbm_dynamics: how the robot moves when simulated.

Holds the engines (our simulator: contact models, integrators, actuators, sensors; MuJoCo), the
engine protocol they share, the robot backends (one adapter from any engine, hardware drivers),
the pacing loop and the robot-interface node. It imports wbm_description, never wbm_control.

Start with :class:`wbm_dynamics.engine.Engine`, :class:`wbm_dynamics.simulator.Simulator` and
:class:`wbm_dynamics.settings.SimulatorSettings`; the node is ``wbm_dynamics.ros``.
"""

from wbm_dynamics.engine import Engine, GroundTruth
from wbm_dynamics.exceptions import BackendError, SimulationDiverged
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

__all__ = [
    "BackendError",
    "Engine",
    "GroundTruth",
    "SimulationDiverged",
    "Simulator",
    "SimulatorSettings",
]
