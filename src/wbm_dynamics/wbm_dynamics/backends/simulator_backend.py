"""Our simulator (:mod:`wbm_dynamics.simulator`) as a robot backend.

Its settings are the ``simulator:`` section (:class:`~wbm_dynamics.settings.SimulatorSettings`).
"""

from __future__ import annotations

from typing import ClassVar

from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.engine_backend import EngineBackend
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator


class SimulatorBackend(EngineBackend):
    """The engine adapter around a :class:`~wbm_dynamics.simulator.Simulator`."""

    settings_class: ClassVar[type[SimulatorSettings]] = SimulatorSettings

    @classmethod
    def build_engine(cls, model: WholeBodyModel, settings: SimulatorSettings) -> Simulator:
        """Our simulator of ``model``."""
        return Simulator(model, settings)


__all__ = ["SimulatorBackend"]
