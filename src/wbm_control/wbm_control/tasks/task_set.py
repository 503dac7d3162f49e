"""The tasks of the controller, built from its settings and the robot config.

Every configured frame task, plus one per sole that no configured task covers (its swing task
while released, with the ``contact:`` gains), the CoM, the base orientation, the posture, and the
held soles' contact task. Both modes use the same objects: mode "torque" turns them into QP
tasks and constraints, mode "ik" into targets of the differential IK.
"""

from __future__ import annotations

from dataclasses import dataclass

from wbm_control.controller_settings import ControllerSettings, FrameTaskSettings
from wbm_control.tasks.base_orientation_task import BaseOrientationTask
from wbm_control.tasks.com_task import ComTask
from wbm_control.tasks.contact_task import ContactTask
from wbm_control.tasks.frame_task import FrameTask
from wbm_control.tasks.posture_task import PostureTask
from wbm_description.whole_body_model import WholeBodyModel

#: Reach [m] of the frame task added for a sole that no configured task covers.
SOLE_TASK_REACH = 1.0


@dataclass
class TaskSet:
    """The controller's tasks.

    Attributes:
        com: The CoM task (with the balance feedback).
        base_orientation: The base orientation task.
        posture: The posture task.
        frames: Task name to frame task, the configured ones first (in the settings' order).
        contact: The held soles' task.
        task_of_sole: Sole name to the name of the frame task of its frame.
    """

    com: ComTask
    base_orientation: BaseOrientationTask
    posture: PostureTask
    frames: dict[str, FrameTask]
    contact: ContactTask
    task_of_sole: dict[str, str]

    @classmethod
    def from_settings(cls, model: WholeBodyModel, settings: ControllerSettings) -> TaskSet:
        """The tasks of a controller of ``model`` (floating base, with soles).

        Raises:
            NameNotFound: A frame the model does not have.
        """
        robot = model.config
        configured = dict(settings.frame_tasks)
        for sole in robot.soles:
            if not any(task.frame == sole.frame for task in configured.values()):
                c = settings.contact
                configured[sole.name] = FrameTaskSettings(
                    weight=c.weight,
                    ik_gain=c.ik_gain,
                    kp=c.kp,
                    kd=c.kd,
                    frame=sole.frame,
                    position_weight=1.0,
                    orientation_weight=1.0,
                    max_reach=SOLE_TASK_REACH,
                )
        frames = {
            name: FrameTask(name, model.frame_id(task.frame), task)
            for name, task in configured.items()
        }
        task_of_sole = {
            sole.name: next(n for n, t in frames.items() if t.frame == sole.frame)
            for sole in robot.soles
        }
        base = settings.base_orientation
        rotation_reference = model.frame_placement(
            model.initial_configuration(), base.frame
        ).rotation.copy()
        return cls(
            com=ComTask(settings.com, robot.gravity),
            base_orientation=BaseOrientationTask(
                model.frame_id(base.frame), base, rotation_reference
            ),
            posture=PostureTask(model.initial_posture.copy(), model.nv, settings.posture),
            frames=frames,
            contact=ContactTask(
                {sole.name: model.frame_id(sole.frame) for sole in robot.soles},
                settings.contact,
                friction_coefficient=settings.friction_coefficient,
                cop_margin=settings.cop_margin,
            ),
            task_of_sole=task_of_sole,
        )

    @property
    def frame_ids(self) -> frozenset[int]:
        """Every frame the tasks query (the soles' frames are frame tasks' frames).

        Kept while the frame tasks (their dict and count) and the base orientation task are
        the same objects (a step reads it; it is not rebuilt each time).
        """
        key = (id(self.frames), len(self.frames), id(self.base_orientation))
        cached = self.__dict__.get("_frame_ids")
        if cached is not None and cached[0] == key:
            return cached[1]
        ids = frozenset(
            {task.frame_id for task in self.frames.values()} | {self.base_orientation.frame_id}
        )
        self.__dict__["_frame_ids"] = (key, ids)
        return ids

    def held_task_names(self, held_soles: list[str]) -> set[str]:
        """Names of the frame tasks of held soles (constraints instead of tasks)."""
        return {self.task_of_sole[sole] for sole in held_soles}

    def reset(self) -> None:
        """Forget every reference (until the controller starts again)."""
        self.com.reset()
        for task in self.frames.values():
            task.reset()
