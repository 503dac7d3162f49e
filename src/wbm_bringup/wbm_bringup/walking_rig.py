"""Walking in closed loop in-process: controller + walking + an engine, and what a run measured.

Shared by the walking tests, ``wbm_benchmark_walking`` and the demo. The controller sees only
:class:`RobotReadings` (its estimator, not ground truth, feeds it, and touch-down comes from the
ankle F/T sensors); ground truth is read only to judge the run:

- ``speed``: distance of the mid-feet point from its start over the time [m/s];
- ``slide``: the largest horizontal displacement of a held sole from where it was
  ``SETTLE`` after its touch-down, while it stays held [m];
- ``zmp_margin``: the smallest distance of the F/T ZMP (without F/T sensors: the true centre
  of pressure of the engine's contact forces) inside the support polygon (the soles
  held by the controller or loaded above ``LOADED`` by their F/T, where the estimate puts
  them: a held sole carrying less than ``LOADED`` while the load moves to the other one in
  double support still bears on the ground, and the F/T ZMP counts its force), outside the
  ``SETTLE``
  after a contact switch (the stated transient) [m]; without F/T sensors the soles loaded above
  ``LOADED`` by the engine's true contact forces (a landing foot bears before its touch-down is
  detected): 0 is a foot tipping on its edge
  (``zmp_margin_at``: when and in which phase the smallest one was);
- ``estimate_error``: the largest distance of the estimated base position from the true one [m];
- ``placement_error``: the largest horizontal distance of a sole from its planned footstep at
  touch-down [m], both in the estimator's world (the plan lives there: the sole where the
  estimate puts it; the estimate's own drift is ``estimate_error``, not counted twice);
- ``touchdowns``: how each touch-down was detected (``touchdown``/``early_touchdown``: the
  ankle F/T, or for a sole without one its estimated load, near the ground, see
  :mod:`wbm_control.walking.touchdown_estimate`; ``timeout``: never measured; ``clock``: no
  measurement).

Engines: ``"compliant"`` and ``"rigid"`` (wbm's simulator) and ``"mujoco"``, 1 ms steps unless
told (``dt``: the G1's light feet rock on the compliant ground at 250 Hz, beyond what
semi-implicit Euler integrates stably at 1 ms in single support; 0.5 ms does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from wbm_bringup.closed_loop import run_closed_loop
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.walking import ActivateContact, ReleaseContact, WalkingSettings, WalkingState
from wbm_control.walking_behaviour import WalkingBehaviour
from wbm_description.support_geometry import convex_hull_2d, polygon_margin
from wbm_description.whole_body_model import WholeBodyModel

ENGINES = ("compliant", "rigid", "mujoco")
DT = 1e-3  # engine step [s]
SETTLE = 0.05  # transient after a contact switch, out of the slide and ZMP checks [s]
FALL_HEIGHT = 0.35  # the CoM below this [m]: fallen
LOADED = 20.0  # a sole whose F/T normal force exceeds this [N] is part of the support polygon


def make_engine(model: WholeBodyModel, engine: str, dt: float = DT):
    """An engine by name (see the module docstring), the robot standing with the left sole at 0.

    Args:
        model: The robot.
        engine: ``"compliant"``, ``"rigid"`` or ``"mujoco"``.
        dt: Engine time step [s].
    """
    if engine == "mujoco":
        from wbm_dynamics.mujoco.engine import MujocoEngine
        from wbm_dynamics.mujoco.settings import MujocoSettings

        sim = MujocoEngine(model, MujocoSettings(timestep=dt))
    elif engine in ("compliant", "rigid"):
        from wbm_dynamics.settings import SimulatorSettings
        from wbm_dynamics.simulator import Simulator

        sim = Simulator(
            model,
            SimulatorSettings(dt=dt, integrator="semi_implicit_euler", contact_model=engine),
        )
    else:
        raise ValueError(f"engine: expected one of {ENGINES}, got {engine!r}")
    joints = model.initial_posture.copy()
    sole = model.config.soles[0].frame
    sim.reset(model.configuration(model.base_placement_for_reference_frame(joints, sole), joints))
    return sim


@dataclass
class WalkingMetrics:
    """What a walking run measured (see the module docstring)."""

    duration: float = 0.0
    distance: float = 0.0
    fallen: bool = False
    slide: float = 0.0
    zmp_margin: float = math.inf
    zmp_margin_at: tuple[float, str] | None = None
    estimate_error: float = 0.0
    placement_error: float = 0.0
    steps: int = 0
    touchdowns: dict[str, int] = field(default_factory=dict)
    first_liftoff: float | None = None
    safe_steps: int = 0
    step_times: list[float] = field(default_factory=list)

    @property
    def speed(self) -> float:
        """Mean speed [m/s]."""
        return self.distance / self.duration if self.duration > 0 else 0.0


@dataclass
class WalkingRig:
    """One robot walking in-process (see :func:`make_walking_rig`)."""

    model: WholeBodyModel
    engine: object
    controller: WholeBodyController
    behaviour: WalkingBehaviour
    steps_per_control: int
    metrics: WalkingMetrics = field(default_factory=WalkingMetrics)
    trace: list[dict] = field(default_factory=list)
    record_trace: bool = False

    def __post_init__(self):
        self._anchors: dict[str, tuple[float, np.ndarray]] = {}
        self._last_switch = -math.inf
        self._start_mid = None
        self._truth = None  # (engine time [s], its ground truth), see :meth:`truth`

    # ------------------------------------------------------------------ truth

    def truth(self):
        """The engine's ground truth now, read once per engine time.

        The rig only steps the engine (time moves on) and never resets it, so one reading per
        time is the state; the judges below and the tests' ``until`` conditions ask for it several
        times per control period (on MuJoCo each reading sums the contact forces: 40 % of a G1
        walk's wall time before this cache).
        """
        time = self.engine.time
        if self._truth is None or self._truth[0] != time:
            self._truth = (time, self.engine.ground_truth())
        return self._truth[1]

    def truth_q(self) -> np.ndarray:
        """The true configuration."""
        return self.truth().q

    def sole_position(self, sole: str, q: np.ndarray | None = None) -> np.ndarray:
        """A sole's true position in the world [m]."""
        q = self.truth_q() if q is None else q
        return self.model.frame_placement(q, self.model.config.sole(sole).frame).translation

    def sole_yaw(self, sole: str) -> float:
        """A sole's true yaw [rad]."""
        rotation = self.model.frame_placement(
            self.truth_q(), self.model.config.sole(sole).frame
        ).rotation
        return math.atan2(rotation[1, 0], rotation[0, 0])

    def mid_feet(self) -> np.ndarray:
        """The true middle of the sole frames [m]."""
        b = self.behaviour
        return 0.5 * (self.sole_position(b.left_sole) + self.sole_position(b.right_sole))

    def mid_yaw(self) -> float:
        """The true mean yaw of the soles [rad]."""
        b = self.behaviour
        a, c = self.sole_yaw(b.left_sole), self.sole_yaw(b.right_sole)
        return a + 0.5 * math.atan2(math.sin(c - a), math.cos(c - a))

    def com(self) -> np.ndarray:
        """The true CoM [m]."""
        return self.model.com_position(self.truth_q())

    def true_cop(self) -> np.ndarray | None:
        """The true centre of pressure of the engine's contact forces [m] (None: no push).

        The ZMP judged for a robot without F/T sensors.
        """
        truth = self.truth()
        total, moment = 0.0, np.zeros(2)
        for name, force in truth.contact_forces.items():
            position = truth.contact_positions.get(name)
            if force[2] > 0.0 and position is not None and np.all(np.isfinite(position)):
                total += float(force[2])
                moment += float(force[2]) * np.asarray(position[:2])
        return None if total < LOADED else np.array([*(moment / total), 0.0])

    def true_sole_forces(self) -> dict[str, float]:
        """Each sole's true normal force from the engine's contacts [N].

        Our simulator names a sole's contact points ``<sole>/<corner>``, MuJoCo a sole by its name.
        """
        forces = self.truth().contact_forces
        return {
            sole.name: float(
                sum(f[2] for name, f in forces.items() if name.split("/")[0] == sole.name)
            )
            for sole in self.model.config.soles
        }

    def fallen(self) -> bool:
        """Whether the robot fell (CoM low) or the engine diverged."""
        diverged = getattr(self.engine, "diverged", None)
        return self.com()[2] < FALL_HEIGHT or diverged is not None

    # ------------------------------------------------------------------ run

    def _record(self, t: float) -> None:
        m, c, b = self.metrics, self.controller, self.behaviour
        q = self.truth_q()
        estimate = c._last_estimate  # noqa: SLF001 - the estimate of the last step
        m.estimate_error = max(m.estimate_error, float(np.linalg.norm(estimate.q[:3] - q[:3])))
        m.step_times.append(c.status.step_time)
        refs = b.references
        if refs is not None:
            for command in refs.contact_commands:
                if isinstance(command, ReleaseContact) and m.first_liftoff is None:
                    m.first_liftoff = t
                if isinstance(command, ActivateContact):
                    m.steps += 1
                    m.touchdowns[command.reason] = m.touchdowns.get(command.reason, 0) + 1
                    planned = command.placement.translation[:2]
                    landed = self.sole_position(command.sole, estimate.q)[:2]
                    m.placement_error = max(
                        m.placement_error, float(np.linalg.norm(landed - planned))
                    )
            if refs.contact_commands:
                self._last_switch = t
        held = set(c.contacts.active_names())
        for sole in list(self._anchors):
            if sole not in held:
                del self._anchors[sole]
        for sole in held:
            if sole not in self._anchors:
                self._anchors[sole] = (t, None)
            since, anchor = self._anchors[sole]
            position = self.sole_position(sole, q)[:2]
            if anchor is None:
                if t - since >= SETTLE:
                    self._anchors[sole] = (since, position.copy())
            else:
                m.slide = max(m.slide, float(np.linalg.norm(position - anchor)))
        zmp = c.status.zmp_measured  # the F/T ZMP and the F/T loads
        forces = estimate.normal_forces
        if zmp is None:  # no F/T sensors (G1): the true centre of pressure and loads
            zmp = self.true_cop()
            forces = self.true_sole_forces()
        if zmp is not None and t - self._last_switch >= SETTLE:
            loaded = [
                s
                for s in self.model.config.soles
                if s.name in held or forces.get(s.name, 0.0) > LOADED
            ]
            corners = [
                self.model.frame_placement(estimate.q, sole.frame).act(corner)[:2]
                for sole in loaded
                for corner in sole.corners()
            ]
            if len(corners) >= 3:
                margin = float(polygon_margin(zmp[:2], convex_hull_2d(corners)))
                if margin < m.zmp_margin:
                    m.zmp_margin = margin
                    phase = "standing" if refs is None else refs.phase_name
                    m.zmp_margin_at = (t, f"{phase}, loaded {[s.name for s in loaded]}")
        if self.record_trace and refs is not None:
            self.trace.append(
                {
                    "t": t,
                    "base": q[:7].copy(),
                    "com": self.model.com_position(q)[:2].copy(),
                    "com_ref": refs.com[:2].copy(),
                    "zmp_ref": refs.zmp[:2].copy(),
                    "dcm_ref": refs.dcm[:2].copy(),
                    "zmp": None if zmp is None else zmp[:2].copy(),
                    "state": refs.phase_name,
                }
            )

    def run(self, duration: float, *, events=None, until=None) -> WalkingMetrics:
        """Run for ``duration`` [s] of simulated time (less if it falls or ``until()``)."""
        if self._start_mid is None:
            self._start_mid = self.mid_feet()
        start = self.engine.time

        def stop() -> bool:
            return self.fallen() or (until is not None and until())

        log = run_closed_loop(
            self.controller,
            self.engine,
            duration,
            robot_steps_per_control=self.steps_per_control,
            record=self._record,
            events=events,
            stop=stop,
        )
        m = self.metrics
        m.duration += self.engine.time - start
        m.safe_steps += log.safe_steps
        m.fallen = m.fallen or self.fallen()
        m.distance = float(np.linalg.norm((self.mid_feet() - self._start_mid)[:2]))
        return m

    def standing(self) -> bool:
        """Whether walking is standing (after a stop or at the end of a plan)."""
        walking = self.behaviour.walking
        return walking is not None and walking.state == WalkingState.STANDING

    def command(self, name: str, *args, settle: float = 1.05):
        """A walking command; the first one is followed by the CoM lowering (``settle`` [s])."""
        first = not self.behaviour.active
        result = getattr(self.behaviour, name)(*args)
        if first and self.behaviour.active:
            self.run(settle)
            self.metrics = WalkingMetrics()
            self._start_mid = self.mid_feet()
        return result

    def walk_until_standing(self, limit: float, settle: float = 0.5) -> WalkingMetrics:
        """Run until walking is standing again (plus ``settle`` [s]), at most ``limit`` [s]."""
        self.run(0.05)
        self.run(limit, until=self.standing)
        return self.run(settle)

    def turn_on_goal(
        self, angle: float, limit: float, dx: float = 0.0, dy: float = 0.0
    ) -> tuple[float, float]:
        """Turn by ``angle`` [rad] on a goal pose ``(dx, dy)`` [m] (world) from the mid-feet.

        The metrics start afresh (they are the turn's); runs until standing, at most ``limit``.

        Returns:
            The yaw turned [rad] and how far the mid-feet point moved [m].
        """
        self.metrics = WalkingMetrics()
        before, yaw = self.mid_feet(), self.mid_yaw()
        self.command("set_goal", before[0] + dx, before[1] + dy, yaw + angle)
        self.walk_until_standing(limit)
        turned = math.remainder(self.mid_yaw() - yaw, 2 * math.pi)
        return turned, float(np.linalg.norm((self.mid_feet() - before)[:2]))

    def walk_sideways(self, distance: float, speed: float) -> tuple[float, float]:
        """Walk ``distance`` [m] to the robot's left at ``speed`` [m/s] on cmd_vel, then stop.

        The metrics start afresh (they are the walk's); the walk runs until the mid-feet point
        has gone ``distance`` along the robot's left at the start (at most ``distance / speed``
        + 6 s), then the stop until standing (at most 4 s).

        Returns:
            How far the mid-feet point went along that axis [m], and how far apart the feet
            are along the trunk after the stop [m].
        """
        self.metrics = WalkingMetrics()
        before, yaw = self.mid_feet(), self.mid_yaw()
        left_axis = np.array([-math.sin(yaw), math.cos(yaw)])
        self.command("set_velocity_command", 0.0, speed, 0.0)
        self.run(
            distance / speed + 6.0,
            until=lambda: (self.mid_feet() - before)[:2] @ left_axis >= distance,
        )
        self.behaviour.stop()
        self.walk_until_standing(4.0)
        sideways = float((self.mid_feet() - before)[:2] @ left_axis)
        apart = self.sole_position("left_foot") - self.sole_position("right_foot")
        along = abs(float(apart[:2] @ np.array([math.cos(yaw), math.sin(yaw)])))
        return sideways, along


def controller_settings(
    config: Path, mode: str, control_rate: float = 500.0
) -> ControllerSettings:
    """The controller settings of a file, in a mode, at a control rate."""
    return replace(ControllerSettings.from_yaml(config), mode=mode, control_rate=control_rate)


def make_walking_rig(
    model: WholeBodyModel,
    settings: ControllerSettings,
    engine: str,
    walking: WalkingSettings | None = None,
    *,
    stand: float = 1.0,
    dt: float = DT,
) -> WalkingRig:
    """A robot standing on an engine for ``stand`` [s], a walking behaviour in its controller.

    ``dt``: the engine's time step [s].
    """
    sim = make_engine(model, engine, dt)
    controller = WholeBodyController(model, settings)
    walking = (walking or settings.walking).replace(time_step=settings.control_period)
    behaviour = WalkingBehaviour(controller, walking)
    rig = WalkingRig(model, sim, controller, behaviour, round(settings.control_period / dt))
    if stand > 0:
        run_closed_loop(controller, sim, stand, robot_steps_per_control=rig.steps_per_control)
    return rig
