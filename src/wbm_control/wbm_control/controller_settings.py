"""The controller's settings, section by section as in ``config/<robot>/controller.yaml``.

Every class is a frozen :class:`~wbm_description.settings.Settings` dataclass read by the one
settings reader (``ControllerSettings.from_mapping`` / ``from_yaml``; the node declares them as
parameters with :func:`~wbm_description.ros.node_runtime.declare_settings`): the top-level keys,
then one class per section (``estimator``, ``com``, ``base_orientation``, ``posture``,
``contact``, ``frame_tasks.<name>``, ``ik``, ``torque``, ``fallback``). Unknown keys, wrong
types and values out of range raise :class:`~wbm_description.exceptions.ConfigError` naming
the source and the dotted key.

Gains are per second and do not depend on the control rate: IK gains k [1/s] give the task
velocity k e; torque-mode gains kp [1/s^2] and kd [1/s] give the task acceleration
kp e + kd de/dt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wbm_control.walking.settings import WalkingSettings
from wbm_description.cpu_affinity import cpu_affinity_setting
from wbm_description.cpu_latency import cpu_latency_setting
from wbm_description.exceptions import ConfigError
from wbm_description.realtime_priority import THREAD_SCOPES
from wbm_description.settings import Settings, setting

MODES = ("ik", "torque")
TRIGGERS = ("timer", "inputs", "every_sample")


def _weight(default: float, doc: str = "QP weight of the task") -> Any:
    return setting(default, doc=doc, unit="-", ge=0.0)


def _ik_gain(default: float) -> Any:
    return setting(default, doc="IK gain k: the error is reduced at rate k", unit="1/s", ge=0.0)


def _kp(default: float) -> Any:
    return setting(default, doc="torque mode: stiffness of the task", unit="1/s^2", ge=0.0)


def _kd(default: float) -> Any:
    return setting(default, doc="torque mode: damping of the task", unit="1/s", ge=0.0)


@dataclass(frozen=True)
class TaskGains(Settings):
    """Weight and gains of one task (the fields every task section has)."""

    weight: float = _weight(1.0)
    ik_gain: float = _ik_gain(10.0)
    kp: float = _kp(100.0)
    kd: float = _kd(20.0)


@dataclass(frozen=True)
class EstimatorSettings(Settings):
    """``estimator:`` the base estimator's contact detection and filter."""

    load_threshold: float = setting(
        40.0, doc="a foot whose F/T normal force exceeds this is anchored", unit="N", ge=0.0
    )
    unload_threshold: float = setting(
        20.0, doc="an anchored foot below this is released (hysteresis)", unit="N", ge=0.0
    )
    velocity_cutoff: float | None = setting(
        10.0,
        doc="low-pass cut-off of the base linear velocity (0: off)",
        unit="Hz",
        ge=0.0,
        null=0.0,
    )
    joint_torques: bool = setting(
        False,
        doc="joint_states' effort is the measured joint torque: the loads of soles without an "
        "F/T sensor are estimated from it (wbm_control.contact_estimation)",
    )
    flat_ground: bool = setting(
        False,
        doc="the ground is flat and level at the height the robot starts on: a newly loaded "
        "sole is anchored with its lowest corner on it, else where the estimate puts it "
        "(wbm_control.base_estimator); the estimate's height then does not rise by the ground's "
        "give under each step's load",
    )
    flat_ground_tolerance: float = setting(
        0.01,
        doc="with flat_ground, a sole whose lowest corner the estimate puts farther than this "
        "from the ground plane is anchored where the estimate puts it (a step, an obstacle)",
        unit="m",
        ge=0.0,
    )
    accelerometer: bool = setting(
        False,
        doc="mode torque, with velocity_cutoff: the base velocity's filter is complementary "
        "with the IMU's accelerometer (no low-pass lag; wbm_control.base_estimator). Mode ik "
        "keeps the low-pass (the G1's IK walk and iCub's standing push in ik were worse with "
        "it). On for the G1 (its walking sway followed the 10 Hz filter's lag), off for iCub "
        "(its walk fell with it, not diagnosed)",
    )

    def check(self) -> None:
        """The release threshold is below the anchoring one."""
        if self.unload_threshold > self.load_threshold:
            raise ConfigError(
                None,
                "unload_threshold",
                f"<= load_threshold ({self.load_threshold})",
                self.unload_threshold,
            )


@dataclass(frozen=True)
class ComSettings(TaskGains):
    """``com:`` the centre-of-mass task and the balance feedback (target topic targets/com)."""

    weight: float = _weight(100.0)
    ik_gain: float = _ik_gain(10.0)
    kp: float = _kp(50.0)
    kd: float = _kd(14.0)
    dcm_gain: float = setting(
        3.0, doc="DCM proportional feedback gain k (horizontal)", unit="1/s", ge=0.0
    )
    ik_integral_gain: float = setting(
        0.0,
        doc="mode ik: integral action on the horizontal CoM error (clamped to 3 cm)",
        unit="1/s",
        ge=0.0,
    )
    zmp_margin: float = setting(
        0.01, doc="the commanded ZMP stays this far inside the support polygon", unit="m", ge=0.0
    )
    target_margin: float = setting(
        0.03,
        doc="CoM targets are clamped this far inside the support polygon",
        unit="m",
        ge=0.0,
    )
    target_height_up: float = setting(
        0.01,
        doc="CoM targets are clamped to this rise above the initial CoM height",
        unit="m",
        ge=0.0,
    )
    target_height_down: float = setting(
        0.01,
        doc="CoM targets are clamped to this drop below the initial CoM height",
        unit="m",
        ge=0.0,
    )


@dataclass(frozen=True)
class BaseOrientationSettings(TaskGains):
    """``base_orientation:`` keeps a frame (the pelvis) upright."""

    weight: float = _weight(10.0)
    ik_gain: float = _ik_gain(5.0)
    kp: float = _kp(100.0)
    kd: float = _kd(20.0)
    frame: str = setting(
        "root_link", doc="model frame whose orientation is regulated", nonempty=True
    )


@dataclass(frozen=True)
class PostureSettings(TaskGains):
    """``posture:`` regularization towards the robot config's initial posture."""

    weight: float = _weight(0.1)
    ik_gain: float = _ik_gain(2.0)
    kp: float = _kp(25.0)
    kd: float = _kd(10.0)


@dataclass(frozen=True)
class ContactSettings(TaskGains):
    """``contact:`` held soles: their IK pose task and the torque mode's drift correction."""

    weight: float = _weight(1000.0, doc="IK weight of a held sole's pose task")
    ik_gain: float = _ik_gain(20.0)
    kp: float = _kp(100.0)
    kd: float = _kd(20.0)


@dataclass(frozen=True)
class FrameTaskSettings(TaskGains):
    """``frame_tasks.<name>:`` a frame pose task (a hand, a foot); target topic targets/<name>.

    The task's ``weight`` multiplies both ``position_weight`` and ``orientation_weight``.
    """

    weight: float = _weight(1.0)
    ik_gain: float = _ik_gain(10.0)
    kp: float = _kp(100.0)
    kd: float = _kd(20.0)
    frame: str = setting("", doc="model frame of the task", nonempty=True)
    position_weight: float = setting(
        1.0, doc="relative weight of the position error", unit="1/m", ge=0.0
    )
    orientation_weight: float = setting(
        1.0, doc="relative weight of the orientation error", unit="1/rad", ge=0.0
    )
    max_reach: float = setting(
        0.5,
        doc="targets farther than this from the initial position are clamped",
        unit="m",
        gt=0.0,
    )
    reach_fraction: float = setting(
        0.99,
        doc="targets are also clamped to this fraction of the stretched limb around its root",
        unit="-",
        gt=0.0,
        le=1.0,
    )


@dataclass(frozen=True)
class IkWalkingSettings(Settings):
    """``ik.walking:`` mode "ik" while walking: the ZMP-CoM controller of the CoM command.

    See :mod:`wbm_control.walking.position_stabilizer`.
    """

    zmp_gain: float = setting(
        0.0,
        doc="k_zmp: CoM command velocity per metre of ZMP error (desired - F/T)",
        unit="1/s",
        ge=0.0,
    )
    com_gain: float = setting(
        0.0,
        doc="k_com: CoM command velocity per metre of CoM error (plan - measured)",
        unit="1/s",
        ge=0.0,
    )
    max_offset: float = setting(
        0.05,
        doc="largest horizontal distance of the CoM command from the plan",
        unit="m",
        gt=0.0,
    )


@dataclass(frozen=True)
class IkSettings(Settings):
    """``ik:`` mode "ik"."""

    velocity_limit: float = setting(3.0, doc="joint velocity limit", unit="rad/s", gt=0.0)
    configuration_limit_gain: float = setting(
        0.5, doc="fraction of the distance to a position limit per step", unit="-", gt=0.0, le=1.0
    )
    damping: float = setting(1e-6, doc="Tikhonov damping of the IK QP", unit="-", ge=0.0)
    gravity_feedforward: bool = setting(
        True, doc="effort = contact-consistent gravity torques (with the DCM's CoM acceleration)"
    )
    motion_feedforward: bool = setting(
        False,
        doc="with gravity_feedforward: effort = the inverse dynamics of the IK's motion (its q, v"
        " and the tasks' planned accelerations) on the held soles instead of the quasi-static"
        " torques",
    )
    sagittal_momentum_compensation: bool = setting(
        False,
        doc="with motion_feedforward: the feed-forward's CoM acceleration is corrected so that the"
        " planned motion's angular momentum rate does not move its ZMP along the base's heading"
        " (a swing leg accelerated forward moves it onto the stance toe; wbm_control.ik_mode)",
    )
    walking: IkWalkingSettings = setting(default_factory=IkWalkingSettings)


@dataclass(frozen=True)
class TorqueSettings(Settings):
    """``torque:`` mode "torque" (the whole-body QP)."""

    wrench_weight: float = setting(
        1e-5, doc="regularization of the contact wrenches", unit="1/N^2", ge=0.0
    )
    acceleration_regularization: float = setting(
        1e-6, doc="regularization of the accelerations", unit="-", gt=0.0
    )
    min_normal_force: float = setting(
        10.0, doc="lower bound of each held sole's normal force", unit="N", ge=0.0
    )
    servo_references: bool = setting(
        False, doc="also send the predicted next joint state as servo references"
    )
    friction_compensation: bool = setting(
        True, doc="add the model's joint friction to the torques (mode ik: to the feed-forward)"
    )
    max_iterations: int = setting(
        100,
        doc="proxsuite iteration limit of the whole-body QP: bounds a failing solve's time "
        "(a warm-started solve takes a few)",
        unit="-",
        ge=1,
    )
    polish: bool = setting(
        True,
        doc="replace proxsuite's solution by the exact one on its active set (a KKT solve): the "
        "same inputs give the same torques to the last bit (proxsuite's own vary by ~4e-12 "
        "with its workspace's heap alignment); the last polished active set is tried first and, "
        "when it is the optimum, replaces the proxsuite solve: about 0.14 ms per step on the "
        "2-core machine",
    )


@dataclass(frozen=True)
class FallbackSettings(Settings):
    """``fallback:`` mode "torque": what is solved when the whole-body QP fails."""

    enabled: bool = setting(
        True, doc="false: a failed QP goes straight to the safe hold (no softer problems)"
    )

    contact_slack_weight: float = setting(
        1e4,
        doc="cost of the held soles' acceleration slack in the relaxed problems",
        unit="s^4/m^2",
        gt=0.0,
    )
    max_iterations: int = setting(
        200, doc="proxsuite iteration limit of each fallback solve", unit="-", ge=1
    )
    eps_abs: float = setting(
        1e-6, doc="proxsuite absolute tolerance of the fallback solves", unit="-", gt=0.0
    )


@dataclass(frozen=True)
class ControllerSettings(Settings):
    """Every setting of the controller; see ``config/icub/controller.yaml`` for each meaning."""

    robot: str = setting(
        "icub", doc="robot registry name or path to a robot config YAML", nonempty=True
    )
    mode: str = setting(
        "torque", doc='"torque": whole-body QP torques; "ik": IK references', choices=MODES
    )
    control_rate: float = setting(500.0, doc="control loop rate", unit="Hz", ge=1.0, le=10000.0)
    trigger: str = setting(
        "timer",
        doc='"timer": a step every 1/control_rate; "inputs": one step per robot sample (the '
        'newest, when the controller fell behind); "every_sample": one step per robot sample, '
        "every one in order (a lockstep simulator, which may run samples ahead: command_delay)",
        choices=TRIGGERS,
    )
    stale_timeout: float = setting(
        0.05, doc="inputs older than this switch to the safe hold command", unit="s", gt=0.0
    )
    realtime_priority: int = setting(
        0,
        doc="SCHED_FIFO priority of the node's threads (1-99, as ros2_control's thread_priority)"
        "; 0: normal scheduling",
        unit="-",
        ge=0,
        le=99,
    )
    realtime_threads: str = setting(
        "all",
        doc='the threads realtime_priority sets: "all" of the process, or "loop" (the input '
        "thread, which takes the robot's samples, steps and publishes the command, and the "
        "middleware's receive threads)",
        choices=THREAD_SCOPES,
    )
    cpu_affinity: tuple[int, ...] = cpu_affinity_setting()
    cpu_dma_latency: int = cpu_latency_setting()
    use_ground_truth: bool = setting(
        False, doc="subscribe ground_truth/odom instead of estimating (tests only)"
    )
    world_frame: str = setting(
        "world", doc="frame_id of targets and of the published odom", nonempty=True
    )
    target_duration: float = setting(
        1.0, doc="a new target is reached along a quintic of this duration", unit="s", ge=0.0
    )
    friction_coefficient: float = setting(
        0.5, doc="mu of the contact wrench cone's friction pyramid", unit="-", gt=0.0
    )
    cop_margin: float = setting(
        0.0,
        doc="torque mode: each sole's CoP stays this far inside its edges",
        unit="m",
        ge=0.0,
        le=0.03,
    )
    initial_contacts: tuple[str, ...] = setting(
        ("left_foot", "right_foot"), doc="soles (robot config names) held from the start"
    )
    estimator: EstimatorSettings = setting(default_factory=EstimatorSettings)
    com: ComSettings = setting(default_factory=ComSettings)
    base_orientation: BaseOrientationSettings = setting(default_factory=BaseOrientationSettings)
    posture: PostureSettings = setting(default_factory=PostureSettings)
    contact: ContactSettings = setting(default_factory=ContactSettings)
    frame_tasks: dict[str, FrameTaskSettings] = setting(default_factory=dict)
    ik: IkSettings = setting(default_factory=IkSettings)
    torque: TorqueSettings = setting(default_factory=TorqueSettings)
    fallback: FallbackSettings = setting(default_factory=FallbackSettings)
    walking: WalkingSettings = setting(default_factory=WalkingSettings)

    @property
    def control_period(self) -> float:
        """1 / control_rate [s]."""
        return 1.0 / self.control_rate


__all__ = [
    "MODES",
    "TRIGGERS",
    "BaseOrientationSettings",
    "ComSettings",
    "ContactSettings",
    "ControllerSettings",
    "EstimatorSettings",
    "FallbackSettings",
    "FrameTaskSettings",
    "IkSettings",
    "IkWalkingSettings",
    "PostureSettings",
    "TaskGains",
    "TorqueSettings",
]
