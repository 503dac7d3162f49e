"""The controller's tasks, one class per file with the same verbs (pink's ``tasks/``).

Each task gives its error and Jacobian at a :class:`~wbm_control.robot_kinematics.
RobotKinematics` (``compute_error``, ``compute_jacobian``), its desired acceleration as a QP task
of the torque mode (``compute_acceleration_task``) and its form in the IK (``ik_spec``);
tasks with a moving reference own it (``start``, ``set_target``, ``reference``).
"""

from wbm_control.tasks.base_orientation_task import BaseOrientationTask
from wbm_control.tasks.com_task import Balance, ComTask
from wbm_control.tasks.contact_task import ContactTask
from wbm_control.tasks.frame_task import FrameTask, pose_error
from wbm_control.tasks.posture_task import PostureTask
from wbm_control.tasks.task_set import TaskSet

__all__ = [
    "Balance",
    "BaseOrientationTask",
    "ComTask",
    "ContactTask",
    "FrameTask",
    "PostureTask",
    "TaskSet",
    "pose_error",
]
