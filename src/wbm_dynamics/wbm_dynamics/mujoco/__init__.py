"""MuJoCo as a second robot side: the same robot, built from the same URDF and robot config.

- :mod:`.settings`: time step, integrator and MuJoCo's soft contact constants (documented);
- :mod:`.model_builder`: the MuJoCo model (URDF through MuJoCo's compiler, completed from the
  robot config: free joint, locked joints, limits, friction, soles, sensors, servos);
- :mod:`.conversions`: MuJoCo's qpos/qvel to and from wbm's (Pinocchio's) q/v;
- :mod:`.engine`: :class:`MujocoEngine`, our simulator's core API on MuJoCo;
- :mod:`.benchmark`: real-time factors of MuJoCo and of our simulator on iCub standing.

Pure cores: no ROS imports here. The package imports ``mujoco`` itself only when one of the
MuJoCo classes is first used (about 0.5 s of CPU a process on our machines): a robot-interface
node hosting another backend, which still reads the settings class, does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wbm_dynamics.mujoco.settings import MujocoSettings

if TYPE_CHECKING:
    from wbm_dynamics.mujoco.conversions import StateMap
    from wbm_dynamics.mujoco.engine import MujocoEngine
    from wbm_dynamics.mujoco.model_builder import MujocoRobotModel, build_mujoco_robot


def __getattr__(name: str) -> Any:
    """The MuJoCo classes, imported on first use (PEP 562)."""
    if name == "MujocoEngine":
        from wbm_dynamics.mujoco.engine import MujocoEngine

        return MujocoEngine
    if name == "StateMap":
        from wbm_dynamics.mujoco.conversions import StateMap

        return StateMap
    if name in ("MujocoRobotModel", "build_mujoco_robot"):
        from wbm_dynamics.mujoco import model_builder

        return getattr(model_builder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MujocoEngine",
    "MujocoRobotModel",
    "MujocoSettings",
    "StateMap",
    "build_mujoco_robot",
]
