"""Comparing the torque mode's fused QP build with the build of its task and contact objects.

The torque step builds its QP straight from the kinematics (:meth:`TorqueMode.build_fused`,
:mod:`wbm_control.torque_qp`); the tests that compared each step's
:func:`~wbm_control.whole_body_qp.build_whole_body_qp` call with a reference now wrap the fused
build and rebuild, beside it, the arguments that call had: the acceleration tasks
(:meth:`TorqueMode.acceleration_tasks`) and the held soles' constraints
(:meth:`~wbm_control.tasks.ContactTask.compute_constraint`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from wbm_control.torque_mode import TorqueMode


def objects_build_arguments(mode, kinematics, balance, tasks, held, t, settings):
    """(args, kwargs) of the build_whole_body_qp call the step made before the fused build.

    The tasks' errors go to a scratch status (the step's are the fused build's).
    """
    scratch = SimpleNamespace(task_errors={})
    acceleration_tasks = mode.acceleration_tasks(kinematics, balance, tasks, held, t, scratch)
    constraints = [tasks.contact.compute_constraint(kinematics, c) for c in held]
    args = (
        kinematics.mass_matrix,
        kinematics.bias_forces,
        constraints,
        acceleration_tasks,
        mode.model.torque_limits,
    )
    kwargs = {
        "wrench_weight": settings.wrench_weight,
        "acceleration_regularization": settings.acceleration_regularization,
        "min_normal_force": settings.min_normal_force,
    }
    return args, kwargs, scratch.task_errors


def patch_fused_build(monkeypatch, compare: Callable) -> None:
    """Call ``compare(qp, args, kwargs, task_errors, status)`` after each fused build.

    ``qp`` is the fused build's (the mode's workspace), ``args``/``kwargs`` those of
    :func:`objects_build_arguments`, ``task_errors`` the objects' errors, ``status`` the
    step's.
    """
    fused = TorqueMode.build_fused

    def compared(mode, kinematics, balance, tasks, held, t, settings, status):
        qp = fused(mode, kinematics, balance, tasks, held, t, settings, status)
        args, kwargs, errors = objects_build_arguments(
            mode, kinematics, balance, tasks, held, t, settings
        )
        compare(qp, args, kwargs, errors, status)
        return qp

    monkeypatch.setattr(TorqueMode, "build_fused", compared)
