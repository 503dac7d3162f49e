"""Helpers of the walking tests: iCub-sized feet, independent step checks, an ideal LIP."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from wbm_control.walking import Feet, Footstep
from wbm_description.robot_config import SoleContact

SPACING = 0.136
"""iCub's lateral sole spacing, rounded (WalkingGeometry measures 0.1362 m on the model) [m]."""


def feet_of_icub_size() -> Feet:
    return Feet(
        SoleContact("left_foot", "l_sole", 0.14, 0.07, (0.02, 0.0)),
        SoleContact("right_foot", "r_sole", 0.14, 0.07, (0.02, 0.0)),
    )


def standing_feet(x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> tuple[Footstep, Footstep]:
    """Left and right footsteps side by side around a walking frame (x, y, yaw)."""
    c, s = math.cos(yaw), math.sin(yaw)
    half = 0.5 * SPACING
    return (
        Footstep("left", x - s * half, y + c * half, yaw),
        Footstep("right", x + s * half, y - c * half, yaw),
    )


def relative_with_pinocchio(step: Footstep, stance: Footstep) -> tuple[float, float, float]:
    """(dx, dy, dyaw) of a step in the stance sole frame, computed with SE3 (independent)."""
    relative = stance.placement().inverse() * step.placement()
    yaw = pin.rpy.matrixToRpy(relative.rotation)[2]
    return float(relative.translation[0]), float(relative.translation[1]), float(yaw)


def assert_step_within_limits(step: Footstep, stance: Footstep, settings, tolerance=1e-9):
    """The raw limits of the settings, checked on the SE3 relative pose."""
    dx, dy, dyaw = relative_with_pinocchio(step, stance)
    lateral = dy if step.side == "left" else -dy
    assert step.side != stance.side, (step, stance)
    assert (
        -settings.max_step_length_backward - tolerance
        <= dx
        <= settings.max_step_length + tolerance
    ), (step, stance, dx)
    assert settings.min_foot_spacing - tolerance <= lateral, (step, stance, lateral)
    assert lateral <= settings.nominal_foot_spacing + settings.max_step_width + tolerance, (
        step,
        stance,
        lateral,
    )
    assert abs(dyaw) <= settings.max_step_yaw + tolerance, (step, stance, dyaw)


def rectangles_intersect_by_sampling(feet: Feet, a: Footstep, b: Footstep, n: int = 15) -> bool:
    """Whether a grid of points of one sole rectangle falls inside the other (slow reference).

    Inside a CCW convex polygon: every edge sees the point on its left (cross product >= 0).
    """
    u, v = np.meshgrid(np.linspace(0.0, 1.0, n), np.linspace(0.0, 1.0, n))
    u, v = u.ravel()[:, None], v.ravel()[:, None]
    for first, second in ((a, b), (b, a)):
        corners = feet.rectangle(first)
        points = corners[2] + u * (corners[3] - corners[2]) + v * (corners[1] - corners[2])
        hull = feet.rectangle(second)
        inside = np.ones(len(points), dtype=bool)
        for i in range(4):
            edge = hull[(i + 1) % 4] - hull[i]
            offset = points - hull[i]
            inside &= edge[0] * offset[:, 1] - edge[1] * offset[:, 0] >= 0.0
        if inside.any():
            return True
    return False


def forward_walk_schedule(settings, feet, *, velocity=0.3, steps=12, yaw_rate=0.0):
    """A standing start, ``steps`` steps at a velocity, a closing step: (schedule, footsteps)."""
    from wbm_control.walking import FootstepPlanner, build_schedule

    planner = FootstepPlanner(settings, feet)
    left, right = standing_feet()
    plan = planner.plan_from_velocity(
        (velocity, 0.0, yaw_rate), stance=right, swing_foot=left, n_steps=steps
    )
    plan += planner.closing_steps(stance=plan[-1], swing_foot=plan[-2])
    schedule = build_schedule(
        settings,
        feet,
        kind="double_support",
        start=0.0,
        end=settings.initial_double_support_duration,
        left=left,
        right=right,
        steps=plan,
    )
    return schedule, plan


def run_pattern_generator(generator, schedule, *, until, period=0.01, com=None):
    """Re-plan every ``period`` from the plan's own state (an ideal robot); the plans in order."""
    phase = schedule.phases[0]
    start = 0.5 * (phase.zmp_start + phase.zmp_start) if com is None else np.asarray(com)
    plan = generator.replan(0.0, start, np.zeros(2), schedule)
    plans = [plan]
    t = period
    while t < until:
        sample = plan.sample(t)
        plan = generator.replan(t, sample.com, sample.com_velocity, schedule)
        plans.append(plan)
        t += period
    return plans


class IdealLip:
    """An ideal robot for walking tests: a LIP whose ZMP is exactly the one commanded, and feet
    whose contact forces follow from the state machine's support and the swing references.

    Args:
        controller: The WalkingController under test.
        mass: Robot mass [kg] (forces only).
        ground: (x, y) -> ground height under a sole [m] (uneven ground makes early and late
            touch-downs).
    """

    def __init__(self, controller, *, mass=33.0, ground=None):
        self.controller = controller
        s = controller.settings
        feet = controller.geometry.feet
        sm = controller.state_machine
        middle = 0.5 * (feet.center(sm.foot("left")) + feet.center(sm.foot("right")))
        self.com = np.array([middle[0], middle[1], s.com_height])
        self.com_velocity = np.zeros(3)
        self.weight = mass * s.gravity
        self.ground = ground or (lambda x, y: 0.0)
        self.zmp = self.com[:2].copy()
        self.t = 0.0
        self.log = []

    def contact_state(self, references):
        from wbm_control.walking import ContactState

        if references is None:  # standing, before the first tick
            return ContactState.from_forces(0.5 * self.weight, 0.5 * self.weight)
        forces = {"left": 0.0, "right": 0.0}
        support = references.support
        if len(support) == 2:
            feet = self.controller.geometry.feet
            left = feet.center(Footstep.from_placement("left", support["left"]))
            right = feet.center(Footstep.from_placement("right", support["right"]))
            axis = left - right
            share = float(np.clip((self.zmp - right) @ axis / (axis @ axis), 0.0, 1.0))
            forces = {"left": share * self.weight, "right": (1.0 - share) * self.weight}
        elif len(support) == 1:
            (side,) = support
            forces[side] = self.weight
        for side, swing in references.swing.items():
            x, y, z = swing.pose.translation
            if z <= self.ground(x, y) + 1e-9:
                stance = "right" if side == "left" else "left"
                forces[side], forces[stance] = 100.0, self.weight - 100.0
        return ContactState.from_forces(forces["left"], forces["right"])

    def run(self, until, *, on_tick=None, sensing=True, stop=None):
        """Tick at the control period until ``until`` [s]; the references of these ticks (all
        ticks so far are in ``log``). ``stop(references)`` true ends the run early."""
        from wbm_control.walking.lip import sample_segment

        s = self.controller.settings
        references = self.log[-1] if self.log else None
        first = len(self.log)
        while self.t < until - 1e-12:
            contact = self.contact_state(references) if sensing else None
            references = self.controller.update(self.t, self.com, self.com_velocity, contact)
            if on_tick is not None:
                on_tick(self.t, references)
            self.zmp = references.zmp_command[:2]
            c, cd, _, _ = sample_segment(
                s.omega,
                self.com[:2],
                self.com_velocity[:2],
                self.zmp,
                self.zmp,
                s.time_step,
                s.time_step,
            )
            self.com[:2], self.com_velocity[:2] = c, cd
            self.log.append(references)
            self.t = round(self.t + s.time_step, 9)
            if stop is not None and stop(references):
                break
        return self.log[first:]
