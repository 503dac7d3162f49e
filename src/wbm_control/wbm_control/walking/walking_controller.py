"""The walking facade a whole-body controller calls: commands in, references out.

:class:`WalkingController` owns one of each walking part and runs them in order at each control
tick (see :mod:`wbm_control.walking`)::

    update(t, measured CoM, CoM velocity, contacts)
      1. a pending footstep plan (explicit or to a goal) is handed to the state machine;
      2. the state machine switches phases (clock and contacts) -> contact commands;
      3. in velocity mode, the steps after the committed swing are re-planned from the command
         when it changed or a phase switched (so a new command shapes the next step);
      4. the pattern generator re-plans on the new schedule: at every switch and every
         ``replan_period``, from the measured CoM state at switches (and always if
         ``replan_from_measured_state``), else from its own plan;
      5. the plan is sampled at t; the DCM stabilizer turns the DCM error into a ZMP command;
      6. during a swing the touch-down is adjusted to the DCM: its place (step adjustment), or
         with ``step_timing_weight`` > 0 its place and time (step timing); with step timing a
         double support between steps whose measured DCM left the hull of the soles ends
         ``min_double_support_duration`` after its start.

Commands: :meth:`~WalkingController.set_velocity_command` (clamped, NaN rejected),
:meth:`~WalkingController.set_footstep_plan` (checked, rejected whole),
:meth:`~WalkingController.set_goal`, :meth:`~WalkingController.stop`. A rejected command changes
nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from wbm_control.exceptions import NoSolutionFound
from wbm_control.walking.contact_state import ContactState
from wbm_control.walking.feet import WalkingGeometry
from wbm_control.walking.footstep_planner import FootstepPlanner
from wbm_control.walking.footsteps import Footstep, other_side, side_sign
from wbm_control.walking.pattern_generator import ComPlan, LinearMpcPatternGenerator
from wbm_control.walking.references import WalkingReferences
from wbm_control.walking.settings import WalkingSettings
from wbm_control.walking.stabilizer import DcmZmpStabilizer
from wbm_control.walking.state_machine import (
    ReleaseContact,
    WalkingState,
    WalkingStateMachine,
)
from wbm_control.walking.step_adjustment import StepAdjustment
from wbm_control.walking.step_limits import StepLimits
from wbm_control.walking.step_timing import StepTiming, schedule_dcm
from wbm_description.exceptions import InputError
from wbm_description.support_geometry import polygon_margin
from wbm_description.whole_body_model import WholeBodyModel


class WalkingController:
    """Footstep planner, pattern generator, state machine and stabilizer behind one API.

    Args:
        geometry: The robot's feet, nominal spacing, CoM height and initial footsteps.
        settings: Walking settings; robot-dependent fields left to None are filled from the
            geometry.
        time: Start time [s].
        left: Where the left foot stands (default: the geometry's).
        right: Where the right foot stands (default: the geometry's).
    """

    def __init__(
        self,
        geometry: WalkingGeometry,
        settings: WalkingSettings | None = None,
        *,
        time: float = 0.0,
        left: Footstep | None = None,
        right: Footstep | None = None,
    ):
        settings = (settings or WalkingSettings()).with_robot(
            nominal_foot_spacing=geometry.nominal_foot_spacing, com_height=geometry.com_height
        )
        self.settings = settings
        self.geometry = geometry
        self.planner = FootstepPlanner(settings, geometry.feet)
        self.pattern_generator = LinearMpcPatternGenerator(settings, geometry.feet)
        self.state_machine = WalkingStateMachine(
            settings,
            geometry.feet,
            left=geometry.left if left is None else left,
            right=geometry.right if right is None else right,
            time=time,
        )
        self.stabilizer = DcmZmpStabilizer(gain=settings.stabilizer_gain, omega=settings.omega)
        self.step_adjustment = StepAdjustment(
            StepLimits.from_settings(settings),
            geometry.feet,
            settings.omega,
            gain=settings.step_adjustment_gain,
            dead_band=settings.step_adjustment_dead_band,
        )
        self.step_timing = StepTiming(
            StepLimits.from_settings(settings),
            geometry.feet,
            settings.omega,
            timing_weight=max(settings.step_timing_weight, 1e-12),
            offset_weight=settings.dcm_offset_weight,
        )
        self._nominal_swing: tuple[float, Footstep, np.ndarray | None] | None = None
        self._timing_engaged: float | None = None  # lift-off time of the swing it took over
        self.command = (0.0, 0.0, 0.0)
        self.mode = "velocity"
        self._pending: list[Footstep] | None = None
        self._velocity_dirty = False
        self._last_replan = -math.inf
        self._last_schedule = None
        self.failed_replans = 0
        """Periodic re-plans the solver did not finish, the previous plan kept (see update)."""
        self._support_cache: tuple[tuple[Footstep, ...], np.ndarray] | None = None
        self._measured: dict[str, Footstep] = {}

    @classmethod
    def from_model(
        cls,
        model: WholeBodyModel,
        settings: WalkingSettings | None = None,
        *,
        q: np.ndarray | None = None,
        time: float = 0.0,
    ) -> WalkingController:
        """Walking for a robot model, its feet where they are in configuration q."""
        return cls(WalkingGeometry.from_model(model, q), settings, time=time)

    # ------------------------------------------------------------------ commands

    def set_velocity_command(
        self, vx: float, vy: float, wz: float
    ) -> tuple[tuple[float, float, float], bool]:
        """Walk at a velocity in the walking frame (zero: stop with the feet side by side).

        Args:
            vx: Forward velocity [m/s].
            vy: Leftward velocity [m/s].
            wz: Yaw rate [rad/s].

        Returns:
            (the command clamped to the limits, whether it was clamped).

        Raises:
            InputError: A value is not finite (nothing changes).
        """
        command, clamped = self.planner.clamp_command(vx, vy, wz)
        if self.mode != "velocity" or command != self.command:
            self._velocity_dirty = True
        self.mode, self.command = "velocity", command
        self._pending = None
        return command, clamped

    def stop(self) -> None:
        """Stop: zero velocity; a closing step brings the feet side by side if needed."""
        self.set_velocity_command(0.0, 0.0, 0.0)
        self._velocity_dirty = True

    def correct_landing(self, side: str, measured: Footstep) -> None:
        """A foot that touched down is held at ``measured`` (the estimate's sole pose).

        The state machine keeps the swing reference as where the foot landed (the walk goes on
        from the plan: re-planning every step from measured poses feeds the swing's tracking
        error and the estimate's yaw noise into the path, measured: 0.248 m/s instead of
        0.257 m/s and a fall on MuJoCo). The closing steps of a stop are placed from where the
        feet are held (an early F/T touch-down lands ~1 cm short of the reference), so that the
        feet end side by side in fact; the measurement of a foot is dropped at its lift-off.

        Raises:
            InputError: The footstep is of the other side, or not finite.
        """
        if measured.side != side or not measured.is_finite():
            raise InputError("measured", f"a finite {side} footstep", measured)
        self._measured[side] = measured
        if self.mode == "velocity" and max(abs(v) for v in self.command) <= 1e-9:
            self._velocity_dirty = True

    def _held(self, side: str) -> Footstep:
        """Where a foot is held if measured since its touch-down, else where it will be."""
        return self._measured.get(side) or self.state_machine.committed_foot(side)

    def set_footstep_plan(self, steps: Sequence[Footstep]) -> None:
        """Walk an explicit footstep plan (after the swing in progress).

        Raises:
            FootstepPlanRejected: A step is not finite, on the wrong foot, out of reach or
                crossing; nothing changes.
        """
        steps = list(steps)
        sm = self.state_machine
        self.planner.validate_plan(
            steps,
            left=sm.committed_foot("left"),
            right=sm.committed_foot("right"),
            next_swing_side=sm.next_swing_side,
        )
        self.mode, self.command, self._pending = "plan", (0.0, 0.0, 0.0), steps

    def set_goal(self, x: float, y: float, yaw: float) -> list[Footstep]:
        """Walk to a pose of the walking frame (mid-feet) in the world; returns the plan.

        Raises:
            GoalRejected: The goal is not finite or not reachable; nothing changes.
        """
        sm = self.state_machine
        steps = self.planner.plan_to_goal(
            (x, y, yaw),
            left=sm.committed_foot("left"),
            right=sm.committed_foot("right"),
            next_swing_side=sm.next_swing_side,
        )
        self.mode, self.command, self._pending = "plan", (0.0, 0.0, 0.0), steps
        return steps

    # ------------------------------------------------------------------ queries

    @property
    def state(self) -> WalkingState:
        """The state machine's state."""
        return self.state_machine.state

    @property
    def plan(self) -> ComPlan | None:
        """The latest CoM/ZMP plan."""
        return self.pattern_generator.plan

    # ------------------------------------------------------------------ tick

    def update(
        self,
        t: float,
        measured_com: np.ndarray,
        measured_com_velocity: np.ndarray,
        contact_state: ContactState | None = None,
    ) -> WalkingReferences:
        """Advance walking to time t and return the references for the controller.

        Args:
            t: Current time [s], non-decreasing.
            measured_com: Measured or estimated CoM position in the world [m].
            measured_com_velocity: Its velocity [m/s].
            contact_state: Measured foot contacts, or None to follow the clock.

        Raises:
            InputError: Non-finite time or CoM state.
            NoSolutionFound: The pattern generator's QP failed.
        """
        com = np.asarray(measured_com, dtype=float)
        com_velocity = np.asarray(measured_com_velocity, dtype=float)
        if not (
            math.isfinite(t) and np.all(np.isfinite(com)) and np.all(np.isfinite(com_velocity))
        ):
            raise InputError("t, measured_com, measured_com_velocity", "finite values", (t, com))
        sm = self.state_machine
        switched = False
        if self._pending is not None:
            sm.set_footsteps(self._pending, t)
            self._pending, switched = None, True
        commands = sm.update(t, contact_state)
        for command in commands:
            if isinstance(command, ReleaseContact):
                self._measured.pop(command.side, None)
        switched = switched or bool(commands)
        self._end_double_support_early(t, com + com_velocity / self.settings.omega)
        if self.mode == "velocity" and (self._velocity_dirty or switched):
            switched = self._replan_velocity(t) or switched
            self._velocity_dirty = False
        schedule = sm.schedule(t)
        s = self.settings
        plan = self.pattern_generator.plan
        due = t - self._last_replan >= s.replan_period - 1e-9
        if plan is None or switched or due or schedule is not self._last_schedule:
            from_measured = plan is None or switched or s.replan_from_measured_state
            if from_measured:
                start_com, start_velocity = com, com_velocity
            else:
                sample = plan.sample(t)
                start_com, start_velocity = sample.com, sample.com_velocity
            periodic = plan is not None and not switched and schedule is self._last_schedule
            try:
                plan = self.pattern_generator.replan(t, start_com, start_velocity, schedule)
            except NoSolutionFound:
                if not periodic:
                    raise
                # A periodic re-plan on the same contact schedule that the solver did not
                # finish: the previous plan still holds (as an MPC keeps its last solution);
                # the next period tries again.
                self.failed_replans += 1
            self._last_replan, self._last_schedule = t, schedule
        sample = plan.sample(t)
        phase = schedule.phase_at(t)
        polygon = self.pattern_generator.polygon(phase)[0]
        stabilized = self.stabilizer.update(
            zmp_ref=sample.zmp,
            dcm_ref=sample.dcm,
            com=com,
            com_velocity=com_velocity,
            support_polygon=polygon,
        )
        if self._adjust_step(t, stabilized.dcm_error, sample.dcm):
            # Re-planned from the plan's own state: the DCM error stays measured against the
            # plan of lift-off, which the adjustment compensates.
            schedule = sm.schedule(t)
            plan = self.pattern_generator.replan(t, sample.com, sample.com_velocity, schedule)
            self._last_replan, self._last_schedule = t, schedule
        swing = sm.swing_sample(t)
        support = sm.support()
        return WalkingReferences(
            time=t,
            state=sm.state,
            stance_side=sm.stance_side,
            com=sample.com,
            com_velocity=sample.com_velocity,
            com_acceleration=sample.com_acceleration,
            zmp=sample.zmp,
            dcm=sample.dcm,
            zmp_command=stabilized.zmp,
            com_acceleration_command=stabilized.com_acceleration,
            dcm_error=stabilized.dcm_error,
            swing={} if swing is None else {swing[0]: swing[1]},
            support={side: step.placement() for side, step in support.items()},
            support_polygon=self._support_polygon(tuple(support.values())),
            contact_commands=tuple(commands),
            footsteps=sm.footsteps,
        )

    def _end_double_support_early(self, t: float, dcm: np.ndarray) -> None:
        """Step timing: a double support between steps ends early if the DCM left the soles.

        Only out on the next swing foot's side (that foot can catch it; on the other side,
        lifting it would only speed the DCM away).
        """
        s, sm = self.settings, self.state_machine
        if (
            s.step_timing_weight <= 0.0
            or sm.state != WalkingState.DOUBLE_SUPPORT
            or not sm.footsteps
            or sm.phase_end <= sm.phase_start + s.min_double_support_duration
        ):
            return
        hull = self._support_polygon(tuple(sm.support().values()))
        if polygon_margin(dcm[:2], hull) >= 0.0:
            return
        swing = sm.next_swing_side
        stance = sm.foot(other_side(swing))
        c, si = math.cos(stance.yaw), math.sin(stance.yaw)
        offset = dcm[:2] - self.geometry.feet.center(stance)[:2]
        lateral = -si * offset[0] + c * offset[1]  # in the stance sole's frame
        if side_sign(swing) * lateral > 0.0:  # out on the swing foot's side: step there sooner
            sm.shorten_double_support(sm.phase_start + s.min_double_support_duration)

    def _adjust_step(self, t: float, dcm_error: np.ndarray, dcm_reference: np.ndarray) -> bool:
        """Step adjustment during a swing (see :mod:`~wbm_control.walking.step_adjustment`).

        The swing target planned at lift-off is moved by the grown DCM error, within the step
        limits; the swing is re-targeted when that moves it by more than 5 mm from its current
        target, not in the last ``step_adjustment_freeze`` of the swing. With step timing
        (``step_timing_weight`` > 0) the place and the time come from
        :class:`~wbm_control.walking.step_timing.StepTiming` instead. Whether it moved.
        """
        s, sm = self.settings, self.state_machine
        if s.step_adjustment_gain <= 0.0 or sm.state != WalkingState.SINGLE_SUPPORT:
            self._nominal_swing = None
            return False
        if self._nominal_swing is None or self._nominal_swing[0] != sm.phase_start:
            offset = None
            if s.step_timing_weight > 0.0:
                touchdown = sm.phase_start + s.single_support_duration
                offset = (
                    schedule_dcm(sm.schedule(t), touchdown, s.omega)
                    - (self.geometry.feet.center(sm.swing_target)[:2])
                )
            self._nominal_swing = (sm.phase_start, sm.swing_target, offset)
        remaining = sm.phase_end - t
        if remaining < s.step_adjustment_freeze:
            return False
        stance = sm.foot(sm.stance_side)
        if s.step_timing_weight > 0.0:
            moved = self._time_step(
                t, stance, np.asarray(dcm_reference)[:2] + dcm_error[:2], dcm_reference
            )
            if moved is not None:
                return moved
        adjusted = self.step_adjustment.adjust(
            self._nominal_swing[1], stance, dcm_error, remaining
        )
        current = sm.swing_target
        if math.hypot(adjusted.x - current.x, adjusted.y - current.y) < 5e-3:
            return False
        sm.retarget_swing(adjusted)
        return True

    def _time_step(
        self, t: float, stance: Footstep, dcm: np.ndarray, dcm_reference: np.ndarray
    ) -> bool | None:
        """Step timing (:mod:`~wbm_control.walking.step_timing`): the touch-down's place and time.

        Nominal (fixed at lift-off): the footstep and end then planned, and the DCM offset at
        touch-down of the LIP following that schedule's ZMP references
        (:func:`~wbm_control.walking.step_timing.schedule_dcm`). The ZMP held for the rest of
        the swing is the plan's equivalent constant ZMP: the one taking the plan's DCM now to
        the plan's DCM at the current touch-down time, z = (xi_plan(T) - xi_ref tau) /
        (1 - tau) (the plan's ZMP moves inside the stance sole early in a swing: the sole's
        centre mispredicts the touch-down DCM by up to 9 cm on iCub). So on the plan the
        prediction is the plan's, and a DCM error e grows to e tau (the step adjustment's
        law). It takes a swing over when the DCM is ``step_timing_threshold`` or more beside
        the nominal one now (xi_nom = z + (u_nom + k + b_nom - z) / tau_nom; laterally in the
        stance sole's frame: a push), and keeps it until its touch-down; before that it returns
        None (the place-only step adjustment decides). Then,
        within the dead band (that offset within ``step_adjustment_dead_band`` of its nominal)
        the nominal step and time stand. The swing is re-timed when the place moves by 5 mm or
        more or the end by more than one walking period; whether it was.
        """
        s, sm = self.settings, self.state_machine
        start, nominal, offset = self._nominal_swing
        nominal_end = start + s.single_support_duration
        nominal_remaining = nominal_end - t
        elapsed = t - sm.phase_start
        low = max(s.min_single_support_duration - elapsed, s.step_adjustment_freeze)
        high = max(s.max_single_support_duration - elapsed, low)
        tau = math.exp(s.omega * (sm.phase_end - t))
        reference = np.asarray(dcm_reference, dtype=float)[:2]
        planned = self.pattern_generator.plan.sample(sm.phase_end).dcm[:2]
        zmp = (planned - reference * tau) / (1.0 - tau)
        dcm = np.asarray(dcm, dtype=float)[:2]
        tau_nom = math.exp(s.omega * max(nominal_remaining, 0.0))
        centre = self.geometry.feet.center(nominal)[:2]
        predicted = zmp + (dcm - zmp) * tau_nom - centre
        distance = float(np.linalg.norm(predicted - offset))
        if self._timing_engaged != start:
            # The DCM's lateral deviation (stance sole frame) from the nominal one now.
            deviation = (predicted - offset) / tau_nom
            lateral = -math.sin(stance.yaw) * deviation[0] + math.cos(stance.yaw) * deviation[1]
            if abs(lateral) < s.step_timing_threshold:
                return None
            self._timing_engaged = start
        if distance < s.step_adjustment_dead_band:
            step, end = nominal, nominal_end
        else:
            solution = self.step_timing.solve(
                nominal=nominal,
                stance=stance,
                dcm=dcm,
                zmp=zmp,
                nominal_offset=offset,
                nominal_remaining=nominal_remaining,
                min_remaining=low,
                max_remaining=high,
            )
            step, end = solution.step, t + solution.remaining
        end = min(max(end, t + low), t + high)
        current = sm.swing_target
        moved = math.hypot(step.x - current.x, step.y - current.y)
        if moved < 5e-3 and abs(end - sm.phase_end) <= s.time_step + 1e-9:
            return False
        sm.retime_swing(step, end, t)
        return True

    def _support_polygon(self, support: tuple[Footstep, ...]) -> np.ndarray:
        """The hull of the soles in contact (full rectangles), computed when they change."""
        if self._support_cache is None or self._support_cache[0] != support:
            self._support_cache = (support, self.geometry.feet.support_polygon(support))
        return self._support_cache[1]

    def _replan_velocity(self, t: float) -> bool:
        """Re-plan the uncommitted steps from the velocity command; whether walking started."""
        sm = self.state_machine
        side = sm.next_swing_side
        if side is None:  # standing or stopping: the command picks the first foot
            if max(abs(v) for v in self.command) <= 1e-9:
                side = "left"
                steps = self.planner.closing_steps(
                    stance=self._held("right"), swing_foot=self._held("left")
                )
                if steps:
                    right_first = self.planner.closing_steps(
                        stance=self._held("left"), swing_foot=self._held("right")
                    )
                    steps = min(steps, right_first, key=len)
            else:
                side = self.planner.lead_side(self.command[1], self.command[2])
                steps = self.planner.plan_from_velocity(
                    self.command, stance=sm.foot(other_side(side)), swing_foot=sm.foot(side)
                )
            if not steps:
                return False
            started = sm.state in (WalkingState.STANDING, WalkingState.STOPPING)
            sm.set_footsteps(steps, t)
            return started
        if max(abs(v) for v in self.command) <= 1e-9:  # closing steps: from the held feet
            stance, swing_foot = self._held(other_side(side)), self._held(side)
        else:
            stance, swing_foot = sm.committed_foot(other_side(side)), sm.committed_foot(side)
        steps = self.planner.plan_from_velocity(self.command, stance=stance, swing_foot=swing_foot)
        sm.set_footsteps(steps, t)
        return False
