"""Settings of the robot-interface node, validated in the core (the node only maps parameters).

The node's parameters (``config/<robot>/simulator.yaml``, a ROS 2 params file) are a nested
mapping: node-level keys (robot, backend, pacing, rates, watchdog, frames) and a ``simulator``
section with the fields of :class:`~wbm_dynamics.settings.SimulatorSettings`. Two ROS-specific
encodings are undone here: environment boxes come as ``box_names`` plus ``boxes.<name>.*``
(ROS parameters cannot hold a list of mappings), and a tangential contact constant of 0 means
"the same as the normal one" (ROS parameters cannot be null).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wbm_description.exceptions import ConfigError
from wbm_dynamics.settings import SimulatorSettings

PACINGS = ("realtime", "as_fast_as_possible", "lockstep")


@dataclass(frozen=True)
class RobotInterfaceSettings:
    """What the robot-interface node does, besides simulating.

    Attributes:
        robot: Registered robot name or robot config path.
        backend: Robot backend: "simulator", "mujoco", or a driver registered in the
            ``wbm.robot_backends`` entry points (checked when the backend is built).
        backend_config: Settings file of a hardware driver backend; "" for none.
        pacing: "realtime" (sim time follows the wall clock times ``real_time_factor``),
            "as_fast_as_possible", or "lockstep" (one ``control_period`` per command received).
        real_time_factor: Sim seconds per wall second in realtime pacing, > 0.
        control_period: Sim time advanced per command in lockstep [s].
        publish_rate: State publication rate in sim time (realtime, as fast as possible) [Hz].
        command_timeout: Watchdog: longest gap between commands before the joints go to the
            damping mode [s of robot time]; 0 disables it.
        push_duration: How long a wrench received on ``apply_wrench`` acts [s].
        world_frame: Frame of the ground truth odometry.
        hold_posture_at_start: At start and after a reset, the servos hold the robot config's
            initial posture (position references plus the static torques of standing on its
            soles as feed-forward) until a controller commands; otherwise nothing is commanded
            and the robot is limp.
        simulator: The simulation settings.
    """

    robot: str = "icub"
    backend: str = "simulator"
    pacing: str = "realtime"
    real_time_factor: float = 1.0
    control_period: float = 0.01
    publish_rate: float = 500.0
    command_timeout: float = 0.5
    push_duration: float = 0.1
    world_frame: str = "world"
    backend_config: str = ""
    hold_posture_at_start: bool = False
    simulator: SimulatorSettings = field(default_factory=SimulatorSettings)

    @property
    def publish_steps(self) -> int:
        """Simulation steps between two publications (at least 1)."""
        return max(1, round(1.0 / (self.publish_rate * self.simulator.dt)))

    @property
    def control_steps(self) -> int:
        """Simulation steps per command in lockstep (at least 1)."""
        return max(1, round(self.control_period / self.simulator.dt))

    @classmethod
    def from_parameters(
        cls, values: Mapping[str, Any], *, source: str | None = None
    ) -> RobotInterfaceSettings:
        """Settings from the node's (nested) parameters.

        Raises:
            ConfigError: Unknown key, wrong type, or a value out of range; it names the key.
        """

        def fail(key: str, expected: str, got: object = None) -> ConfigError:
            return ConfigError(source, key, expected, got)

        if not isinstance(values, Mapping):
            raise fail("", "a mapping of parameters", type(values).__name__)
        known = {f.name for f in dataclasses.fields(cls)} | {"use_sim_time"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise fail(unknown[0], f"one of the known parameters {sorted(known)}")
        defaults = cls()
        kwargs: dict[str, Any] = {}
        for name in ("robot", "backend", "pacing", "world_frame"):
            value = values.get(name, getattr(defaults, name))
            if not isinstance(value, str) or not value:
                raise fail(name, "a non-empty string", value)
            kwargs[name] = value
        backend_config = values.get("backend_config", defaults.backend_config)
        if not isinstance(backend_config, str):
            raise fail("backend_config", "a file path or an empty string", backend_config)
        kwargs["backend_config"] = backend_config
        if kwargs["pacing"] not in PACINGS:
            raise fail("pacing", f"one of {list(PACINGS)}", kwargs["pacing"])
        for name, positive in (
            ("real_time_factor", True),
            ("control_period", True),
            ("publish_rate", True),
            ("command_timeout", False),
            ("push_duration", True),
        ):
            value = values.get(name, getattr(defaults, name))
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise fail(name, "a number", value)
            value = float(value)
            if not math.isfinite(value) or value < 0.0 or (positive and value == 0.0):
                raise fail(name, "a finite number " + ("> 0" if positive else ">= 0"), value)
            kwargs[name] = value
        hold = values.get("hold_posture_at_start", defaults.hold_posture_at_start)
        if not isinstance(hold, bool):
            raise fail("hold_posture_at_start", "true or false", hold)
        kwargs["hold_posture_at_start"] = hold
        simulator = values.get("simulator", {})
        if not isinstance(simulator, Mapping):
            raise fail("simulator", "a mapping", type(simulator).__name__)
        try:
            kwargs["simulator"] = SimulatorSettings.from_dict(
                _undo_ros_encodings(simulator, fail), source=source
            )
        except ConfigError as error:
            if error.key.startswith("simulator."):
                raise
            # Name the key as the parameter is spelled (simulator.<key>).
            raise ConfigError(
                source, f"simulator.{error.key}", error.expected, error.got
            ) from None
        return cls(**kwargs)


def _undo_ros_encodings(simulator: Mapping[str, Any], fail) -> dict[str, Any]:
    """box_names + boxes.<name> -> boxes: {name: ...}; tangential constants 0 -> None."""
    values = dict(simulator)
    names = values.pop("box_names", None)
    boxes = values.pop("boxes", {}) or {}
    if not isinstance(boxes, Mapping):
        raise fail("simulator.boxes", "a mapping from box name to box", boxes)
    if names is not None:
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise fail("simulator.box_names", "a list of box names", names)
        names = [name for name in names if name]
        for name in names:
            if name not in boxes:
                raise fail(f"simulator.boxes.{name}", "the box's center, size, rpy, friction")
        extra = sorted(set(boxes) - set(names))
        if extra:
            raise fail(f"simulator.boxes.{extra[0]}", "a box listed in simulator.box_names")
        values["boxes"] = {name: boxes[name] for name in names}
    elif boxes:
        raise fail("simulator.box_names", "the list of the boxes' names", None)
    compliant = values.get("compliant")
    if isinstance(compliant, Mapping):
        compliant = dict(compliant)
        for key in ("tangential_stiffness", "tangential_damping"):
            if compliant.get(key) == 0:
                compliant[key] = None
        values["compliant"] = compliant
    return values
