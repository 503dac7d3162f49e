"""MuJoCo as a robot backend.

Its settings are the ``mujoco:`` section (:class:`~wbm_dynamics.mujoco.settings.MujocoSettings`):
time step, integrator and MuJoCo's own soft contact constants. MuJoCo simulates the ground plane
only (no environment boxes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.engine_backend import EngineBackend
from wbm_dynamics.mujoco.settings import MujocoSettings

if TYPE_CHECKING:
    from wbm_dynamics.mujoco.engine import MujocoEngine


class MujocoBackend(EngineBackend):
    """The engine adapter around a :class:`~wbm_dynamics.mujoco.engine.MujocoEngine`.

    Raises:
        ConfigError: A model without robot config, or a robot MuJoCo cannot represent.
    """

    settings_class: ClassVar[type[MujocoSettings]] = MujocoSettings

    @classmethod
    def build_engine(cls, model: WholeBodyModel, settings: MujocoSettings) -> MujocoEngine:
        """The MuJoCo engine of ``model`` (``mujoco`` is imported here, on first use)."""
        from wbm_dynamics.mujoco.engine import MujocoEngine

        return MujocoEngine(model, settings)


__all__ = ["MujocoBackend"]
