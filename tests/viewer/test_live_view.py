"""The viewer's live state (LiveView) and the panel's texts, on a real page server, no browser.

A :class:`BrowserViewer` serves iCub (only the feet's visuals: loading every mesh takes seconds
and nothing here looks at them) on a free port; what the page would show is read from its
scene and GUI handles. References: Pinocchio's kinematics of the same model, closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from wbm_bringup.viewer.app import BrowserViewer, ViewerCallbacks, goal_pose
from wbm_bringup.viewer.live_view import LiveView
from wbm_bringup.viewer.markers_view import MarkerAction, MarkerItem, MarkerType
from wbm_bringup.viewer.settings import ViewerSettings
from wbm_bringup.viewer.status import service_text, status_text
from wbm_bringup.viewer.urdf_visuals import load_visuals
from wbm_description.exceptions import InputError


@pytest.fixture()
def live(icub):
    visuals = load_visuals(icub.urdf_text, icub.urdf_path, links={"l_foot", "r_foot"})
    viewer = BrowserViewer(icub, visuals, ViewerSettings(port=0), ViewerCallbacks())
    try:
        yield LiveView(viewer, plot_period=0.2)
    finally:
        viewer.close()


def standing(icub, rng) -> np.ndarray:
    q = icub.initial_configuration()
    q[7:] += rng.uniform(-0.1, 0.1, icub.ndof)
    q[:3] += [0.3, -0.2, 0.0]
    q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.0, 0.0, 0.7)).coeffs()
    return q


def test_configuration_from_joints_by_index_and_base(live, icub, rng):
    q = standing(icub, rng)
    assert live.configuration() is None
    assert live.robot_state() == "waiting for joint_states and 'ground_truth/odom'"
    order = rng.permutation(icub.ndof)  # the message names the joints in any order
    live.set_joint_positions(order, q[7:][order])
    assert live.robot_state() == "waiting for 'ground_truth/odom'"
    live.set_base(q[:7])
    np.testing.assert_array_equal(live.configuration(), q)
    assert live.robot_state() == "live"
    with pytest.raises(InputError, match="position"):
        live.set_joint_positions(order[1:], q[7:][order][1:])  # a joint missing
    with pytest.raises(InputError, match="position"):
        live.set_joint_positions(order, np.full(icub.ndof, np.nan))
    with pytest.raises(InputError, match="position"):
        live.set_joint_positions(order, None)  # a JointState without positions


def test_refresh_moves_the_links_and_snaps_the_targets_while_still(live, icub, rng):
    q = standing(icub, rng)
    live.set_joint_positions(np.arange(icub.ndof), q[7:])
    live.set_base(q[:7])
    assert live.refresh(100.0) == []
    robot = live.viewer.robot
    for link in ("l_foot", "r_foot"):  # where Pinocchio puts the link frames (1e-12 m)
        expected = icub.frame_placement(q, link).translation
        np.testing.assert_allclose(robot.link_frames[link].position, expected, atol=1e-12)
    # "Targets to robot" clicked while the state does not change: the next tick snaps.
    live.viewer.request_snap()
    live.refresh(100.01)
    hand = icub.frame_placement(q, "l_hand")
    np.testing.assert_allclose(live.viewer.targets["left_hand"].position, hand.translation)
    np.testing.assert_allclose(live.viewer.com_target.position, icub.com_position(q), atol=1e-12)
    assert not live.viewer.take_snap_request()


def test_markers_in_robot_frames_are_placed_in_the_world(live, icub, rng):
    q = standing(icub, rng)
    live.set_joint_positions(np.arange(icub.ndof), q[7:])
    live.set_base(q[:7])
    live.refresh(0.0)
    local = pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, 0.3), np.array([0.1, -0.02, 0.03]))
    x, y, z, w = pin.Quaternion(local.rotation).coeffs()
    item = MarkerItem(
        "markers", "probe", 7, MarkerAction.ADD, MarkerType.CUBE,
        local.translation, np.array([w, x, y, z]), np.array([0.1, 0.2, 0.3]),
    )  # fmt: skip
    world_item = MarkerItem(
        "markers",
        "world",
        1,
        MarkerAction.ADD,
        MarkerType.SPHERE,
        np.array([1.0, 2.0, 3.0]),
        np.zeros(4),
        np.full(3, 0.1),
    )  # fmt: skip  (a zero quaternion: a default-constructed pose, the identity)
    assert live.add_markers([("l_sole", item), ("world", world_item)]) == []
    shown = live.viewer.markers.items[("markers", "probe", 7)]
    expected = icub.frame_placement(q, "l_sole") * local  # Pinocchio's composition
    np.testing.assert_allclose(shown.position, expected.translation, atol=1e-12)
    w, x, y, z = shown.wxyz
    rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
    np.testing.assert_allclose(rotation, expected.rotation, atol=1e-12)
    world = live.viewer.markers.items[("markers", "world", 1)]
    np.testing.assert_array_equal(world.position, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(world.wxyz, [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(InputError, match="header.frame_id"):
        live.add_markers([("no_such_frame", item)])
    bad = MarkerItem("markers", "bad", 0, MarkerAction.ADD, MarkerType.SPHERE, np.full(3, np.nan))
    with pytest.raises(InputError, match="finite"):
        live.add_markers([("world", bad)])


def test_support_polygon_for_the_top_view_is_the_marker_placed(live):
    square = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.1, 0.05, 0.0], [0.0, 0.05, 0.0]])
    yaw = pin.rpy.rpyToMatrix(0.0, 0.0, math.pi / 2)
    x, y, z, w = pin.Quaternion(yaw).coeffs()
    item = MarkerItem(
        "markers", "support_polygon", 0, MarkerAction.ADD, MarkerType.LINE_STRIP,
        np.array([1.0, 2.0, 0.0]), np.array([w, x, y, z]), np.full(3, 0.01),
        points=square,
    )  # fmt: skip
    live.add_markers([("world", item)])
    expected = (square @ yaw.T + [1.0, 2.0, 0.0])[:, :2]  # rotated a quarter turn, moved
    np.testing.assert_allclose(live.viewer.markers.support_polygon(), expected, atol=1e-12)


def test_diagnostics_of_the_controller_feed_the_status_and_the_plots(live):
    from diagnostic_msgs.msg import DiagnosticStatus

    from wbm_control.controller_status import ControllerStatus
    from wbm_control.ros.messages import diagnostics_message

    # The controller's own message (the key names come from its producer), converted as the
    # node converts it, after an entry of another node that must be skipped.
    for i in range(5):
        status = ControllerStatus(
            mode="torque",
            safe=i == 4,
            reason="inputs stale for 0.2 s",
            task_errors={"com": 0.01 * i, "left_hand": 0.02},
            com=np.array([0.01 * i, 0.0, 0.5]),
            zmp_measured=np.array([0.02, -0.01 * i, 0.0]),
        )
        message = diagnostics_message(status, 1.0 + 0.1 * i)
        message.status.insert(0, DiagnosticStatus(name="other", message="ok"))
        entries = [({kv.key: kv.value for kv in s.values}, s.message) for s in message.status]
        assert live.add_diagnostics(entries, 1.0 + 0.1 * i)
    assert live.status.mode == "torque" and live.status.safe_hold
    assert live.status.reason == "inputs stale for 0.2 s"
    times, (com_error, hand_error) = live.viewer.errors.arrays(["com", "left_hand"])
    np.testing.assert_allclose(times, 1.0 + 0.1 * np.arange(5))
    np.testing.assert_allclose(com_error, 0.01 * np.arange(5))  # 6 significant digits sent
    np.testing.assert_allclose(hand_error, 0.02)
    _, (cx, zy) = live.viewer.com_trace.arrays(["com_x", "zmp_y"])
    np.testing.assert_allclose(cx, 0.01 * np.arange(5))
    np.testing.assert_allclose(zy, -0.01 * np.arange(5))
    assert not live.add_diagnostics([({"level": "0"}, "a node without a mode")], 2.0)
    live.refresh(10.0)
    text = live.viewer.status_markdown.content
    assert "controller mode: **torque**" in text
    assert "safe hold: **yes**, inputs stale for 0.2 s" in text
    names = [s["label"] for s in live.viewer.error_plot.series[1:]]
    assert names == ["com", "left_hand"]
    np.testing.assert_allclose(live.viewer.error_plot.data[0], 1.0 + 0.1 * np.arange(5))


def test_real_time_factor_from_the_clock_on_the_panel(live):
    for i in range(41):  # 0.05 s of wall time per sample, 0.025 s of simulated time: 0.5
        live.add_clock(3.0 + 0.025 * i, 50.0 + 0.05 * i)
    live.refresh(52.0)
    assert "real-time factor: 0.50" in live.viewer.status_markdown.content
    assert "sim time: 4.00 s" in live.viewer.status_markdown.content
    live.refresh(60.0)  # the clock stopped longer than the window: paused
    assert "real-time factor: 0.00" in live.viewer.status_markdown.content


def test_status_and_service_texts():
    assert status_text(None, None, None, "live") == (
        "robot state: live  \ncontroller: no `diagnostics` yet  \nreal-time factor: n/a"
    )
    assert service_text("reset", True, "reset to the initial state") == (
        "`reset` done: reset to the initial state"
    )
    assert service_text("pause", False, "already paused") == "`pause` refused: already paused"
    assert service_text("resume", None, "no robot interface offers it") == (
        "`resume`: no robot interface offers it"
    )


def test_goal_pose_turns_the_x_axis_by_the_yaw():
    position, (w, x, y, z) = goal_pose(0.8, -0.2, math.radians(30.0))
    np.testing.assert_array_equal(position, [0.8, -0.2, 0.0])
    rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
    # Closed form: the goal's x axis points at 30 degrees in the ground plane (1e-15).
    np.testing.assert_allclose(
        rotation[:, 0], [math.cos(math.radians(30)), math.sin(math.radians(30)), 0], atol=1e-15
    )
    np.testing.assert_allclose(rotation[:, 2], [0.0, 0.0, 1.0], atol=1e-15)


def test_stop_walking_sends_one_stop(icub):
    """Zeroing the sliders must not send (0, sideways, turning) and (0, 0, turning) first."""
    sent = []
    visuals = load_visuals(icub.urdf_text, icub.urdf_path, links=set())
    callbacks = ViewerCallbacks(on_cmd_vel=lambda *speeds: sent.append(speeds))
    viewer = BrowserViewer(icub, visuals, ViewerSettings(port=0), callbacks)
    try:
        viewer.walk_forward.value = 0.2  # a slider assigned calls its callback at once
        viewer.walk_sideways.value = -0.1
        viewer.walk_turning.value = 0.4
        assert sent == [(0.2, 0.0, 0.0), (0.2, -0.1, 0.0), (0.2, -0.1, 0.4)]
        viewer.stop_walking()
        assert sent[3:] == [(0.0, 0.0, 0.0)]
        assert (viewer.walk_forward.value, viewer.walk_turning.value) == (0.0, 0.0)
    finally:
        viewer.close()
