"""The controller's settings: a frozen dataclass tree read from a nested dict.

The dict is what ``config/icub/controller.yaml`` holds under ``/**: ros__parameters:`` (the node
rebuilds it from its ROS parameters; tests read the YAML directly). Every value is checked here
and a wrong one raises :class:`ConfigError` naming its key.

Gains are per second and do not depend on the control rate: IK gains k [1/s] give the task
velocity k e; torque-mode gains kp [1/s^2] and kd [1/s] give the task acceleration
kp e + kd de/dt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wbm_description.exceptions import ConfigError

MODES = ("ik", "torque")
TRIGGERS = ("timer", "inputs")


@dataclass(frozen=True)
class Gains:
    """Gains and weight of one task.

    Attributes:
        weight: Task weight in the QP cost [-] (relative).
        ik_gain: IK gain k [1/s] (the error is reduced at rate k).
        kp: Torque-mode stiffness [1/s^2].
        kd: Torque-mode damping [1/s].
    """

    weight: float
    ik_gain: float
    kp: float
    kd: float


@dataclass(frozen=True)
class FrameTaskConfig:
    """A frame pose task (a hand, a foot, any frame of the model).

    Attributes:
        name: Task name; also names its target topic (``targets/<name>``).
        frame: Model frame.
        position_weight: Weight of the position error [1/m] (relative).
        orientation_weight: Weight of the orientation error [1/rad] (relative).
        gains: The task's gains (its ``weight`` multiplies both weights above).
        max_reach: Targets farther than this from the frame's initial position are clamped [m].
    """

    name: str
    frame: str
    position_weight: float
    orientation_weight: float
    gains: Gains
    max_reach: float


@dataclass(frozen=True)
class ControllerConfig:
    """Every setting of the controller (see ``config/icub/controller.yaml`` for each meaning)."""

    robot: str = "icub"
    mode: str = "torque"
    control_rate: float = 500.0
    trigger: str = "timer"
    stale_timeout: float = 0.05
    use_ground_truth: bool = False
    world_frame: str = "world"
    target_duration: float = 1.0
    friction_coefficient: float = 0.5
    cop_margin: float = 0.0
    initial_contacts: tuple[str, ...] = ("left_foot", "right_foot")
    load_threshold: float = 40.0
    unload_threshold: float = 20.0
    velocity_cutoff: float = 10.0
    com: Gains = Gains(100.0, 10.0, 50.0, 14.0)
    dcm_gain: float = 3.0
    com_integral_gain: float = 0.0
    zmp_margin: float = 0.01
    base_orientation_frame: str = "root_link"
    base_orientation: Gains = Gains(10.0, 5.0, 100.0, 20.0)
    posture: Gains = Gains(0.1, 2.0, 25.0, 10.0)
    contact: Gains = Gains(1000.0, 20.0, 100.0, 20.0)
    frame_tasks: tuple[FrameTaskConfig, ...] = ()
    velocity_limit: float = 3.0
    configuration_limit_gain: float = 0.5
    ik_damping: float = 1e-6
    gravity_feedforward: bool = True
    wrench_weight: float = 1e-5
    acceleration_regularization: float = 1e-6
    min_normal_force: float = 10.0
    servo_references: bool = False
    friction_compensation: bool = True

    @property
    def control_period(self) -> float:
        """1 / control_rate [s]."""
        return 1.0 / self.control_rate

    def frame_task(self, name: str) -> FrameTaskConfig:
        """A frame task by name."""
        for task in self.frame_tasks:
            if task.name == name:
                return task
        raise KeyError(name)

    @classmethod
    def from_yaml(cls, path: str | Path) -> ControllerConfig:
        """Read a ROS 2 params file (``/**: ros__parameters: ...`` or a node name's section)."""
        path = Path(path)
        try:
            document = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as error:
            raise ConfigError(path, "", "a readable YAML file", str(error)) from error
        if not isinstance(document, dict) or not document:
            raise ConfigError(path, "", "a mapping with a node section")
        section = document.get("/**", next(iter(document.values())))
        if not isinstance(section, dict) or "ros__parameters" not in section:
            raise ConfigError(path, "/**.ros__parameters", "a ros__parameters mapping")
        return cls.from_dict(section["ros__parameters"], path=path)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, path: str | Path | None = None):
        """Build and check a config from the nested parameter dict (unknown keys are errors)."""
        reader = _Reader(path)
        return reader.config(values)


class _Reader:
    def __init__(self, path: str | Path | None):
        self.path = path

    def fail(self, key: str, expected: str, got: object = None) -> ConfigError:
        return ConfigError(self.path, key, expected, got)

    def number(self, values, key, default, *, low=None, high=None, strict_low=False) -> float:
        value = values.get(key.rsplit(".", 1)[-1], default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, "a number", value)
        value = float(value)
        if value != value or value in (float("inf"), float("-inf")):
            raise self.fail(key, "a finite number", value)
        if low is not None and (value <= low if strict_low else value < low):
            raise self.fail(key, f"a number {'>' if strict_low else '>='} {low}", value)
        if high is not None and value > high:
            raise self.fail(key, f"a number <= {high}", value)
        return value

    def flag(self, values, key, default) -> bool:
        value = values.get(key.rsplit(".", 1)[-1], default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def text(self, values, key, default) -> str:
        value = values.get(key.rsplit(".", 1)[-1], default)
        if not isinstance(value, str) or not value:
            raise self.fail(key, "a non-empty string", value)
        return value

    def section(self, values, key) -> Mapping[str, Any]:
        value = values.get(key.rsplit(".", 1)[-1], {})
        if not isinstance(value, Mapping):
            raise self.fail(key, "a mapping", value)
        return value

    def check_keys(self, values: Mapping[str, Any], prefix: str, allowed: set[str]) -> None:
        unknown = sorted(set(values) - allowed)
        if unknown:
            where = f"{prefix}." if prefix else ""
            raise self.fail(f"{where}{unknown[0]}", f"one of {sorted(allowed)}", unknown[0])

    def gains(self, values, key, default: Gains) -> Gains:
        section = self.section(values, key)
        self.check_keys(section, key, {"weight", "ik_gain", "kp", "kd"})
        return Gains(
            weight=self.number(section, f"{key}.weight", default.weight, low=0.0),
            ik_gain=self.number(section, f"{key}.ik_gain", default.ik_gain, low=0.0),
            kp=self.number(section, f"{key}.kp", default.kp, low=0.0),
            kd=self.number(section, f"{key}.kd", default.kd, low=0.0),
        )

    def config(self, values: Mapping[str, Any]) -> ControllerConfig:
        d = ControllerConfig()
        allowed = {
            "robot", "mode", "control_rate", "trigger", "stale_timeout", "use_ground_truth",
            "world_frame",
            "target_duration", "friction_coefficient", "cop_margin", "initial_contacts",
            "estimator", "com",
            "base_orientation", "posture", "contact", "frame_tasks", "ik", "torque",
        }  # fmt: skip
        self.check_keys(values, "", allowed)
        mode = self.text(values, "mode", d.mode)
        if mode not in MODES:
            raise self.fail("mode", f"one of {list(MODES)}", mode)
        trigger = self.text(values, "trigger", d.trigger)
        if trigger not in TRIGGERS:
            raise self.fail("trigger", f"one of {list(TRIGGERS)}", trigger)
        contacts = values.get("initial_contacts", list(d.initial_contacts))
        if not isinstance(contacts, list | tuple) or not all(isinstance(c, str) for c in contacts):
            raise self.fail("initial_contacts", "a list of sole names", contacts)
        estimator = self.section(values, "estimator")
        self.check_keys(
            estimator, "estimator", {"load_threshold", "unload_threshold", "velocity_cutoff"}
        )
        com = self.section(values, "com")
        self.check_keys(
            com,
            "com",
            {
                "weight",
                "ik_gain",
                "kp",
                "kd",
                "dcm_gain",
                "zmp_margin",
                "ik_integral_gain",
            },
        )
        base = self.section(values, "base_orientation")
        self.check_keys(base, "base_orientation", {"frame", "weight", "ik_gain", "kp", "kd"})
        ik = self.section(values, "ik")
        self.check_keys(
            ik,
            "ik",
            {
                "velocity_limit",
                "configuration_limit_gain",
                "damping",
                "gravity_feedforward",
            },
        )
        torque = self.section(values, "torque")
        self.check_keys(
            torque,
            "torque",
            {
                "wrench_weight",
                "acceleration_regularization",
                "min_normal_force",
                "servo_references",
                "friction_compensation",
            },
        )
        load = self.number(estimator, "estimator.load_threshold", d.load_threshold, low=0.0)
        unload = self.number(estimator, "estimator.unload_threshold", d.unload_threshold, low=0.0)
        if unload > load:
            raise self.fail("estimator.unload_threshold", f"<= load_threshold ({load})", unload)
        base_gains = {k: v for k, v in base.items() if k != "frame"}
        return ControllerConfig(
            robot=self.text(values, "robot", d.robot),
            mode=mode,
            control_rate=self.number(values, "control_rate", d.control_rate, low=1.0, high=10000),
            trigger=trigger,
            stale_timeout=self.number(
                values, "stale_timeout", d.stale_timeout, low=0.0, strict_low=True
            ),
            use_ground_truth=self.flag(values, "use_ground_truth", d.use_ground_truth),
            world_frame=self.text(values, "world_frame", d.world_frame),
            target_duration=self.number(values, "target_duration", d.target_duration, low=0.0),
            friction_coefficient=self.number(
                values, "friction_coefficient", d.friction_coefficient, low=0.0, strict_low=True
            ),
            cop_margin=self.number(values, "cop_margin", d.cop_margin, low=0.0, high=0.03),
            initial_contacts=tuple(contacts),
            load_threshold=load,
            unload_threshold=unload,
            velocity_cutoff=self.number(
                estimator, "estimator.velocity_cutoff", d.velocity_cutoff, low=0.0
            ),
            com=self._com_gains(com, d),
            dcm_gain=self.number(com, "com.dcm_gain", d.dcm_gain, low=0.0),
            com_integral_gain=self.number(
                com, "com.ik_integral_gain", d.com_integral_gain, low=0.0
            ),
            zmp_margin=self.number(com, "com.zmp_margin", d.zmp_margin, low=0.0),
            base_orientation_frame=self.text(
                base, "base_orientation.frame", d.base_orientation_frame
            ),
            base_orientation=self.gains(
                {"base_orientation": base_gains}, "base_orientation", d.base_orientation
            ),
            posture=self.gains(values, "posture", d.posture),
            contact=self.gains(values, "contact", d.contact),
            frame_tasks=self.frame_tasks(self.section(values, "frame_tasks")),
            velocity_limit=self.number(
                ik, "ik.velocity_limit", d.velocity_limit, low=0.0, strict_low=True
            ),
            configuration_limit_gain=self.number(
                ik,
                "ik.configuration_limit_gain",
                d.configuration_limit_gain,
                low=0.0,
                high=1.0,
                strict_low=True,
            ),
            ik_damping=self.number(ik, "ik.damping", d.ik_damping, low=0.0),
            gravity_feedforward=self.flag(ik, "ik.gravity_feedforward", d.gravity_feedforward),
            wrench_weight=self.number(torque, "torque.wrench_weight", d.wrench_weight, low=0.0),
            acceleration_regularization=self.number(
                torque,
                "torque.acceleration_regularization",
                d.acceleration_regularization,
                low=0.0,
                strict_low=True,
            ),
            min_normal_force=self.number(
                torque, "torque.min_normal_force", d.min_normal_force, low=0.0
            ),
            servo_references=self.flag(torque, "torque.servo_references", d.servo_references),
            friction_compensation=self.flag(
                torque, "torque.friction_compensation", d.friction_compensation
            ),
        )

    def _com_gains(self, com: Mapping[str, Any], d: ControllerConfig) -> Gains:
        gains = {k: v for k, v in com.items() if k in {"weight", "ik_gain", "kp", "kd"}}
        return self.gains({"com": gains}, "com", d.com)

    def frame_tasks(self, section: Mapping[str, Any]) -> tuple[FrameTaskConfig, ...]:
        names = section.get("names", [])
        if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
            raise self.fail("frame_tasks.names", "a list of task names", names)
        self.check_keys(section, "frame_tasks", {"names", *names})
        tasks = []
        for name in names:
            key = f"frame_tasks.{name}"
            values = section.get(name)
            if not isinstance(values, Mapping):
                raise self.fail(key, "a mapping with frame, weights and gains", values)
            self.check_keys(
                values,
                key,
                {
                    "frame", "position_weight", "orientation_weight", "weight", "ik_gain", "kp",
                    "kd", "max_reach",
                },
            )  # fmt: skip
            gains = {k: v for k, v in values.items() if k in {"weight", "ik_gain", "kp", "kd"}}
            tasks.append(
                FrameTaskConfig(
                    name=name,
                    frame=self.text(values, f"{key}.frame", None),
                    position_weight=self.number(values, f"{key}.position_weight", 1.0, low=0.0),
                    orientation_weight=self.number(
                        values, f"{key}.orientation_weight", 1.0, low=0.0
                    ),
                    gains=self.gains({name: gains}, key, Gains(1.0, 10.0, 100.0, 20.0)),
                    max_reach=self.number(
                        values, f"{key}.max_reach", 0.5, low=0.0, strict_low=True
                    ),
                )
            )
        return tuple(tasks)
