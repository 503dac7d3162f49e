"""The walking topics' message converters: conventions and rejections (no node, no robot run)."""

import math

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Path
from visualization_msgs.msg import Marker

from wbm_control.ros.walking_messages import (
    footsteps_from_path,
    goal_from_pose,
    velocity_from_twist,
    walking_markers,
    walking_values,
)
from wbm_control.walking import WalkingController, WalkingGeometry
from wbm_description.exceptions import InputError

SOLES = {"left": "l_sole", "right": "r_sole"}


def pose(x, y, yaw, frame=""):
    message = PoseStamped()
    message.header.frame_id = frame
    message.pose.position.x, message.pose.position.y = x, y
    message.pose.orientation.z, message.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return message


def path(*poses, frame="world"):
    message = Path()
    message.header.frame_id = frame
    message.poses = list(poses)
    return message


def test_twist_and_goal_conversions_and_rejections():
    twist = Twist()
    twist.linear.x, twist.linear.y, twist.angular.z = 0.2, -0.05, 0.3
    assert velocity_from_twist(twist) == (0.2, -0.05, 0.3)
    twist.linear.x = math.nan
    with pytest.raises(InputError, match="cmd_vel"):
        velocity_from_twist(twist)
    x, y, yaw = goal_from_pose(pose(1.0, 2.0, 0.7, "world"), "world")
    assert (x, y) == (1.0, 2.0) and yaw == pytest.approx(0.7, abs=1e-12)
    assert goal_from_pose(pose(1.0, 2.0, -2.0), "world")[2] == pytest.approx(-2.0, abs=1e-12)
    with pytest.raises(InputError, match="frame_id"):
        goal_from_pose(pose(1.0, 2.0, 0.0, "map"), "world")
    with pytest.raises(InputError, match="finite"):
        goal_from_pose(pose(math.inf, 2.0, 0.0), "world")


def test_a_path_names_its_feet_or_alternates_from_the_next_swing_foot():
    named = footsteps_from_path(
        path(pose(0.1, -0.07, 0.0, "r_sole"), pose(0.2, 0.07, 0.1, "left")), "world", SOLES
    )
    assert [(s.side, s.x, s.y) for s in named] == [("right", 0.1, -0.07), ("left", 0.2, 0.07)]
    assert named[1].yaw == pytest.approx(0.1, abs=1e-12)
    alternating = footsteps_from_path(
        path(pose(0.1, 0.07, 0), pose(0.2, -0.07, 0), pose(0.3, 0.07, 0)), "world", SOLES, "left"
    )
    assert [s.side for s in alternating] == ["left", "right", "left"]
    for bad, match in (
        (path(pose(0.1, 0.07, 0), frame="map"), "frame_id"),
        (path(), "at least one"),
        (path(pose(0.1, 0.07, 0, "left"), pose(0.2, -0.07, 0)), "every pose"),
        (path(pose(0.1, 0.07, 0, "hand")), "one of"),
        (path(pose(math.nan, 0.07, 0)), "finite"),
    ):
        with pytest.raises(InputError, match=match):
            footsteps_from_path(bad, "world", SOLES)


def test_markers_show_the_remaining_footsteps_and_the_planned_lines(icub):
    walking = WalkingController(WalkingGeometry.from_model(icub))
    assert walking_values(None, None) == {"walking/phase": "inactive"}
    walking.set_velocity_command(0.2, 0.0, 0.0)
    com = icub.com_position(icub.initial_configuration())
    references = walking.update(0.0, com, np.zeros(3))
    markers = walking_markers(walking, references, "world", 1.0).markers
    assert markers[0].action == Marker.DELETEALL
    cubes = [m for m in markers if m.type == Marker.CUBE]
    assert len(cubes) == len(walking.state_machine.footsteps) > 0
    first = walking.state_machine.footsteps[0]
    center = walking.geometry.feet.center(first)
    assert (cubes[0].pose.position.x, cubes[0].pose.position.y) == pytest.approx(tuple(center))
    assert cubes[0].scale.x == pytest.approx(walking.geometry.feet.sole(first.side).length)
    strips = {m.ns: m for m in markers if m.type == Marker.LINE_STRIP}
    assert set(strips) == {"planned_com", "planned_zmp", "planned_dcm"}
    start = walking.plan.sample(0.0)
    assert strips["planned_zmp"].points[0].x == pytest.approx(start.zmp[0])
    values = walking_values(walking, references)
    assert values["walking/phase"] == "double_support"
    assert values["walking/command"] == "0.2 0 0"
    assert values["walking/next_footstep"].startswith(first.side)


def test_before_walking_the_markers_only_clear():
    markers = walking_markers(None, None, "world", 2.5).markers
    assert len(markers) == 1 and markers[0].action == markers[0].DELETEALL
    assert markers[0].header.frame_id == "world" and markers[0].header.stamp.sec == 2
    assert markers[0].header.stamp.nanosec == 500_000_000
