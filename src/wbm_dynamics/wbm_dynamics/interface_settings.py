"""Settings of the robot-interface node, validated in the core (the node only declares them).

The node's parameters file (``config/<robot>/robot_interface.yaml``, a ROS 2 parameters file)
holds the node-level keys of :class:`RobotInterfaceSettings` (robot, backend, pacing, rates,
watchdog, frames, the sensor ``noise`` section and its ``seed``), and one section per backend,
named after it: ``simulator:`` (:class:`~wbm_dynamics.settings.SimulatorSettings`), ``mujoco:``
(:class:`~wbm_dynamics.mujoco.settings.MujocoSettings`), a driver's own section. The node reads
the section of the backend it hosts (or the file ``backend_config`` names) with that backend's
``settings_class``; sections of other backends are ignored, and any other unknown key is an
error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from wbm_description.cpu_affinity import cpu_affinity_setting
from wbm_description.cpu_latency import cpu_latency_setting
from wbm_description.realtime_priority import THREAD_SCOPES
from wbm_description.settings import Settings, setting
from wbm_dynamics.noise import NoiseSettings

PACINGS = ("realtime", "as_fast_as_possible", "lockstep")
TIMEOUT_ACTIONS = ("hold_posture", "damping")


@dataclass(frozen=True)
class RobotInterfaceSettings(Settings):
    """What the robot-interface node does around its backend.

    Attributes:
        robot: Registered robot name or robot config path.
        backend: Robot backend: "simulator", "mujoco", or a driver registered in the
            ``wbm.robot_backends`` entry points (checked when the backend is built).
        backend_config: A settings file for the backend (read with its settings class instead
            of its section of the parameters); "" for none.
        pacing: "realtime" (robot time follows the wall clock times ``real_time_factor``),
            "as_fast_as_possible", or "lockstep" (one control period, ``1 / control_rate``,
            per command received).
        real_time_factor: Robot seconds per wall second in realtime pacing, > 0.
        control_rate: The controller's rate [Hz]; in lockstep each command advances
            ``1 / control_rate`` of robot time.
        publish_rate: State publication rate in robot time (realtime, as fast as possible) [Hz].
        command_timeout: Watchdog: longest gap between commands (robot time, counted from the
            stamp of the sample a command answers) before ``command_timeout_action`` [s]; 0
            disables it. A command whose stamp is already this old when it arrives is dropped.
        command_timeout_action: When the watchdog trips: ``hold_posture`` (the posture hold of
            the start, :meth:`~wbm_dynamics.backends.backend.RobotBackend.
            hold_posture_command`: the robot keeps standing) or ``damping`` (tau = -kd dq: the
            robot goes limp, damped).
        command_timeout_return: With ``hold_posture``: the trip's position references go from
            the joint positions at the trip to the posture hold's over this much robot time, on
            a minimum-jerk profile (:class:`~wbm_dynamics.watchdog.PostureReturn`: the hold at
            once slams a joint the controller held away from the initial posture) [s]; 0: at
            once.
        command_delay: Robot time from the sample a command answers (its stamp) to the first
            step the command acts on [s]: a simulated bus or actuation latency (0: at once, the
            next step after its arrival). In lockstep a whole number of control periods: the
            robot then runs that many samples ahead of the commands, so the simulator steps
            while the controller computes (:class:`~wbm_dynamics.pacing.PacingLoop`). Only for a
            steppable backend (a real robot has its own latency).
        push_duration: How long a wrench received on ``apply_wrench`` acts [s].
        realtime_priority: SCHED_FIFO priority (1-99) of the node's threads, where permitted
            (:mod:`wbm_description.realtime_priority`); 0: normal scheduling. Not applied as
            fast as possible (a loop that never waits) nor in lockstep with a
            ``command_delay`` (both sides of the loop run at once: in SCHED_FIFO they would
            keep the CPUs from every other process).
        realtime_threads: The threads ``realtime_priority`` sets: ``"all"`` of the process, or
            ``"loop"``: the input thread (it takes the commands, and in lockstep steps and
            publishes), the pacing thread and the middleware's receive threads.
        cpu_affinity: CPUs every thread of the node runs on (:mod:`wbm_description.cpu_affinity`;
            negative: from the end of the CPUs the process may use); (): any CPU.
        cpu_dma_latency: CPU wake-up latency requested while the node runs [us]
            (:mod:`wbm_description.cpu_latency`); -1: none.
        world_frame: Frame of the ground truth odometry.
        hold_posture_at_start: At start and after a reset, the servos hold the robot config's
            initial posture (position references plus the static torques of standing on its
            soles as feed-forward) from the first simulated instant until a controller
            commands (the default, on every backend); false: nothing is commanded and the robot
            is limp until then (in realtime pacing it sags, and may fall, before the controller
            connects).
        noise: Sensor noise added to a simulated robot's readings (any engine; off by default).
        seed: Seed of the noise generator (runs with the same seed read the same noise).
    """

    ignored_keys: ClassVar[tuple[str, ...]] = ("use_sim_time",)

    robot: str = setting("icub", nonempty=True, doc="registered robot name or robot config file")
    backend: str = setting(
        "simulator", nonempty=True, doc="robot backend: simulator, mujoco, or a registered driver"
    )
    backend_config: str = setting(
        "", doc="settings file of the backend instead of its section; empty: none"
    )
    pacing: str = setting(
        "realtime", choices=PACINGS, doc="realtime, as_fast_as_possible or lockstep"
    )
    real_time_factor: float = setting(
        1.0, gt=0.0, doc="realtime pacing: robot seconds per wall second"
    )
    control_rate: float = setting(
        100.0, gt=0.0, unit="Hz", doc="controller rate; lockstep: 1/control_rate per command"
    )
    publish_rate: float = setting(
        500.0, gt=0.0, unit="Hz", doc="state publication rate in robot time"
    )
    command_timeout: float = setting(
        0.02,
        ge=0.0,
        unit="s",
        doc="watchdog timeout in robot time, from the stamp of the sample a command answers; "
        "a command this old on arrival is dropped; 0 disables it",
    )
    command_timeout_action: str = setting(
        "hold_posture",
        choices=TIMEOUT_ACTIONS,
        doc="what the joints do when the watchdog trips: hold_posture (the posture hold of "
        "the start) or damping (tau = -kd dq)",
    )
    command_timeout_return: float = setting(
        0.5,
        ge=0.0,
        unit="s",
        doc="hold_posture: robot time over which the trip's references go from the joint "
        "positions at the trip to the posture hold's (minimum jerk); 0: at once",
    )
    command_delay: float = setting(
        0.0,
        ge=0.0,
        unit="s",
        doc="robot time from a sample to the first step its command acts on (a bus or "
        "actuation latency); lockstep: a whole number of control periods, the robot that far "
        "ahead of the commands; steppable backends only",
    )
    push_duration: float = setting(0.1, gt=0.0, unit="s", doc="duration of an apply_wrench push")
    realtime_priority: int = setting(
        0,
        ge=0,
        le=99,
        doc="SCHED_FIFO priority of the node's threads (1-99, as ros2_control's thread_priority)"
        "; 0: normal scheduling; not applied as fast as possible nor in lockstep with a "
        "command_delay",
    )
    realtime_threads: str = setting(
        "all",
        choices=THREAD_SCOPES,
        doc='the threads realtime_priority sets: "all" of the process, or "loop" (the input '
        "thread, which takes the commands and in lockstep steps and publishes, the pacing "
        "thread, and the middleware's receive threads)",
    )
    cpu_affinity: tuple[int, ...] = cpu_affinity_setting()
    cpu_dma_latency: int = cpu_latency_setting()
    world_frame: str = setting("world", nonempty=True, doc="frame of ground_truth/odom")
    hold_posture_at_start: bool = setting(
        True, doc="servos hold the initial posture until a controller commands"
    )
    noise: NoiseSettings = setting(default_factory=NoiseSettings)
    seed: int = setting(0, ge=0, doc="seed of the sensor noise generator")


__all__ = ["PACINGS", "TIMEOUT_ACTIONS", "RobotInterfaceSettings"]
