"""The demo report's analysis on recordings whose answers are known in closed form."""

from __future__ import annotations

import numpy as np
import pytest

from wbm_bringup.demo.report import RunRecording, analyze
from wbm_bringup.demo.scenario import DemoScenario
from wbm_description import ConfigError, WholeBodyModel


def still_recording(model: WholeBodyModel, duration: float = 6.0, dt: float = 0.01):
    """A robot standing perfectly still, with the F/T readings of its static contact wrenches."""
    q = model.initial_configuration()
    n = int(round(duration / dt)) + 1
    feet = [sole.frame for sole in model.config.soles]
    _, ground = model.static_contact_torques(q, feet)
    # Sensor reading = ground wrench on the foot + the foot's weight, moved to the sensor frame,
    # child-on-parent (robot_io's convention): build it with the model, independently of the
    # report's inverse computation.
    from wbm_description.ft_ground_reaction import FootForceSensors

    sensors = FootForceSensors(model)
    wrenches = {}
    for sensor in model.config.ft_sensors:
        sole = [s for s in model.config.soles if s.name in sensors.sensor(sensor.name).sole_names]
        wrench_world_at_sole = ground[sole[0].frame]
        sole_origin = model.frame_placement(q, sole[0].frame).translation
        f = wrench_world_at_sole[:3]
        torque_world = wrench_world_at_sole[3:] + np.cross(sole_origin, f)
        mass, com = sensors.child_side_inertia(q, sensor.name)
        gravity = mass * np.array([0.0, 0.0, -9.81])
        total = np.concatenate([f + gravity, torque_world + np.cross(com, gravity)])
        placement = model.frame_placement(q, sensor.frame)
        import pinocchio as pin

        local = placement.actInv(pin.Force(total)).vector
        wrenches[sensor.name] = np.tile(local, (n, 1))
    return RunRecording(
        time=np.arange(n) * dt,
        q=np.tile(q, (n, 1)),
        efforts=np.zeros((n, model.ndof)),
        wrenches=wrenches,
    )


def test_still_robot_report(icub: WholeBodyModel):
    scenario = DemoScenario(end_time=6.0)
    recording = still_recording(icub)
    report = analyze(recording, icub, scenario, wall_time=3.0)
    assert report.real_time_factor == pytest.approx(2.0)
    assert report.stayed_up and report.feet_displacement == 0.0
    # The hand does not move: the error grows to the full offset, |(30, 30, 0)| mm.
    assert report.hand_error_max == pytest.approx(np.hypot(0.03, 0.03), abs=1e-9)
    # The ZMP of static contact wrenches is under the CoM (independent: moment balance).
    com = icub.com_position(recording.q[0])
    cop = report.series["cop"][0]
    np.testing.assert_allclose(cop[:2], com[:2], atol=1e-9)
    assert report.zmp_margin_min > 0.0
    # The CoM error is its distance to the middle of the soles' rectangles (centred 2 cm ahead of
    # the sole frames, which are side by side at the same x up to the URDF's 3e-5 rad tilt).
    feet = np.array(
        [icub.frame_placement(recording.q[0], s.frame).translation for s in icub.config.soles]
    )
    middle = feet.mean(axis=0)[:2] + np.array([0.02, 0.0])
    assert report.com_error_max == pytest.approx(np.linalg.norm(com[:2] - middle), abs=1e-6)


def test_scenario_validation():
    with pytest.raises(ConfigError, match="push_time"):
        DemoScenario(push_time=1.0)
    with pytest.raises(ConfigError, match="hand_duration"):
        DemoScenario(hand_duration=0.0)
    scenario = DemoScenario()
    np.testing.assert_allclose(scenario.push_impulse, [4.0, 0.0, 0.0])
    start = np.zeros(3)
    np.testing.assert_allclose(scenario.hand_reference(start, 0.0), 0.0)
    np.testing.assert_allclose(scenario.hand_reference(start, 2.5), [0.03, 0.03, 0.0])
    # Quintic: half way in time is half way in space.
    np.testing.assert_allclose(scenario.hand_reference(start, 1.5), [0.015, 0.015, 0.0])


def test_scenario_times_come_from_the_recorded_target_and_push(icub: WholeBodyModel, tmp_path):
    """A scenario node that started 0.23 s late sent the target at 0.73 s and the push at
    4.23 s (robot time): the report counts its windows from the scenario's start, read back
    from a bag."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    from wbm_bringup.demo.report import aligned, read_recording

    store = get_typestore(Stores.ROS2_KILTED)
    types = store.types
    Time, Header = types["builtin_interfaces/msg/Time"], types["std_msgs/msg/Header"]

    def header(t: float):
        seconds = int(t)
        return Header(stamp=Time(sec=seconds, nanosec=round((t - seconds) * 1e9)), frame_id="")

    vector3, point = types["geometry_msgs/msg/Vector3"], types["geometry_msgs/msg/Point"]
    quaternion = types["geometry_msgs/msg/Quaternion"]
    q = icub.initial_configuration()
    bag = tmp_path / "bag"
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        kinds = {
            "/joint_states": "sensor_msgs/msg/JointState",
            "/ground_truth/odom": "nav_msgs/msg/Odometry",
            "/targets/left_hand": "geometry_msgs/msg/PoseStamped",
            "/apply_wrench": "geometry_msgs/msg/WrenchStamped",
        }
        connections = {
            topic: writer.add_connection(topic, kind, typestore=store)
            for topic, kind in kinds.items()
        }

        def write(topic: str, t: float, message) -> None:
            data = store.serialize_cdr(message, kinds[topic])
            writer.write(connections[topic], round(t * 1e9), data)

        pose_type = types["geometry_msgs/msg/Pose"]
        base = pose_type(
            position=point(x=float(q[0]), y=float(q[1]), z=float(q[2])),
            orientation=quaternion(x=float(q[3]), y=float(q[4]), z=float(q[5]), w=float(q[6])),
        )
        for t in (0.0, 0.5, 1.0):
            write(
                "/joint_states",
                t,
                types["sensor_msgs/msg/JointState"](
                    header=header(t),
                    name=list(icub.joint_names),
                    position=np.array(q[7:]),
                    velocity=np.array([], dtype=float),
                    effort=np.array([], dtype=float),
                ),
            )
            covariance = np.zeros(36)
            twist = types["geometry_msgs/msg/Twist"](
                linear=vector3(x=0.0, y=0.0, z=0.0), angular=vector3(x=0.0, y=0.0, z=0.0)
            )
            write(
                "/ground_truth/odom",
                t,
                types["nav_msgs/msg/Odometry"](
                    header=header(t),
                    child_frame_id="root_link",
                    pose=types["geometry_msgs/msg/PoseWithCovariance"](
                        pose=base, covariance=covariance
                    ),
                    twist=types["geometry_msgs/msg/TwistWithCovariance"](
                        twist=twist, covariance=covariance
                    ),
                ),
            )
        write(
            "/targets/left_hand",
            0.73,
            types["geometry_msgs/msg/PoseStamped"](header=header(0.73), pose=base),
        )
        write(
            "/apply_wrench",
            4.23,
            types["geometry_msgs/msg/WrenchStamped"](
                header=header(4.23),
                wrench=types["geometry_msgs/msg/Wrench"](
                    force=vector3(x=40.0, y=0.0, z=0.0), torque=vector3(x=0.0, y=0.0, z=0.0)
                ),
            ),
        )
    recording = read_recording(bag, icub)
    assert recording.events == pytest.approx({"targets/left_hand": 0.73, "apply_wrench": 4.23})
    np.testing.assert_allclose(recording.time, [0.0, 0.5, 1.0])
    started, scenario = aligned(recording, DemoScenario())
    # The scenario started at 0.73 - 0.5 = 0.23 s: the samples from there, counted from there;
    # exact up to the nanosecond stamps' rounding.
    np.testing.assert_allclose(started.time, [0.27, 0.77], atol=1e-9)
    np.testing.assert_array_equal(started.q, recording.q[1:])
    assert scenario.hand_start == 0.5
    assert scenario.push_time == pytest.approx(4.0, abs=1e-9)
    assert started.events["apply_wrench"] == pytest.approx(4.0, abs=1e-9)
    # Nothing recorded: the recording and the scenario as they were.
    bare = RunRecording(recording.time, recording.q, recording.efforts)
    assert aligned(bare, DemoScenario()) == (bare, DemoScenario())


def test_run_timing_splits_the_launch_into_start_running_and_stop(icub: WholeBodyModel):
    """The phases from a span whose samples are known: launched at 10 s, the robot's last
    initial-state sample at 14.5 s, the last clock at 20.5 s (8 s of robot time), ended at 22 s
    (system clock)."""
    from wbm_bringup.clock_span import ClockSpan
    from wbm_bringup.demo.report import run_timing

    second = 1_000_000_000
    half = second // 2
    span = ClockSpan(
        first=(12 * second, 0),
        start=(14 * second + half, 0),
        last=(20 * second + half, 8 * second),
    )
    timing = run_timing(span, 10 * second, 22 * second)
    assert (timing.start, timing.running, timing.simulated, timing.stop) == pytest.approx(
        (4.5, 6.0, 8.0, 1.5), abs=1e-12
    )
    assert timing.pace == pytest.approx(8.0 / 6.0, abs=1e-12)
    assert run_timing(None, 0, 1) is None
    assert run_timing(ClockSpan(first=(0, 0), start=(0, 0), last=(5, 0)), 0, 10) is None
    scenario = DemoScenario(end_time=6.0)
    report = analyze(still_recording(icub), icub, scenario, wall_time=12.0, timing=timing)
    text = report.text(scenario)
    assert "1.33x real time while the robot ran (8.00 s simulated in 6.00 s)" in text
    assert "start 4.5 s, stop 1.5 s" in text


def test_a_recording_without_the_robots_topics_is_refused_by_name(icub: WholeBodyModel, tmp_path):
    """A launch that failed before the robot published leaves /rosout alone in the bag: the
    report says what is missing (rosbags reads every connection when given none: a /rosout Log
    was read as a robot message before)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    from wbm_bringup.demo.report import read_recording

    store = get_typestore(Stores.ROS2_KILTED)
    types = store.types
    bag = tmp_path / "bag"
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        kind = "rcl_interfaces/msg/Log"
        connection = writer.add_connection("/rosout", kind, typestore=store)
        log = types[kind](
            stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0),
            level=50,
            name="robot_interface",
            msg="cannot start",
            file="",
            function="",
            line=0,
        )
        writer.write(connection, 0, store.serialize_cdr(log, kind))
    with pytest.raises(ValueError, match="no joint_states and ground_truth/odom"):
        read_recording(bag, icub)
