"""The viewer's controls, status panel, plots and markers, used and read in real headless chromium.

The viewer runs as its own process; this test process is the rest of the ROS graph: it
subscribes to what the page's controls publish, offers the robot interface's services, and
publishes diagnostics, the clock and markers. The page is driven with real mouse and keyboard
events on its controls and read through its DOM and the hooks viser's client exposes for its
own end-to-end tests (:mod:`tests.viewer.viewer_page`), not through pixels, except for the top
view image, whose pixels are the plot.
"""

from __future__ import annotations

import math
import re
import shutil
import threading
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Point, PoseStamped, Twist
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker, MarkerArray

from tests.viewer.viewer_browser import CHROMIUM, HeadlessBrowser
from tests.viewer.viewer_helpers import spin_until
from tests.viewer.viewer_page import (
    click_button,
    enter_number,
    gui_image,
    number_in,
    open_folder,
    page_text,
    scene_names,
    scene_node,
    start_viewer,
    uplot_charts,
    wait_until_built,
)
from tests.viewer.viewer_projection import PinholeCamera
from wbm_control.controller_status import ControllerStatus
from wbm_control.ros.messages import diagnostics_message

pytestmark = [pytest.mark.process, pytest.mark.slow]

WIDTH, HEIGHT = 1280, 720
#: Colours of the top view (wbm_bringup.viewer.plots), RGB.
SUPPORT_COLOR, COM_COLOR, ZMP_COLOR = (40, 80, 220), (20, 170, 60), (220, 30, 30)


class Page:
    """A viewer node, a browser on its page, and the test node standing for the graph."""

    def __init__(self, rclpy_node, start_node):
        self.node = rclpy_node
        self.viewer, self.url, camera = start_viewer(start_node, rclpy_node, "robot:=icub")
        self.camera = PinholeCamera.parse(camera, WIDTH, HEIGHT)
        self.browser = HeadlessBrowser(WIDTH, HEIGHT)
        self.browser.open(self.url)
        wait_until_built(self.browser)
        self.diagnostics = rclpy_node.create_publisher(DiagnosticArray, "diagnostics", 10)
        self.markers = rclpy_node.create_publisher(MarkerArray, "markers", 10)
        self.walking_markers = rclpy_node.create_publisher(MarkerArray, "walking/markers", 10)
        publishers = (self.diagnostics, self.markers, self.walking_markers)
        assert spin_until(
            rclpy_node, lambda: all(p.get_subscription_count() >= 1 for p in publishers), 60.0
        )

    def receive(self, kind, topic: str) -> list:
        """Messages arriving on a topic from now on."""
        received = []
        self.node.create_subscription(kind, topic, received.append, 10)
        return received

    def wait_text(self, pattern: str, timeout: float = 60.0, *, present: bool = True) -> None:
        """Spin the test node (it serves and receives) until the page's text matches a regular
        expression (or, with ``present`` false, no longer does); the page is read every 0.3 s.
        """
        last_read = -math.inf

        def check() -> bool:
            nonlocal last_read
            if time.monotonic() - last_read < 0.3:
                return False
            last_read = time.monotonic()
            return (re.search(pattern, page_text(self.browser)) is not None) == present

        assert spin_until(self.node, check, timeout), (pattern, page_text(self.browser))

    def close(self) -> None:
        self.browser.close()


@pytest.fixture(scope="module")
def page(rclpy_node, start_node):
    assert shutil.which(CHROMIUM), "chromium missing: run bash tools/install_browser.sh"
    page = Page(rclpy_node, start_node)
    yield page
    page.close()


def quiet(page: Page, seconds: float = 1.0) -> None:
    """Spin a while, so that anything still on its way arrives."""
    spin_until(page.node, lambda: False, seconds)


def test_walking_speeds_reach_cmd_vel_and_stop_sends_one_zero(page):
    """Each typed speed sends a Twist with every slider's value; "Stop walking" sends one
    Twist of zeros (not the sliders zeroed one by one). Values arrive as typed: 1e-12."""
    received: list[Twist] = page.receive(Twist, "cmd_vel")
    browser = page.browser
    open_folder(browser, "Walking", "Forward [m/s]")
    typed = (
        ("Forward [m/s]", 0.12, (0.12, 0.0, 0.0)),
        ("Sideways [m/s]", -0.05, (0.12, -0.05, 0.0)),
        ("Turning [rad/s]", 0.3, (0.12, -0.05, 0.3)),
    )
    for label, value, speeds in typed:
        enter_number(browser, label, value, kind="slider_input")

        def arrived(speeds=speeds) -> bool:
            return bool(received) and np.allclose(
                [received[-1].linear.x, received[-1].linear.y, received[-1].angular.z],
                speeds,
                rtol=0.0,
                atol=1e-12,
            )

        assert spin_until(page.node, arrived, 60.0), (label, received[-1:])
    last = received[-1]
    assert (last.linear.z, last.angular.x, last.angular.y) == (0.0, 0.0, 0.0)
    quiet(page)
    before = len(received)
    click_button(browser, "Stop walking")
    assert spin_until(page.node, lambda: len(received) > before, 60.0), "no stop"
    quiet(page)
    stops = received[before:]
    assert len(stops) == 1, [(m.linear.x, m.linear.y, m.angular.z) for m in stops]
    stop = stops[0]
    assert (stop.linear.x, stop.linear.y, stop.angular.z) == (0.0, 0.0, 0.0)
    for label in ("Forward [m/s]", "Sideways [m/s]", "Turning [rad/s]"):
        browser.wait_for(
            f"{number_in(label, 'slider_input')} === 0", what=f"the {label} box back at 0"
        )


def test_goal_inputs_send_a_goal_pose_in_the_world(page):
    """Goal x, y and yaw typed, "Send goal": a PoseStamped in the world frame on the ground,
    its orientation the yaw about z (closed form, 1e-12)."""
    received: list[PoseStamped] = page.receive(PoseStamped, "goal_pose")
    browser = page.browser
    open_folder(browser, "Walking", "Forward [m/s]")
    enter_number(browser, "Goal x [m]", 0.8)
    enter_number(browser, "Goal y [m]", -0.2)
    enter_number(browser, "Goal yaw [deg]", 30.0)
    browser.wait_for(
        f"{number_in('Goal x [m]')} === 0.8 && {number_in('Goal y [m]')} === -0.2"
        f" && {number_in('Goal yaw [deg]')} === 30",
        what="the goal typed in its boxes",
    )
    click_button(browser, "Send goal")
    assert spin_until(page.node, lambda: len(received) >= 1, 60.0), "no goal_pose"
    goal = received[-1]
    assert goal.header.frame_id == "world"
    p, o = goal.pose.position, goal.pose.orientation
    np.testing.assert_allclose([p.x, p.y, p.z], [0.8, -0.2, 0.0], rtol=0.0, atol=1e-12)
    half = math.radians(30.0) / 2.0
    np.testing.assert_allclose(
        [o.w, o.x, o.y, o.z], [math.cos(half), 0.0, 0.0, math.sin(half)], rtol=0.0, atol=1e-12
    )


def test_a_click_on_the_ground_sends_the_goal_there(page):
    """ "Pick goal on the ground", then a click on the ground: the goal is where the camera
    ray through the clicked pixel meets z = 0 (the node's camera, our own inverse projection).

    Tolerance: the ground distance covered by one pixel around the click (the browser may
    round the event's coordinates to whole pixels).
    """
    received: list[PoseStamped] = page.receive(PoseStamped, "goal_pose")
    browser = page.browser
    open_folder(browser, "Walking", "Forward [m/s]")
    target = np.array([[0.3, -0.5, 0.0]])  # in front of the robot, left in the picture
    (pixel,), _ = page.camera.project(target)
    u, v = float(round(pixel[0])), float(round(pixel[1]))
    assert 100 < u < 800 and 200 < v < HEIGHT - 50, (u, v)  # clear of the panel and notices
    click_button(browser, "Pick goal on the ground")
    page.wait_text("click on the ground to set the goal")
    browser.wait_for(
        "window.__viserPointer && window.__viserPointer.hasSceneClickFilter()",
        what="the page to listen for a click in the scene",
    )
    assert browser.evaluate(
        f"document.elementFromPoint({u}, {v}) === window.__viserMutable.canvas"
    ), "the point is not on the 3D canvas"
    browser.click(u, v)
    assert spin_until(page.node, lambda: len(received) >= 1, 60.0), "no goal_pose"
    goal = received[-1]
    assert goal.header.frame_id == "world"
    p = goal.pose.position
    expected = page.camera.ground_point(u, v)
    footprint = max(
        np.linalg.norm(page.camera.ground_point(u + du, v + dv) - expected)
        for du in (-1.0, 1.0)
        for dv in (-1.0, 1.0)
    )
    assert footprint < 0.05, footprint
    error = np.linalg.norm([p.x - expected[0], p.y - expected[1]])
    print(f"picked goal {p.x:.4f}, {p.y:.4f}: {error * 1e3:.2f} mm from the ray's ground point")
    assert error <= footprint, (p, expected, footprint)
    assert p.z == 0.0
    # The page shows the picked goal in its boxes and clears its prompt.
    for label, value in (("Goal x [m]", p.x), ("Goal y [m]", p.y)):
        browser.wait_for(
            f"Math.abs({number_in(label)} - {value}) < 0.01",
            what=f"{label} showing the picked {value:.3f} (to its 2 decimals)",
        )
    page.wait_text("click on the ground to set the goal", present=False)


def test_simulation_buttons_call_the_services_and_show_the_answer(page):
    """Reset, Pause and Resume call std_srvs/Trigger services reset, pause and resume; the page
    shows each answer (done or refused, and the message); with no server it says so."""
    browser = page.browser
    click_button(browser, "Resume")
    page.wait_text(r"resume: no robot interface offers it")
    calls = {"reset": 0, "pause": 0, "resume": 0}
    answers = {
        "reset": (True, "reset to the initial posture"),
        "pause": (False, "already paused"),
        "resume": (True, "resumed at 3.25 s"),
    }

    def server(name):
        def serve(request, response):
            calls[name] += 1
            response.success, response.message = answers[name]
            return response

        return serve

    services = [page.node.create_service(Trigger, n, server(n)) for n in calls]
    try:
        for name, label in (("reset", "Reset"), ("pause", "Pause"), ("resume", "Resume")):
            success, message = answers[name]
            shown = f"{name} {'done' if success else 'refused'}: {message}"
            # The viewer finds the new server by discovery: wait until this node sees the
            # viewer's client (the same discovery exchange); a click before the viewer sees the
            # server says "no robot interface offers it" and is repeated.
            assert spin_until(page.node, lambda n=name: page.node.count_clients(n) >= 1, 60.0)
            deadline = time.monotonic() + 60.0
            while calls[name] == 0 and time.monotonic() < deadline:
                click_button(browser, label)
                spin_until(page.node, lambda n=name: calls[n] > 0, 5.0)
            assert calls[name] >= 1, calls
            page.wait_text(re.escape(shown))
        # Once the server is known, one click is one call.
        before = calls["pause"]
        click_button(browser, "Pause")
        assert spin_until(page.node, lambda: calls["pause"] > before, 60.0)
        quiet(page)
        assert calls["pause"] == before + 1, calls
    finally:
        for service in services:
            page.node.destroy_service(service)


def controller_diagnostics(stamp: float, **fields) -> DiagnosticArray:
    """The controller's diagnostics message (its own function) for a status."""
    return diagnostics_message(ControllerStatus(time=stamp, **fields), stamp)


def test_status_panel_shows_mode_safe_hold_and_reason(page):
    page.diagnostics.publish(
        controller_diagnostics(
            1.0, mode="torque", safe=True, reason="inputs stale for 0.25 s (joint_states)"
        )
    )
    page.wait_text(r"controller mode: torque")
    page.wait_text(re.escape("safe hold: yes, inputs stale for 0.25 s (joint_states)"))
    page.diagnostics.publish(controller_diagnostics(2.0, mode="ik", safe=False))
    page.wait_text(r"controller mode: ik\s+safe hold: no")


def test_real_time_factor_from_the_clock_against_wall_time(page):
    """/clock advancing at half the wall clock: the page shows a real-time factor of 0.5
    within 10 % (the estimate spans 2 s of wall time; delivery jitter of a few ms)."""
    publisher = page.node.create_publisher(Clock, "/clock", 10)
    stop = threading.Event()

    def tick():
        start = time.monotonic()
        while not stop.is_set():
            sim = 100.0 + 0.5 * (time.monotonic() - start)
            message = Clock()
            message.clock.sec = int(sim)
            message.clock.nanosec = int(round((sim - int(sim)) * 1e9)) % 1_000_000_000
            publisher.publish(message)
            time.sleep(0.02)

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        time.sleep(3.0)  # longer than the estimate's 2 s window
        readings = []
        deadline = time.monotonic() + 60.0
        while len(readings) < 3 and time.monotonic() < deadline:
            match = re.search(r"real-time factor: ([0-9.]+)", page_text(page.browser))
            if match:
                readings.append(float(match.group(1)))
            time.sleep(0.7)
    finally:
        stop.set()
        thread.join()
    print(f"real-time factor shown: {readings}")
    assert len(readings) == 3, readings
    for value in readings:
        assert abs(value - 0.5) <= 0.05, readings


def test_tracking_error_plot_receives_the_points_over_a_sliding_window(page):
    """Diagnostics' task errors reach the uPlot chart in the page: one series per task, the
    times and values sent (values carry 6 significant digits), only the last plot_window
    (10 s) of simulated time."""
    times = 20.0 + 0.1 * np.arange(30)
    for i, t in enumerate(times):
        page.diagnostics.publish(
            controller_diagnostics(
                t, mode="torque", task_errors={"com": 0.001 * i, "left_hand": 0.002 * i}
            )
        )
        time.sleep(0.05)  # the controller's rate: 20 Hz

    def chart():
        for found in uplot_charts(page.browser):
            if found["labels"][1:] == ["com", "left_hand"]:
                return found
        return None

    def holds(expected_times) -> bool:
        found = chart()
        return (
            found is not None
            and len(found["data"][0]) == len(expected_times)
            and np.allclose(found["data"][0], expected_times, rtol=0.0, atol=1e-9)
        )

    assert spin_until(page.node, lambda: holds(times), 60.0), chart()
    found = chart()
    assert found["title"] == "tracking errors"
    np.testing.assert_allclose(found["data"][1], 0.001 * np.arange(30), rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(found["data"][2], 0.002 * np.arange(30), rtol=1e-5, atol=1e-12)
    # 12 s later: the first samples leave the window.
    later = 32.0 + 0.5 * np.arange(5)
    for t in later:
        message = controller_diagnostics(
            t, mode="torque", task_errors={"com": 1.0, "left_hand": 2.0}
        )
        page.diagnostics.publish(message)
        time.sleep(0.02)
    kept = np.concatenate([times[times >= later[-1] - 10.0], later])
    assert spin_until(page.node, lambda: holds(kept), 60.0), (kept, chart())
    assert chart()["data"][0][0] >= later[-1] - 10.0


def color_pixels(image: np.ndarray, color, top: int = 18) -> np.ndarray:
    """(column, row) of the pixels of exactly one colour, below the legend's rows."""
    rows, cols = np.nonzero(np.all(image == np.array(color, np.uint8), axis=2))
    keep = rows >= top
    return np.column_stack([cols[keep], rows[keep]]).astype(float)


def test_top_view_shows_com_and_zmp_over_the_support_polygon(page):
    """CoM and ZMP from diagnostics over the support polygon from markers, as the page shows
    the top view: the CoM sent at the polygon's centre is drawn at the outline's centre, the
    ZMP sent at (+0.6, +0.5) of its half sizes is drawn there (y up), both axes at one scale.

    Tolerance 2 px: the outline is drawn 2 px wide, a dot is 9 px across.
    """
    support = Marker()
    support.header.frame_id = "world"
    support.ns, support.id, support.type = "support_polygon", 0, Marker.LINE_STRIP
    support.pose.orientation.w = 1.0
    support.scale.x = 0.005
    support.color.b = support.color.a = 1.0
    corners = [(-0.05, -0.1), (0.15, -0.1), (0.15, 0.1), (-0.05, 0.1), (-0.05, -0.1)]
    support.points = [Point(x=x, y=y, z=0.0) for x, y in corners]
    center, half = np.array([0.05, 0.0]), np.array([0.1, 0.1])
    zmp = center + np.array([0.6, 0.5]) * half
    for i in range(10):
        page.markers.publish(MarkerArray(markers=[support]))
        page.diagnostics.publish(
            controller_diagnostics(
                50.0 + 0.1 * i,
                mode="torque",
                com=np.array([center[0], center[1], 0.52]),
                zmp_measured=np.array([zmp[0], zmp[1], 0.0]),
            )
        )
        time.sleep(0.05)

    def drawn():
        image = gui_image(page.browser, 240, 240)
        sets = [color_pixels(image, c) for c in (SUPPORT_COLOR, COM_COLOR, ZMP_COLOR)]
        return sets if all(len(s) > 20 for s in sets) else None

    assert spin_until(page.node, lambda: drawn() is not None, 60.0), "the top view is empty"
    outline, com, zmp_px = drawn()
    lower, upper = outline.min(axis=0), outline.max(axis=0)
    middle, half_px = (lower + upper) / 2.0, (upper - lower) / 2.0
    print(f"top view: outline {lower}..{upper}, CoM {com.mean(axis=0)}, ZMP {zmp_px.mean(axis=0)}")
    assert abs(half_px[0] - half_px[1]) <= 2.0, half_px  # a square stays a square
    np.testing.assert_allclose(com.mean(axis=0), middle, atol=2.0)
    expected = middle + np.array([0.6, -0.5]) * half_px  # image rows grow downwards
    np.testing.assert_allclose(zmp_px.mean(axis=0), expected, atol=2.0)


def walking_marker(namespace: str, marker_id: int, kind: int, position, scale, rgb) -> Marker:
    marker = Marker()
    marker.header.frame_id = "world"
    marker.ns, marker.id, marker.type, marker.action = namespace, marker_id, kind, Marker.ADD
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = position
    marker.pose.orientation.w = 1.0
    marker.scale.x, marker.scale.y, marker.scale.z = scale
    marker.color.r, marker.color.g, marker.color.b = rgb
    marker.color.a = 1.0
    return marker


def test_walking_markers_are_drawn_by_namespace(page):
    """A footstep plan (cubes) and a planned CoM (line strip) on walking/markers become scene
    nodes named /markers/<topic>/<namespace>/<id>, mounted where the markers say (1e-6 m:
    the line's points travel as float32), and DELETEALL of a namespace removes only it."""
    steps = [
        walking_marker("footsteps", i, Marker.CUBE, (0.2 * i, 0.1 * (-1) ** i, 0.01),
                       (0.2, 0.08, 0.02), (0.1, 0.7, 0.2))
        for i in range(2)
    ]  # fmt: skip
    com = walking_marker("planned_com", 0, Marker.LINE_STRIP, (0.0, 0.0, 0.0),
                         (0.01, 0.0, 0.0), (0.9, 0.5, 0.0))  # fmt: skip
    strip = np.array([[0.0, 0.0, 0.52], [0.1, 0.02, 0.52], [0.2, -0.01, 0.53], [0.3, 0.0, 0.52]])
    com.points = [Point(x=x, y=y, z=z) for x, y, z in strip]
    page.walking_markers.publish(MarkerArray(markers=[*steps, com]))
    root = "/markers/walking_markers"
    names = [f"{root}/footsteps/0", f"{root}/footsteps/1", f"{root}/planned_com/0"]
    page.browser.wait_for(
        f"""{names!r}.every(n => {{
            const object = window.__viserMutable.nodeRefFromName[n];
            return object !== undefined && object !== null;
        }})""",
        what=f"scene nodes {names}",
    )
    for i, step in enumerate(steps):
        p = step.pose.position
        # The node exists before its pose is applied (a render frame later): a CI run read
        # the box at the origin once, right after it appeared. Read again for up to 5 s.
        deadline = time.monotonic() + 5.0
        node = scene_node(page.browser, names[i])
        while not np.allclose(node["world"], [p.x, p.y, p.z], atol=1e-6):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
            node = scene_node(page.browser, names[i])
        assert node["type"] == "BoxMessage" and node["mounted"], node
        np.testing.assert_allclose(node["world"], [p.x, p.y, p.z], atol=1e-6)
        np.testing.assert_allclose(node["props"]["dimensions"], [0.2, 0.08, 0.02], atol=1e-12)
        assert node["props"]["color"] == [26, 178, 51], node["props"]["color"]  # 255 * rgb
    line = scene_node(page.browser, names[2])
    assert line["type"] == "LineSegmentsMessage" and line["mounted"], line
    segments = np.array(line["props"]["points"]).reshape(-1, 2, 3)
    np.testing.assert_allclose(segments[:, 0], strip[:-1], atol=1e-6)
    np.testing.assert_allclose(segments[:, 1], strip[1:], atol=1e-6)
    assert line["props"]["thickness"] == pytest.approx(0.01)
    # DELETEALL in the footsteps namespace: the plan goes, the planned CoM stays.
    clear = Marker()
    clear.ns, clear.action = "footsteps", Marker.DELETEALL
    page.walking_markers.publish(MarkerArray(markers=[clear]))
    page.browser.wait_for(
        f"""!({names[0]!r} in window.__viserSceneTree.getState())
            && !({names[1]!r} in window.__viserSceneTree.getState())""",
        what="the footsteps removed",
    )
    assert names[2] in scene_names(page.browser, f"{root}/")


def test_page_has_no_console_errors(page):
    page.browser.pump(1.0)
    errors = page.browser.console_errors()
    assert not errors, errors
    assert page.viewer.process.poll() is None, page.viewer.stderr()
    assert "Traceback" not in page.viewer.stderr(), page.viewer.stderr()
