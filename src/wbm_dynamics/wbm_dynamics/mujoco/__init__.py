"""MuJoCo as a second robot side: the same robot, built from the same URDF and robot config.

- :mod:`.settings`: time step, integrator and MuJoCo's soft contact constants (documented);
- :mod:`.model_builder`: the MuJoCo model (URDF through MuJoCo's compiler, completed from the
  robot config: free joint, locked joints, limits, friction, soles, sensors, servos);
- :mod:`.conversions`: MuJoCo's qpos/qvel to and from wbm's (Pinocchio's) q/v;
- :mod:`.engine`: :class:`MujocoEngine`, our simulator's core API on MuJoCo;
- :mod:`.benchmark`: real-time factors of MuJoCo and of our simulator on iCub standing.

Pure cores: no ROS imports here.
"""

from wbm_dynamics.mujoco.conversions import StateMap
from wbm_dynamics.mujoco.engine import MujocoEngine
from wbm_dynamics.mujoco.model_builder import MujocoRobotModel, build_mujoco_robot
from wbm_dynamics.mujoco.settings import MujocoSettings

__all__ = [
    "MujocoEngine",
    "MujocoRobotModel",
    "MujocoSettings",
    "StateMap",
    "build_mujoco_robot",
]
