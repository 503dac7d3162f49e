"""The demo's report: metrics and plots computed from the recording of a run.

Everything is recomputed from the recorded topics with the whole-body model: the true base pose
(``ground_truth/odom``) and ``joint_states`` give the CoM, the hand and the feet; the F/T sensors
(``ft/<sensor>``) give the ZMP (seed 004 eqs 8.5-8.8, foot weight removed); the support polygon is
the hull of the loaded soles' corners. How fast the run went: the whole launch's wall time, and
the phases the recorder's ``/clock`` samples give (:class:`RunTiming`: the processes' start, the
robot running, with its pace in robot seconds per wall second, and the stop).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import yaml

from wbm_bringup.clock_span import ClockSpan
from wbm_bringup.demo.scenario import DemoScenario
from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.markers import MarkerOptions, marker_scene
from wbm_description.support_geometry import convex_hull_2d, polygon_margin
from wbm_description.whole_body_model import WholeBodyModel

SETTLING_TIME = 0.5
"""The first seconds of a run, while the controller takes over the limp robot [s]: the ZMP
margin is reported after them."""


@dataclass
class RunRecording:
    """Time series of a run, aligned on the joint_states stamps (absolute simulated time [s]).

    Attributes:
        time: (n,) [s].
        q: (n, nq) configurations (true base pose and measured joints).
        efforts: (n, ndof) measured joint torques [N m].
        wrenches: F/T sensor name to (n, 6) readings (NaN where none was received yet).
        events: Topic (``targets/<task>``, ``apply_wrench``, without the namespace) to the
            header stamp of its first recorded message [s]: when the scenario sent it.
    """

    time: np.ndarray
    q: np.ndarray
    efforts: np.ndarray
    wrenches: dict[str, np.ndarray] = field(default_factory=dict)
    events: dict[str, float] = field(default_factory=dict)


def aligned(recording: RunRecording, scenario: DemoScenario) -> tuple[RunRecording, DemoScenario]:
    """The recording from the scenario's start on (times from there) and the recorded push.

    The scenario node counts its times from the first state it receives, which comes after
    robot time 0 when the node (or the controller whose ``odom`` it waits for) starts late, or
    in real-time pacing, where robot time runs from the simulator's start. The target it sent,
    stamped with its clock, gives that start (its stamp less ``hand_start``); the push's stamp
    gives the push. Without a recorded target the recording is taken as it is.
    """
    hand = recording.events.get(f"targets/{scenario.hand_task}")
    origin = 0.0 if hand is None else hand - scenario.hand_start
    push = recording.events.get("apply_wrench")
    if push is not None:
        scenario = replace(scenario, push_time=push - origin)
    if origin == 0.0:
        return recording, scenario
    keep = recording.time >= origin
    return (
        RunRecording(
            time=recording.time[keep] - origin,
            q=recording.q[keep],
            efforts=recording.efforts[keep],
            wrenches={name: series[keep] for name, series in recording.wrenches.items()},
            events={topic: t - origin for topic, t in recording.events.items()},
        ),
        scenario,
    )


def read_recording(bag: Path, model: WholeBodyModel, *, namespace: str = "") -> RunRecording:
    """Read a run's rosbag2 (MCAP) and align base poses, joints and wrenches in time."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    prefix = namespace.rstrip("/") if namespace else ""
    sensors = {f"{prefix}/ft/{sensor.name}": sensor.name for sensor in model.config.ft_sensors}
    wanted = {f"{prefix}/joint_states", f"{prefix}/ground_truth/odom", *sensors}
    events: dict[str, float] = {}
    joint_samples: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    base_samples: dict[int, np.ndarray] = {}
    wrench_samples: dict[str, list[tuple[int, np.ndarray]]] = {
        name: [] for name in sensors.values()
    }
    order = None
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED)) as reader:
        event_topics = {
            c.topic: c.topic[len(prefix) + 1 :]
            for c in reader.connections
            if c.topic == f"{prefix}/apply_wrench" or c.topic.startswith(f"{prefix}/targets/")
        }
        wanted |= set(event_topics)
        connections = [c for c in reader.connections if c.topic in wanted]
        # rosbags reads every connection for an empty list (a launch that failed early).
        messages = reader.messages(connections=connections) if connections else ()
        for connection, _, raw in messages:
            message = reader.deserialize(raw, connection.msgtype)
            stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
            if connection.topic in event_topics:
                events.setdefault(event_topics[connection.topic], stamp * 1e-9)
            elif connection.topic.endswith("/joint_states"):
                if order is None:
                    order = np.array([model.joint_index(name) for name in message.name])
                position = np.empty(model.ndof)
                effort = np.zeros(model.ndof)
                position[order] = message.position
                if len(message.effort):
                    effort[order] = message.effort
                joint_samples[stamp] = (position, effort)
            elif connection.topic.endswith("/ground_truth/odom"):
                p, o = message.pose.pose.position, message.pose.pose.orientation
                base_samples[stamp] = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
            else:
                f, t = message.wrench.force, message.wrench.torque
                wrench_samples[sensors[connection.topic]].append(
                    (stamp, np.array([f.x, f.y, f.z, t.x, t.y, t.z]))
                )
    stamps = sorted(set(joint_samples) & set(base_samples))
    if not stamps:
        raise ValueError(f"{bag}: no joint_states and ground_truth/odom with matching stamps")
    time = np.array(stamps) * 1e-9
    q = np.array([np.concatenate([base_samples[s], joint_samples[s][0]]) for s in stamps])
    efforts = np.array([joint_samples[s][1] for s in stamps])
    wrenches = {}
    for name, samples in wrench_samples.items():
        series = np.full((len(stamps), 6), np.nan)
        if samples:
            sample_times = np.array([s for s, _ in samples])
            values = np.array([w for _, w in samples])
            index = np.searchsorted(sample_times, stamps, side="right") - 1
            valid = index >= 0
            series[valid] = values[index[valid]]
        wrenches[name] = series
    return RunRecording(time, q, efforts, wrenches, events)


@dataclass
class RunTiming:
    """Wall-clock phases of a run [s], from the launch's start and end and the recorded clock.

    Attributes:
        start: From the launch's start to the robot's first step (the last ``/clock`` sample
            before robot time advanced): processes starting, models loading, discovery.
        running: From there to the last ``/clock`` sample.
        simulated: Robot time over ``running`` [s].
        stop: From the last ``/clock`` sample to the launch's end (the processes' shutdown).
    """

    start: float
    running: float
    simulated: float
    stop: float

    @property
    def pace(self) -> float:
        """Robot seconds per wall second while the robot ran."""
        return self.simulated / self.running if self.running > 0.0 else float("nan")


def read_clock_span(bag: Path) -> ClockSpan | None:
    """The ``/clock`` span the recorder wrote in ``bag``'s metadata (None if there is none).

    Raises:
        ValueError: ``metadata.yaml``'s ``custom_data`` holds a malformed span (names the file).
    """
    path = Path(bag) / "metadata.yaml"
    metadata = yaml.safe_load(path.read_text()) or {}
    custom = (metadata.get("rosbag2_bagfile_information") or {}).get("custom_data")
    try:
        return ClockSpan.from_custom_data(custom)
    except ValueError as error:
        raise ValueError(f"{path}: custom_data: {error}") from None


def run_timing(span: ClockSpan | None, launched_ns: int, ended_ns: int) -> RunTiming | None:
    """The run's phases (:class:`RunTiming`) from the span and the launch's start and end.

    ``launched_ns``, ``ended_ns``: the system clock (``time.time_ns``, the clock of the
    middleware's receive times) when the launch started and ended [ns]. None when the robot's
    time never advanced in the recording.
    """
    if span is None or span.running_wall is None:
        return None
    return RunTiming(
        start=(span.start[0] - launched_ns) * 1e-9,
        running=span.running_wall,
        simulated=span.running_simulated,
        stop=(ended_ns - span.last[0]) * 1e-9,
    )


@dataclass
class RunReport:
    """The figures of a demo run."""

    duration: float
    wall_time: float
    com_error_rms: float
    com_error_max: float
    hand_error_rms: float
    hand_error_max: float
    zmp_margin_min: float
    zmp_margin_push: float
    push_impulse: float
    com_excursion_after_push: float
    feet_displacement: float
    base_height_drop: float
    stayed_up: bool
    series: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    timing: RunTiming | None = None

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.duration / self.wall_time if self.wall_time > 0 else float("nan")

    def text(self, scenario: DemoScenario) -> str:
        """The printed report."""
        verdict = "stayed up" if self.stayed_up else "FELL or moved its feet"
        timing = self.timing
        pace = (
            []
            if timing is None
            else [
                f"pace               {timing.pace:.2f}x real time while the robot ran "
                f"({timing.simulated:.2f} s simulated in {timing.running:.2f} s); processes' "
                f"start {timing.start:.1f} s, stop {timing.stop:.1f} s"
            ]
        )
        return "\n".join(
            [
                f"duration           {self.duration:.2f} s simulated in {self.wall_time:.1f} s "
                f"(real-time factor {self.real_time_factor:.2f}, the processes' start included)",
                *pace,
                f"CoM tracking       RMS {1e3 * self.com_error_rms:.1f} mm, max "
                f"{1e3 * self.com_error_max:.1f} mm (horizontal, before the push)",
                f"hand tracking      RMS {1e3 * self.hand_error_rms:.1f} mm, max "
                f"{1e3 * self.hand_error_max:.1f} mm ({scenario.hand_task}: "
                f"{1e3 * np.asarray(scenario.hand_offset)} mm over {scenario.hand_duration} s)",
                f"ZMP margin         min {1e3 * self.zmp_margin_min:.1f} mm inside the support "
                f"polygon (after {SETTLING_TIME} s), {1e3 * self.zmp_margin_push:.1f} mm during "
                "the push",
                f"push               {self.push_impulse:.2f} N s on {scenario.push_frame} at "
                f"t = {scenario.push_time:.2f} s; CoM moved "
                f"{1e3 * self.com_excursion_after_push:.1f} mm",
                f"outcome            {verdict} (feet moved {1e3 * self.feet_displacement:.2f} mm, "
                f"base height change {1e3 * self.base_height_drop:.1f} mm)",
            ]
        )


def analyze(
    recording: RunRecording,
    model: WholeBodyModel,
    scenario: DemoScenario,
    *,
    wall_time: float,
    simulated: float | None = None,
    timing: RunTiming | None = None,
) -> RunReport:
    """Compute the report's figures (see the module docstring).

    ``simulated``: the run's simulated duration [s] for the real-time factor (default: the
    recording's span). ``timing``: the run's phases, reported as given (:func:`run_timing`).
    """
    sensors = FootForceSensors(model)
    options = MarkerOptions()
    soles = [sole.frame for sole in model.config.soles]
    n = len(recording.time)
    com = np.empty((n, 3))
    cop = np.full((n, 3), np.nan)
    margin = np.full(n, np.nan)
    hand = np.empty((n, 3))
    for i in range(n):
        q = recording.q[i]
        readings = {
            name: series[i]
            for name, series in recording.wrenches.items()
            if np.all(np.isfinite(series[i]))
        }
        scene = marker_scene(sensors, q, readings, options)
        com[i] = scene.com
        hand[i] = model.frame_placement(q, scenario.hand_frame).translation
        if scene.cop is not None and len(scene.support_polygon) >= 3:
            cop[i] = scene.cop
            margin[i] = polygon_margin(scene.cop, scene.support_polygon)
    t = recording.time
    first, last = recording.q[0], recording.q[-1]
    feet_start = np.array([model.frame_placement(first, f).translation for f in soles])
    feet_end = np.array([model.frame_placement(last, f).translation for f in soles])
    feet_displacement = float(np.linalg.norm(feet_end - feet_start, axis=1).max())
    # The controller's default CoM reference: above the centre of the soles' rectangles.
    sole_centers = [
        model.frame_placement(first, sole.frame).act(np.array([*sole.center, 0.0]))
        for sole in model.config.soles
    ]
    com_reference = np.mean(sole_centers, axis=0)[:2]
    standing = (t >= 1.0) & (t < scenario.push_time)
    com_error = np.linalg.norm(com[:, :2] - com_reference, axis=1)
    start_index = int(np.searchsorted(t, scenario.hand_start))
    hand_reference = np.array([scenario.hand_reference(hand[start_index], time) for time in t])
    moving = (t >= scenario.hand_start) & (t < scenario.push_time)
    hand_error = np.linalg.norm(hand - hand_reference, axis=1)
    push = (t >= scenario.push_time) & (t < scenario.push_time + 1.0)
    before_push = com[(t >= scenario.push_time - 0.5) & (t < scenario.push_time)]
    excursion = (
        float(np.linalg.norm(com[push, :2] - before_push[:, :2].mean(axis=0), axis=1).max())
        if push.any() and len(before_push)
        else float("nan")
    )
    base_drop = float(last[2] - first[2])
    settled = t >= t[0] + SETTLING_TIME
    valid_margin = margin[settled & np.isfinite(margin)]
    push_margin = margin[push & np.isfinite(margin)]
    stayed_up = feet_displacement < 0.01 and base_drop > -0.05
    return RunReport(
        duration=float(t[-1] - t[0]) if simulated is None else simulated,
        wall_time=wall_time,
        com_error_rms=float(np.sqrt(np.mean(com_error[standing] ** 2))) if standing.any() else 0.0,
        com_error_max=float(com_error[standing].max()) if standing.any() else 0.0,
        hand_error_rms=float(np.sqrt(np.mean(hand_error[moving] ** 2))) if moving.any() else 0.0,
        hand_error_max=float(hand_error[moving].max()) if moving.any() else 0.0,
        zmp_margin_min=float(valid_margin.min()) if len(valid_margin) else float("nan"),
        zmp_margin_push=float(push_margin.min()) if len(push_margin) else float("nan"),
        push_impulse=float(np.linalg.norm(scenario.push_impulse)),
        com_excursion_after_push=excursion,
        feet_displacement=feet_displacement,
        base_height_drop=base_drop,
        stayed_up=stayed_up,
        timing=timing,
        series={
            "time": t,
            "com": com,
            "cop": cop,
            "hand": hand,
            "hand_reference": hand_reference,
            "efforts": recording.efforts,
            "support_polygon": _initial_polygon(model, first),
        },
    )


def _initial_polygon(model: WholeBodyModel, q: np.ndarray) -> np.ndarray:
    corners = [
        model.frame_placement(q, sole.frame).act(corner)
        for sole in model.config.soles
        for corner in sole.corners()
    ]
    return convex_hull_2d(corners)


def write_plots(
    report: RunReport, model: WholeBodyModel, scenario: DemoScenario, directory: Path
) -> list[Path]:
    """PNG plots: CoM and ZMP over the support polygon, hand tracking, joint torques."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    series = report.series
    t = series["time"]
    paths = []

    figure, axes = plt.subplots(figsize=(6, 6))
    polygon = np.vstack([series["support_polygon"], series["support_polygon"][:1]])
    axes.fill(polygon[:, 0], polygon[:, 1], color="0.9", label="support polygon (start)")
    axes.plot(polygon[:, 0], polygon[:, 1], color="0.5")
    axes.plot(series["cop"][:, 0], series["cop"][:, 1], ".", ms=1.5, color="tab:red", label="ZMP")
    axes.plot(series["com"][:, 0], series["com"][:, 1], color="tab:blue", label="CoM (ground)")
    axes.set_xlabel("x [m]")
    axes.set_ylabel("y [m]")
    axes.set_aspect("equal")
    axes.set_title("CoM and ZMP seen from above")
    axes.legend(loc="best")
    paths.append(directory / "com_zmp_top_view.png")
    figure.savefig(paths[-1], dpi=120, bbox_inches="tight")
    plt.close(figure)

    figure, axes = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    for k, label in enumerate("xyz"):
        axes[k].plot(t, series["hand_reference"][:, k], "--", color="k", label="reference")
        axes[k].plot(t, series["hand"][:, k], color="tab:green", label="measured")
        axes[k].axvline(scenario.push_time, color="tab:red", lw=0.8)
        axes[k].set_ylabel(f"{label} [m]")
    axes[0].legend(loc="best")
    axes[0].set_title(f"{scenario.hand_frame} position (push at the red line)")
    axes[-1].set_xlabel("time [s]")
    paths.append(directory / "hand_tracking.png")
    figure.savefig(paths[-1], dpi=120, bbox_inches="tight")
    plt.close(figure)

    figure, axes = plt.subplots(figsize=(9, 5))
    for j, name in enumerate(model.joint_names):
        if "leg" in name or "hip" in name or "knee" in name or "ankle" in name:
            axes.plot(t, series["efforts"][:, j], lw=0.8, label=name)
    axes.axvline(scenario.push_time, color="tab:red", lw=0.8)
    axes.set_xlabel("time [s]")
    axes.set_ylabel("measured torque [N m]")
    axes.set_title("leg joint torques")
    axes.legend(loc="upper left", fontsize=6, ncol=2)
    paths.append(directory / "joint_torques.png")
    figure.savefig(paths[-1], dpi=120, bbox_inches="tight")
    plt.close(figure)
    return paths
