r"""Walking: footsteps, a CoM/DCM pattern generator, swing feet, a state machine, a stabilizer.

Pure cores (numpy, Pinocchio, proxsuite; no ROS). How the parts connect::

    commands: cmd_vel (vx, vy, wz) | footstep plan | goal pose | stop
        |
        v
    FootstepPlanner ------------- footsteps obeying the step limits (length, width, yaw,
        |                         foot spacing, no crossing); explicit plans checked
        v
    WalkingStateMachine --------- STANDING / DOUBLE_SUPPORT / SINGLE_SUPPORT / STOPPING,
        |        \                switched by the clock and the measured contacts (F/T or an
        |         \               estimator): early and late touch-down, no release unloaded
        |          +-- contact commands: ReleaseContact at lift-off, ActivateContact at
        |          |   touch-down                          -> the controller's contact set
        |          +-- SwingFootTrajectory (quintic, clearance apex)
        |                                                  -> the swing foot's frame task
        v
    ContactSchedule ------------- support phases ahead, their polygons and ZMP references
        |
        v
    LinearMpcPatternGenerator --- LIP linear MPC on proxsuite: ZMP knots kept in the
        |                         support polygons (shrunk by a margin) at all times; CoM,
        |                         ZMP, DCM in closed form          -> the CoM task
        v
    DcmZmpStabilizer ------------ z = z_ref + k (xi - xi_ref), clamped into the polygon
                                                          -> CoM acceleration / ZMP command

:class:`WalkingController` runs them at each control tick:
``update(t, measured_com, measured_com_velocity, contact_state) -> WalkingReferences``.
Settings are a frozen :class:`WalkingSettings`; the robot-dependent ones (foot spacing, CoM
height) come from the whole-body model through :class:`WalkingGeometry`.

Frames: the world frame is z up with the ground at z = 0; footsteps are sole-frame poses on it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names, for type checkers and editors
    from wbm_control.walking.contact_schedule import ContactSchedule, SupportPhase, build_schedule
    from wbm_control.walking.contact_state import ContactState, FootContactReading
    from wbm_control.walking.exceptions import FootstepPlanRejected, GoalRejected, WalkingError
    from wbm_control.walking.feet import Feet, WalkingGeometry
    from wbm_control.walking.footstep_planner import FootstepPlanner
    from wbm_control.walking.footsteps import Footstep, Side, integrate_twist, other_side
    from wbm_control.walking.pattern_generator import (
        ComPlan,
        LinearMpcPatternGenerator,
        PatternSample,
    )
    from wbm_control.walking.references import WalkingReferences
    from wbm_control.walking.settings import WalkingSettings
    from wbm_control.walking.stabilizer import DcmZmpStabilizer, StabilizerOutput
    from wbm_control.walking.state_machine import (
        ActivateContact,
        ContactCommand,
        ReleaseContact,
        WalkingState,
        WalkingStateMachine,
    )
    from wbm_control.walking.step_limits import StepLimits
    from wbm_control.walking.swing_foot import SwingFootSample, SwingFootTrajectory
    from wbm_control.walking.walking_controller import WalkingController

_EXPORTS = {
    "ActivateContact": "state_machine",
    "ComPlan": "pattern_generator",
    "ContactCommand": "state_machine",
    "ContactSchedule": "contact_schedule",
    "ContactState": "contact_state",
    "DcmZmpStabilizer": "stabilizer",
    "Feet": "feet",
    "FootContactReading": "contact_state",
    "Footstep": "footsteps",
    "FootstepPlanRejected": "exceptions",
    "FootstepPlanner": "footstep_planner",
    "GoalRejected": "exceptions",
    "LinearMpcPatternGenerator": "pattern_generator",
    "PatternSample": "pattern_generator",
    "ReleaseContact": "state_machine",
    "Side": "footsteps",
    "StabilizerOutput": "stabilizer",
    "StepLimits": "step_limits",
    "SupportPhase": "contact_schedule",
    "SwingFootSample": "swing_foot",
    "SwingFootTrajectory": "swing_foot",
    "WalkingController": "walking_controller",
    "WalkingError": "exceptions",
    "WalkingGeometry": "feet",
    "WalkingReferences": "references",
    "WalkingSettings": "settings",
    "WalkingState": "state_machine",
    "WalkingStateMachine": "state_machine",
    "build_schedule": "contact_schedule",
    "integrate_twist": "footsteps",
    "other_side": "footsteps",
}
"""Name to the submodule that defines it: imported on first use (PEP 562), so that importing
one submodule (e.g. ``wbm_control.walking.settings`` for a launch's pre-flight checks) does
not import the pattern generator, its QP solver and the compiled kernels."""


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "ActivateContact",
    "ComPlan",
    "ContactCommand",
    "ContactSchedule",
    "ContactState",
    "DcmZmpStabilizer",
    "Feet",
    "FootContactReading",
    "Footstep",
    "FootstepPlanRejected",
    "FootstepPlanner",
    "GoalRejected",
    "LinearMpcPatternGenerator",
    "PatternSample",
    "ReleaseContact",
    "Side",
    "StabilizerOutput",
    "StepLimits",
    "SupportPhase",
    "SwingFootSample",
    "SwingFootTrajectory",
    "WalkingController",
    "WalkingError",
    "WalkingGeometry",
    "WalkingReferences",
    "WalkingSettings",
    "WalkingState",
    "WalkingStateMachine",
    "build_schedule",
    "integrate_twist",
    "other_side",
]
