"""Walking settings: timing, step limits, pattern generator and touch-down parameters.

One frozen dataclass, validated on construction (:class:`~wbm_description.exceptions.ConfigError`
naming the key, what was expected and what was given). Two fields depend on the robot and may be
left to ``None``: the nominal lateral foot spacing and the CoM height; :meth:`WalkingSettings.
with_robot` fills them (from :class:`wbm_control.walking.feet.WalkingGeometry`, which measures them
on the whole-body model).

Step limits are relative to the stance foot, in the stance sole frame (x forward, y left): a step
of the left foot from a right stance foot lands at (dx, dy, dyaw) with
``-max_step_length_backward <= dx <= max_step_length``,
``min_foot_spacing <= dy <= nominal_foot_spacing + max_step_width`` and
``|dyaw| <= max_step_yaw`` (mirrored in y for the right foot).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from wbm_description.exceptions import ConfigError
from wbm_description.settings import Settings, setting

_EPS = 1e-12


@dataclass(frozen=True)
class WalkingSettings(Settings):
    """Parameters of walking (all SI units).

    Attributes:
        single_support_duration: Duration of a swing (one foot on the ground) [s].
        double_support_duration: Duration of a double support between two steps [s].
        initial_double_support_duration: Double support before the first step from standing,
            during which the CoM is shifted over the first stance foot [s].
        final_double_support_duration: Double support after the last step, while the CoM
            settles between the feet, before the robot is standing again [s].
        max_step_length: Largest forward displacement of a foot relative to the stance foot,
            along the stance sole's x axis [m].
        max_step_length_backward: Largest backward displacement, same axis [m] (>= 0).
        max_step_width: Largest lateral displacement beyond the nominal foot spacing, along the
            stance sole's y axis [m].
        max_step_yaw: Largest yaw of a foot relative to the stance foot [rad], in (0, pi/2).
        nominal_foot_spacing: Lateral distance between the sole frames when standing [m], or
            None to take it from the robot model.
        min_foot_spacing: Smallest lateral distance of the swing sole from the stance sole, in
            the stance sole frame and on the swing foot's side (feet never cross) [m].
        swing_height: Clearance of the swing foot: apex height above the lift-off/touch-down
            height [m].
        swing_horizontal_fraction: Fraction of the swing over which the foot moves horizontally
            (and turns); the rest is a vertical descent onto the footstep [-].
        com_height: CoM height above the ground for the linear inverted pendulum [m], or None to
            take it from the robot model.
        zmp_margin: The ZMP is kept this far inside the sole rectangles (each side shrunk) [m].
        zmp_inward_offset: The single-support ZMP reference lies this far from the stance
            sole's centre towards the swing foot's side (along the sole's y axis) [m]: the
            nominal gait then keeps the DCM off the sole's outer edge, which a push towards
            the stance foot needs (the swing foot cannot cross to catch it). 0: the centre.
        ik_zmp_inward_offset: Mode ik (position-controlled servos): ``zmp_inward_offset``'s
            value there [m], or None for the same value in both modes (a file writes -1.0 for
            None). The G1's ik walk lets the true CoP leave the sole with the offset its torque
            walk takes pushes with (README, "G1: lateral pushes while walking").
        mpc_time_step: Largest duration of a segment of the pattern generator's piecewise-linear
            ZMP [s].
        mpc_horizon: Preview horizon of the pattern generator [s].
        time_step: Control period [s] (the walking update is called at this rate).
        replan_period: Period of the pattern generator's re-plans [s] (>= time_step); between
            re-plans the plan is sampled in closed form, and every contact switch re-plans.
        replan_from_measured_state: True: every re-plan starts from the measured CoM state;
            False: re-plans start from the plan's own state except at contact switches (each
            touch-down and lift-off), where they start from the measured state (the stabilizer
            then closes the loop between re-plans).
        max_forward_velocity: Largest forward velocity command [m/s].
        max_backward_velocity: Largest backward velocity command [m/s] (>= 0).
        max_lateral_velocity: Largest lateral velocity command, either side [m/s].
        max_yaw_rate: Largest yaw rate command, either way [rad/s].
        touchdown_force: Normal force above which a swing foot has touched down [N].
        support_force: Normal force above which a stance foot is loaded: a foot is released only
            while the other foot carries at least this [N].
        min_touchdown_phase: Fraction of the swing after which a touch-down is accepted (early
            touch-down); contacts before are taken for lift-off transients [-], in (0, 1].
        side_by_side_tolerance: On a stop, feet this close (sole frames, horizontally) to side
            by side need no closing step [m].
        side_by_side_yaw_tolerance: Same for the yaw between the feet [rad].
        max_touchdown_delay: Longest extension of a swing waiting for a late touch-down [s].
        late_touchdown_depth: How far below the planned touch-down the foot is lowered during
            that extension [m].
        zmp_weight: Cost weight of the ZMP's distance to its reference (support centres) [1/m^2].
        zmp_rate_weight: Cost weight of the ZMP's rate of change [s/m^2].
        terminal_dcm_weight: Cost weight of the distance of the DCM at the end of the horizon
            to the ZMP there (viability: the CoM can stop over it), discounted by
            exp(-omega horizon) [1/m^2].
        stabilizer_gain: DCM feedback gain k of z = z_ref + k (xi - xi_ref) [-], > 1; the DCM
            error decays at the rate (k - 1) omega.
        gravity: Gravity's magnitude [m/s^2].
        step_adjustment_gain: Fraction of the grown DCM error the swing foot's touch-down is
            moved by (:mod:`~wbm_control.walking.step_adjustment`) [-]; 0 disables it.
        step_adjustment_dead_band: Shifts smaller than this leave the footstep as planned [m].
        step_adjustment_freeze: No adjustment in the last this long of a swing (the foot is
            about to land) [s].
        step_timing_weight: Cost of changing a swing's duration, w_tau on (tau - tau_nom)^2
            with tau = exp(omega T) [-]: > 0 adjusts where AND when the swing foot lands
            (:mod:`~wbm_control.walking.step_timing`), the gain and dead band above still
            deciding whether the step moves; 0 moves the place only
            (:mod:`~wbm_control.walking.step_adjustment`).
        step_timing_threshold: Step timing takes a swing over (until its touch-down) when the
            DCM is this far or more beside (laterally, in the stance sole's frame) the DCM of
            the nominal step at the nominal time (a push); below, the place-only step
            adjustment acts [m].
        dcm_offset_weight: Step timing: cost of the DCM's offset from its planned place
            relative to the new footstep at touch-down, w_b [1/m^2] (the step's own cost is
            1 per m^2).
        min_single_support_duration: Step timing: the shortest swing [s].
        max_single_support_duration: Step timing: the longest swing [s].
        min_double_support_duration: Step timing: a double support whose measured DCM is
            outside the hull of the soles ends this soon after its start (lift-off still waits
            for the stance foot's load) [s].
    """

    single_support_duration: float = setting(
        0.6, doc="Duration of a swing (one foot on the ground)", unit="s"
    )
    double_support_duration: float = setting(
        0.2, doc="Duration of a double support between two steps", unit="s"
    )
    initial_double_support_duration: float = setting(
        0.6,
        doc=(
            "Double support before the first step from standing, during which the CoM is shifted"
            " over the first stance foot"
        ),
        unit="s",
    )
    final_double_support_duration: float = setting(
        0.6,
        doc=(
            "Double support after the last step, while the CoM settles between the feet, before "
            "the robot is standing again"
        ),
        unit="s",
    )
    max_step_length: float = setting(
        0.25,
        doc=(
            "Largest forward displacement of a foot relative to the stance foot, along the "
            "stance sole's x axis"
        ),
        unit="m",
    )
    max_step_length_backward: float = setting(
        0.10, doc="Largest backward displacement, same axis [m] (>= 0)"
    )
    max_step_width: float = setting(
        0.10,
        doc=(
            "Largest lateral displacement beyond the nominal foot spacing, along the stance "
            "sole's y axis"
        ),
        unit="m",
    )
    max_step_yaw: float = setting(
        0.35, doc="Largest yaw of a foot relative to the stance foot [rad], in (0, pi/2)"
    )
    nominal_foot_spacing: float | None = setting(
        None,
        doc=(
            "Lateral distance between the sole frames when standing [m], or None to take it from"
            " the robot model"
        ),
        null=0.0,
    )
    min_foot_spacing: float = setting(
        0.10,
        doc=(
            "Smallest lateral distance of the swing sole from the stance sole, in the stance "
            "sole frame and on the swing foot's side (feet never cross)"
        ),
        unit="m",
    )
    swing_height: float = setting(
        0.04,
        doc="Clearance of the swing foot: apex height above the lift-off/touch-down height",
        unit="m",
    )
    swing_horizontal_fraction: float = setting(
        1.0,
        doc=(
            "Fraction of the swing over which the foot moves horizontally and turns; the rest "
            "is a vertical descent onto the footstep (an early touch-down lands on it)"
        ),
        unit="-",
        gt=0.0,
        le=1.0,
    )
    com_height: float | None = setting(
        None,
        doc=(
            "CoM height above the ground for the linear inverted pendulum [m], or None to take "
            "it from the robot model"
        ),
        null=0.0,
    )
    zmp_margin: float = setting(
        0.01,
        doc="The ZMP is kept this far inside the sole rectangles (each side shrunk)",
        unit="m",
    )
    zmp_inward_offset: float = setting(
        0.0,
        doc=(
            "The single-support ZMP reference lies this far from the stance sole's centre "
            "towards the swing foot's side (along the sole's y axis): room on the outer edge "
            "for a push towards the stance foot; 0: the centre"
        ),
        unit="m",
    )
    ik_zmp_inward_offset: float | None = setting(
        None,
        doc=(
            "Mode ik: zmp_inward_offset's value there; None (-1.0 in a file): the same in both "
            "modes"
        ),
        unit="m",
        null=-1.0,
    )
    mpc_time_step: float = setting(
        0.1,
        doc="Largest duration of a segment of the pattern generator's piecewise-linear ZMP",
        unit="s",
    )
    mpc_horizon: float = setting(1.6, doc="Preview horizon of the pattern generator", unit="s")
    time_step: float = setting(
        0.002, doc="Control period [s] (the walking update is called at this rate)"
    )
    replan_period: float = setting(
        0.01,
        doc=(
            "Period of the pattern generator's re-plans [s] (>= time_step); between re-plans the"
            " plan is sampled in closed form, and every contact switch re-plans"
        ),
    )
    replan_from_measured_state: bool = setting(
        False,
        doc=(
            "True: every re-plan starts from the measured CoM state; False: re-plans start from "
            "the plan's own state except at contact switches (each touch-down and lift-off), "
            "where they start from the measured st"
        ),
    )
    max_forward_velocity: float = setting(0.30, doc="Largest forward velocity command", unit="m/s")
    max_backward_velocity: float = setting(
        0.10, doc="Largest backward velocity command [m/s] (>= 0)"
    )
    max_lateral_velocity: float = setting(
        0.06, doc="Largest lateral velocity command, either side", unit="m/s"
    )
    max_yaw_rate: float = setting(0.40, doc="Largest yaw rate command, either way", unit="rad/s")
    touchdown_force: float = setting(
        30.0, doc="Normal force above which a swing foot has touched down", unit="N"
    )
    support_force: float = setting(
        50.0,
        doc=(
            "Normal force above which a stance foot is loaded: a foot is released only while the"
            " other foot carries at least this"
        ),
        unit="N",
    )
    min_touchdown_phase: float = setting(
        0.5,
        doc=(
            "Fraction of the swing after which a touch-down is accepted (early touch-down); "
            "contacts before are taken for lift-off transients [-], in (0, 1]"
        ),
    )
    side_by_side_tolerance: float = setting(
        1e-4,
        doc=(
            "On a stop, feet this close (sole frames, horizontally) to side by side need no "
            "closing step (about the landing accuracy: a smaller miss is not fixed by a step)"
        ),
        unit="m",
    )
    side_by_side_yaw_tolerance: float = setting(
        1e-3, doc="Same for the yaw between the feet", unit="rad"
    )
    max_touchdown_delay: float = setting(
        0.1, doc="Longest extension of a swing waiting for a late touch-down", unit="s"
    )
    late_touchdown_depth: float = setting(
        0.02,
        doc="How far below the planned touch-down the foot is lowered during that extension",
        unit="m",
    )
    zmp_weight: float = setting(
        1.0,
        doc="Cost weight of the ZMP's distance to its reference (support centres)",
        unit="1/m^2",
    )
    zmp_rate_weight: float = setting(
        1e-3, doc="Cost weight of the ZMP's rate of change", unit="s/m^2"
    )
    terminal_dcm_weight: float = setting(
        1e3,
        doc=(
            "Cost weight of the distance of the DCM at the end of the horizon to the ZMP there "
            "(viability: the CoM can stop over it), discounted by exp(-omega horizon)"
        ),
        unit="1/m^2",
    )
    stabilizer_gain: float = setting(
        3.0,
        doc=(
            "DCM feedback gain k of z = z_ref + k (xi - xi_ref) [-], > 1; the DCM error decays "
            "at the rate (k - 1) omega"
        ),
    )
    gravity: float = setting(9.81, doc="Gravity's magnitude", unit="m/s^2")
    step_adjustment_gain: float = setting(
        0.0,
        doc=(
            "Fraction of the grown DCM error the swing foot's touch-down is moved by "
            "(:mod:`~wbm_control.walking.step_adjustment`) [-]; 0 disables it"
        ),
    )
    step_adjustment_dead_band: float = setting(
        0.01, doc="Shifts smaller than this leave the footstep as planned", unit="m"
    )
    step_adjustment_freeze: float = setting(
        0.1,
        doc="No adjustment in the last this long of a swing (the foot is about to land)",
        unit="s",
    )
    step_timing_weight: float = setting(
        0.0,
        doc=(
            "Cost of changing a swing's duration (tau = exp(omega T)); > 0: the step timing of "
            "wbm_control.walking.step_timing, 0: the step's place only"
        ),
    )
    step_timing_threshold: float = setting(
        0.02, doc="Step timing: the lateral DCM deviation that engages it", unit="m"
    )
    dcm_offset_weight: float = setting(
        100.0, doc="Step timing: cost of the DCM offset at touch-down off its plan", unit="1/m^2"
    )
    min_single_support_duration: float = setting(
        0.3, doc="Step timing: the shortest swing", unit="s"
    )
    max_single_support_duration: float = setting(
        0.6, doc="Step timing: the longest swing", unit="s"
    )
    min_double_support_duration: float = setting(
        0.2,
        doc="Step timing: a double support with the DCM outside the soles ends this soon",
        unit="s",
    )

    def check(self) -> None:
        """The ranges and the rules between fields (see the class docstring)."""
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "replan_from_measured_state":
                if not isinstance(value, bool):
                    raise ConfigError(None, item.name, "true or false", value)
                continue
            if value is None and item.name in (
                "nominal_foot_spacing",
                "com_height",
                "ik_zmp_inward_offset",
            ):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(None, item.name, "a number", value)
            if not math.isfinite(value):
                raise ConfigError(None, item.name, "a finite number", value)
        for key in (
            "single_support_duration",
            "double_support_duration",
            "initial_double_support_duration",
            "final_double_support_duration",
            "max_step_length",
            "max_step_yaw",
            "min_foot_spacing",
            "swing_height",
            "mpc_time_step",
            "mpc_horizon",
            "time_step",
            "replan_period",
            "max_forward_velocity",
            "touchdown_force",
            "support_force",
            "zmp_weight",
            "terminal_dcm_weight",
            "gravity",
        ):
            self._require(key, getattr(self, key) > 0.0, "a number > 0")
        for key in (
            "max_step_length_backward",
            "max_step_width",
            "zmp_margin",
            "zmp_inward_offset",
            "max_backward_velocity",
            "max_lateral_velocity",
            "max_yaw_rate",
            "max_touchdown_delay",
            "late_touchdown_depth",
            "zmp_rate_weight",
            "step_adjustment_gain",
            "step_adjustment_dead_band",
            "step_adjustment_freeze",
            "side_by_side_tolerance",
            "side_by_side_yaw_tolerance",
            "step_timing_weight",
            "step_timing_threshold",
            "dcm_offset_weight",
            "min_double_support_duration",
        ):
            self._require(key, getattr(self, key) >= 0.0, "a number >= 0")
        if self.step_timing_weight > 0.0:
            self._require(
                "min_single_support_duration",
                self.step_adjustment_freeze
                < self.min_single_support_duration
                <= self.single_support_duration,
                f"a duration in (step_adjustment_freeze, single_support_duration] "
                f"({self.step_adjustment_freeze}, {self.single_support_duration}] [s]",
            )
            self._require(
                "max_single_support_duration",
                self.max_single_support_duration >= self.single_support_duration,
                f">= single_support_duration ({self.single_support_duration} s)",
            )
        if self.ik_zmp_inward_offset is not None:
            self._require(
                "ik_zmp_inward_offset", self.ik_zmp_inward_offset >= 0.0, "a number >= 0"
            )
        self._require("max_step_yaw", self.max_step_yaw < 0.5 * math.pi, "an angle < pi/2 [rad]")
        self._require(
            "min_touchdown_phase", 0.0 < self.min_touchdown_phase <= 1.0, "a fraction in (0, 1]"
        )
        self._require("stabilizer_gain", self.stabilizer_gain > 1.0, "a gain > 1 [-]")
        self._require(
            "replan_period", self.replan_period >= self.time_step - _EPS, "a period >= time_step"
        )
        self._require(
            "mpc_horizon",
            self.mpc_horizon >= self.step_duration - _EPS,
            f"a horizon of at least one step ({self.step_duration} s)",
        )
        if self.nominal_foot_spacing is not None:
            self._require(
                "nominal_foot_spacing",
                self.nominal_foot_spacing >= self.min_foot_spacing,
                f"a spacing >= min_foot_spacing ({self.min_foot_spacing} m)",
            )
        if self.com_height is not None:
            self._require("com_height", self.com_height > 0.0, "a height > 0 [m]")
        # Velocity limits the step limits can realise (see FootstepPlanner): forward and yaw
        # advance on every step, lateral motion on every other step (lead foot, then closing).
        period = self.step_duration
        self._require(
            "max_forward_velocity",
            self.max_forward_velocity * period <= self.max_step_length + _EPS,
            f"<= max_step_length / step duration ({self.max_step_length / period:.4g} m/s)",
        )
        self._require(
            "max_backward_velocity",
            self.max_backward_velocity * period <= self.max_step_length_backward + _EPS,
            "<= max_step_length_backward / step duration "
            f"({self.max_step_length_backward / period:.4g} m/s)",
        )
        self._require(
            "max_lateral_velocity",
            2.0 * self.max_lateral_velocity * period <= self.max_step_width + _EPS,
            f"<= max_step_width / (2 step duration) ({self.max_step_width / (2 * period):.4g}"
            " m/s)",
        )
        self._require(
            "max_yaw_rate",
            self.max_yaw_rate * period <= self.max_step_yaw + _EPS,
            f"<= max_step_yaw / step duration ({self.max_step_yaw / period:.4g} rad/s)",
        )

    def _require(self, key: str, condition: bool, expected: str) -> None:
        if not condition:
            raise ConfigError(None, key, expected, getattr(self, key))

    @property
    def step_duration(self) -> float:
        """Duration of one step: single plus double support [s]."""
        return self.single_support_duration + self.double_support_duration

    @property
    def omega(self) -> float:
        """Natural frequency of the linear inverted pendulum sqrt(g / h) [1/s]."""
        return math.sqrt(self.gravity / self.require_com_height())

    @property
    def preview_steps(self) -> int:
        """How many footsteps a velocity command is planned ahead: past the MPC horizon."""
        return math.ceil(self.mpc_horizon / self.step_duration) + 2

    def require_com_height(self) -> float:
        """The CoM height [m]; raises if it was left to the model and not filled in."""
        if self.com_height is None:
            raise ConfigError(None, "com_height", "a height [m] (fill it with with_robot())")
        return self.com_height

    def require_foot_spacing(self) -> float:
        """The nominal foot spacing [m]; raises if it was not filled in."""
        if self.nominal_foot_spacing is None:
            raise ConfigError(
                None, "nominal_foot_spacing", "a spacing [m] (fill it with with_robot())"
            )
        return self.nominal_foot_spacing

    def with_robot(self, *, nominal_foot_spacing: float, com_height: float) -> WalkingSettings:
        """A copy with the robot-dependent fields that are None filled in (others kept).

        Args:
            nominal_foot_spacing: Lateral distance of the sole frames when standing [m].
            com_height: CoM height above the soles [m].
        """
        return replace(
            self,
            nominal_foot_spacing=(
                nominal_foot_spacing
                if self.nominal_foot_spacing is None
                else self.nominal_foot_spacing
            ),
            com_height=com_height if self.com_height is None else self.com_height,
        )
