"""wbm_dynamics: how the robot moves when simulated.

Holds the simulator core (contact models, integrators, actuators, sensors), the robot backends and
the robot-interface node. It imports wbm_description, never wbm_control.

Start with :class:`wbm_dynamics.simulator.Simulator` and
:class:`wbm_dynamics.settings.SimulatorSettings`; the node is ``wbm_dynamics.ros``.
"""

from wbm_dynamics.exceptions import BackendError, SimulationDiverged
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import GroundTruth, Simulator

__all__ = ["BackendError", "GroundTruth", "SimulationDiverged", "Simulator", "SimulatorSettings"]
