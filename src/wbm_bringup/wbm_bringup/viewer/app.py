"""The browser viewer page: robot, markers, controls, status and plots on a viser server.

:class:`BrowserViewer` serves one page on ``http://<host>:<port>/``. It shows what it is given
(a configuration, marker items, a controller status, a real-time factor, tracking errors) and
turns the page's controls into calls of :class:`ViewerCallbacks` (plain callables: the node
publishes them on the topics and services any node would use). No ROS here.

Controls:

- target handles (viser transform controls) for each pose task (``on_pose_target``) and for
  the CoM (translation only, ``on_com_target``); "targets to robot" puts them back on the
  robot's frames;
- push: impulse [N s], azimuth and elevation [deg], the link; the button calls ``on_push`` with
  the force ``impulse / push_duration`` along the direction (:mod:`.push`);
- walking: forward, sideways and turning speed sliders (``on_cmd_vel`` on every change; "stop"
  sends zeros), a goal (x, y, yaw) sent by a button or picked by a click on the ground
  (``on_goal`` with the goal's pose on the ground, :func:`goal_pose`);
- simulation: reset, pause, resume (``on_service``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import viser
import viser.uplot

from wbm_bringup.viewer.camera import Camera, framing_camera
from wbm_bringup.viewer.markers_view import MarkerItem, MarkersView
from wbm_bringup.viewer.plots import SlidingWindow, top_view_image
from wbm_bringup.viewer.push import push_force
from wbm_bringup.viewer.robot_scene import RobotScene
from wbm_bringup.viewer.settings import ViewerSettings
from wbm_bringup.viewer.status import ControllerStatusView, status_text
from wbm_bringup.viewer.urdf_visuals import VisualSet
from wbm_description.exceptions import InputError
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.whole_body_model import WholeBodyModel

#: Width / height of the page the default camera is framed for (a laptop browser window).
EXPECTED_ASPECT = 1.6


def _ignore(*_args) -> None:
    return None


@dataclass
class ViewerCallbacks:
    """What the page's controls call (each from a viser worker thread).

    Attributes:
        on_pose_target: ``(task, position [m], wxyz)`` when a pose target handle moves.
        on_com_target: ``(position [m])`` when the CoM target handle moves.
        on_push: ``(force [N] in world axes, link)`` when the push button is clicked.
        on_cmd_vel: ``(forward [m/s], sideways [m/s], turning [rad/s])`` on a walking change.
        on_goal: ``(position [m], wxyz)`` of the goal on the ground (world) when a goal is
            sent or picked.
        on_service: ``(name)`` for "reset", "pause" or "resume".
    """

    on_pose_target: Callable[[str, np.ndarray, np.ndarray], None] = _ignore
    on_com_target: Callable[[np.ndarray], None] = _ignore
    on_push: Callable[[np.ndarray, str], None] = _ignore
    on_cmd_vel: Callable[[float, float, float], None] = _ignore
    on_goal: Callable[[np.ndarray, np.ndarray], None] = _ignore
    on_service: Callable[[str], None] = _ignore


def _wxyz(rotation: np.ndarray) -> np.ndarray:
    x, y, z, w = quaternion_of_rotation(rotation).coeffs()
    return np.array([w, x, y, z])


def goal_pose(x: float, y: float, yaw: float) -> tuple[np.ndarray, np.ndarray]:
    """A goal on the ground from its coordinates and heading.

    Args:
        x: Goal x in the world [m].
        y: Goal y in the world [m].
        yaw: Heading about the world z axis [rad].

    Returns:
        Position (x, y, 0) [m] and orientation (w, x, y, z).
    """
    half = yaw / 2.0
    return np.array([x, y, 0.0]), np.array([math.cos(half), 0.0, 0.0, math.sin(half)])


class BrowserViewer:
    """The page of one robot (see the module docstring).

    Args:
        model: The whole-body model.
        visuals: Its URDF visuals (:func:`~.urdf_visuals.load_visuals`).
        settings: The viewer settings.
        callbacks: What the controls call.
    """

    def __init__(
        self,
        model: WholeBodyModel,
        visuals: VisualSet,
        settings: ViewerSettings,
        callbacks: ViewerCallbacks | None = None,
    ):
        self.model = model
        self.settings = settings
        self.callbacks = callbacks or ViewerCallbacks()
        self.server = viser.ViserServer(
            host=settings.host,
            port=settings.port,
            label=f"wbm: {model.config.name}",
            verbose=False,
        )
        try:
            self._build(visuals)
        except BaseException:
            self.server.stop()
            raise

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{self.settings.host}:{self.server.get_port()}/"

    # ------------------------------------------------------------------ building

    def _build(self, visuals: VisualSet) -> None:
        server, settings = self.server, self.settings
        server.gui.configure_theme(show_share_button=False, brand_color=(40, 80, 160))
        server.scene.configure_default_lights(cast_shadow=False)
        server.scene.world_axes.visible = False
        if settings.show_grid:
            server.scene.add_grid(
                "/ground", 6.0, 6.0, cell_size=0.25, section_size=1.0, shadow_opacity=0.0
            )
        self.robot = RobotScene(server.scene, self.model, visuals)
        self.markers = MarkersView(server.scene)
        q0 = self.model.initial_configuration()
        self.robot.show(q0)
        self.camera = self.default_camera(q0)
        server.initial_camera.position = self.camera.position
        server.initial_camera.look_at = self.camera.look_at
        server.initial_camera.up = self.camera.up
        server.initial_camera.fov = self.camera.fov
        self._build_status(visuals)
        self._build_targets(q0)
        self._build_push()
        self._build_walking()
        self._build_simulation()
        self._build_plots()

    def default_camera(self, q: np.ndarray) -> Camera:
        """The camera that frames the robot at configuration ``q`` (settings' angles)."""
        lower, upper = self.robot.bounds(q)
        s = self.settings
        return framing_camera(
            lower,
            upper,
            azimuth=math.radians(s.camera_azimuth),
            elevation=math.radians(s.camera_elevation),
            fov=math.radians(s.camera_fov),
            aspect=EXPECTED_ASPECT,
            margin=s.camera_margin,
        )

    def _build_status(self, visuals: VisualSet) -> None:
        gui = self.server.gui
        with gui.add_folder("Status"):
            self.status_markdown = gui.add_markdown("waiting for `joint_states`")
            if visuals.problems:
                gui.add_markdown(
                    f"**{len(visuals.problems)} visual(s) could not be loaded** "
                    "(left out; the node's log names the files)"
                )

    def _build_targets(self, q: np.ndarray) -> None:
        gui, scene, s = self.server.gui, self.server.scene, self.settings
        self.targets: dict[str, viser.TransformControlsHandle] = {}
        for task in s.target_tasks:
            handle = scene.add_transform_controls(
                f"/targets/{task}", scale=0.12, line_width=2.0, visible=s.show_targets
            )
            handle.on_update(self._pose_target_callback(task))
            self.targets[task] = handle
        self.com_target = scene.add_transform_controls(
            "/targets/com", scale=0.15, disable_rotations=True, visible=s.show_targets
        )
        self.com_target.on_update(self._com_target_moved)
        self.targets_to_robot(q)
        with gui.add_folder("Targets"):
            show = gui.add_checkbox("Show targets", s.show_targets)
            show.on_update(lambda _: self._show_targets(show.value))
            snap = gui.add_button("Targets to robot")
            snap.on_click(lambda _: self.request_snap())
        self._snap_pending = False

    def _build_push(self) -> None:
        gui, s = self.server.gui, self.settings
        link = s.push_link or self.model.config.base_link
        with gui.add_folder("Push"):
            self.push_impulse = gui.add_number(
                "Impulse [N s]", s.push_impulse, min=0.0, max=1000.0, step=0.01
            )
            self.push_azimuth = gui.add_slider("Azimuth [deg]", -180.0, 180.0, 1.0, 0.0)
            self.push_elevation = gui.add_slider("Elevation [deg]", -60.0, 60.0, 1.0, 0.0)
            self.push_link = gui.add_text("Link", link)
            self.push_button = gui.add_button("Push")
            self.push_button.on_click(lambda _: self._push())
            gui.add_markdown(f"force = impulse / {s.push_duration:g} s (push_duration)")

    def _build_walking(self) -> None:
        gui = self.server.gui
        self._stopping = False
        self._walk_lock = threading.RLock()  # the sliders' callbacks run in the same thread
        with gui.add_folder("Walking", expand_by_default=False):
            self.walk_forward = gui.add_slider("Forward [m/s]", -0.3, 0.3, 0.01, 0.0)
            self.walk_sideways = gui.add_slider("Sideways [m/s]", -0.2, 0.2, 0.01, 0.0)
            self.walk_turning = gui.add_slider("Turning [rad/s]", -0.5, 0.5, 0.01, 0.0)
            for slider in (self.walk_forward, self.walk_sideways, self.walk_turning):
                slider.on_update(lambda _: self._cmd_vel())
            stop = gui.add_button("Stop walking")
            stop.on_click(lambda _: self.stop_walking())
            self.goal_x = gui.add_number("Goal x [m]", 0.5, step=0.01)
            self.goal_y = gui.add_number("Goal y [m]", 0.0, step=0.01)
            self.goal_yaw = gui.add_number("Goal yaw [deg]", 0.0, step=1.0)
            send = gui.add_button("Send goal")
            send.on_click(lambda _: self._send_goal())
            pick = gui.add_button("Pick goal on the ground")
            pick.on_click(lambda _: self._pick_goal())

    def _build_simulation(self) -> None:
        gui = self.server.gui
        with gui.add_folder("Simulation"):
            for name in ("reset", "pause", "resume"):
                button = gui.add_button(name.capitalize())
                button.on_click(lambda _, n=name: self.callbacks.on_service(n))
            self.message_markdown = gui.add_markdown("")

    def _build_plots(self) -> None:
        gui, s = self.server.gui, self.settings
        self.errors = SlidingWindow(s.plot_window)
        self.com_trace = SlidingWindow(s.plot_window)
        with gui.add_folder("Plots"):
            self.top_view = gui.add_image(  # PNG: JPEG would blur the one-pixel traces
                top_view_image(None, None, None),
                label="CoM and ZMP over the support (top)",
                format="png",
            )
            self._error_names: list[str] = []
            self.error_plot = gui.add_uplot(
                (np.zeros(1), np.zeros(1)),
                (viser.uplot.Series(label="time [s]"), viser.uplot.Series(label="no tasks yet")),
                title="tracking errors",
                aspect=1.4,
            )

    # ------------------------------------------------------------------ control callbacks

    # The gizmo callbacks are coroutines: viser awaits them on its event loop in the order of
    # the drag's messages, where plain functions run in a thread pool and may publish the poses
    # of a drag out of order (the last message sent would not be where the handle was let go).
    # Only "update" events publish: "start" repeats the pose before the drag and "end" the
    # last update's.

    def _pose_target_callback(self, task: str):
        async def moved(event: viser.TransformControlsEvent) -> None:
            if event.phase == "update":
                handle = event.target
                self.callbacks.on_pose_target(
                    task, np.array(handle.position, float), np.array(handle.wxyz, float)
                )

        return moved

    async def _com_target_moved(self, event: viser.TransformControlsEvent) -> None:
        if event.phase == "update":
            self.callbacks.on_com_target(np.array(event.target.position, float))

    def _show_targets(self, visible: bool) -> None:
        for handle in (*self.targets.values(), self.com_target):
            handle.visible = visible

    def request_snap(self) -> None:
        """Ask for the target handles on the robot at the next refresh ("Targets to robot")."""
        self._snap_pending = True

    def take_snap_request(self) -> bool:
        """Whether "targets to robot" was clicked since the last call (then it is consumed)."""
        pending, self._snap_pending = self._snap_pending, False
        return pending

    def targets_to_robot(self, q: np.ndarray) -> None:
        """Put the target handles on the robot's target frames and CoM at ``q``."""
        pairs = zip(self.settings.target_tasks, self.settings.target_frames, strict=True)
        for task, frame in pairs:
            placement = self.model.frame_placement(q, frame)
            self.targets[task].position = placement.translation.copy()
            self.targets[task].wxyz = _wxyz(placement.rotation)
        self.com_target.position = self.model.com_position(q)

    def _push(self) -> None:
        try:
            force = push_force(
                float(self.push_impulse.value),
                float(self.push_azimuth.value),
                float(self.push_elevation.value),
                self.settings.push_duration,
            )
        except InputError as error:
            self.message_markdown.content = f"push not sent: {error}"
            return
        self.callbacks.on_push(force, str(self.push_link.value).strip())

    def _cmd_vel(self) -> None:
        """Send the sliders' speeds (each slider change, from viser's thread pool).

        The values are read and sent under a lock: whichever callback runs last sends the
        sliders' latest values, whatever order the pool runs them in.
        """
        with self._walk_lock:
            if self._stopping:  # the sliders are being zeroed: one stop command follows
                return
            self.callbacks.on_cmd_vel(
                float(self.walk_forward.value),
                float(self.walk_sideways.value),
                float(self.walk_turning.value),
            )

    def stop_walking(self) -> None:
        """Zero the sliders and send one stop command.

        Assigning a slider calls its update callback: without the guard, (0, sideways, turning)
        and (0, 0, turning) would be sent before the stop.
        """
        with self._walk_lock:
            self._stopping = True
            try:
                with self.server.atomic():
                    for slider in (self.walk_forward, self.walk_sideways, self.walk_turning):
                        slider.value = 0.0
            finally:
                self._stopping = False
            self.callbacks.on_cmd_vel(0.0, 0.0, 0.0)

    def _send_goal(self) -> None:
        self.callbacks.on_goal(
            *goal_pose(
                float(self.goal_x.value),
                float(self.goal_y.value),
                math.radians(float(self.goal_yaw.value)),
            )
        )

    def _pick_goal(self) -> None:
        """The next click in the scene on the ground (z = 0) sets and sends the goal."""
        scene = self.server.scene
        self.message_markdown.content = "click on the ground to set the goal"

        @scene.on_click()
        def _(event) -> None:
            scene.remove_pointer_callback()
            origin, direction = np.array(event.ray_origin), np.array(event.ray_direction)
            if direction[2] >= -1e-9:
                self.message_markdown.content = "goal not set: the click did not hit the ground"
                return
            point = origin - origin[2] / direction[2] * direction
            self.goal_x.value, self.goal_y.value = float(point[0]), float(point[1])
            self.message_markdown.content = ""
            self._send_goal()

    # ------------------------------------------------------------------ showing

    def show(self, q: np.ndarray) -> None:
        """Show the robot at configuration ``q`` (Pinocchio layout)."""
        with self.server.atomic():
            self.robot.show(q)

    def apply_markers(self, items: list[MarkerItem]) -> list[str]:
        """Draw one MarkerArray's items; returns the problems (items not drawn)."""
        with self.server.atomic():
            return self.markers.apply(items)

    def set_status(
        self,
        status: ControllerStatusView | None,
        real_time_factor: float | None,
        sim_time: float | None,
        robot_state: str,
    ) -> None:
        """Update the status panel (:func:`~.status.status_text`)."""
        self.status_markdown.content = status_text(status, real_time_factor, sim_time, robot_state)

    def set_service_result(self, text: str) -> None:
        """Show the outcome of the last service call."""
        self.message_markdown.content = text

    def add_tracking_errors(self, time: float, errors: dict[str, float]) -> None:
        """Add one sample of the tracking errors at sim time ``time`` [s]."""
        self.errors.add(time, errors)

    def add_balance_sample(self, time: float, com: np.ndarray | None, zmp: np.ndarray | None):
        """Add one CoM / ZMP sample (world, [m]) at sim time ``time`` [s] for the top view."""
        values = {}
        if com is not None:
            values.update(com_x=float(com[0]), com_y=float(com[1]))
        if zmp is not None:
            values.update(zmp_x=float(zmp[0]), zmp_y=float(zmp[1]))
        if values:
            self.com_trace.add(time, values)

    def refresh_plots(self, support_polygon: np.ndarray | None) -> None:
        """Redraw the plots from the windows (call at a few Hz)."""
        _, (cx, cy, zx, zy) = self.com_trace.arrays(["com_x", "com_y", "zmp_x", "zmp_y"])
        com = np.column_stack([cx, cy]) if len(cx) else None
        zmp = np.column_stack([zx, zy]) if len(zx) else None
        self.top_view.image = top_view_image(support_polygon, com, zmp)
        names = self.errors.names()
        if not names:
            return
        times, columns = self.errors.arrays(names)
        if names != self._error_names:
            self._error_names = names
            series = [viser.uplot.Series(label="time [s]")]
            for i, name in enumerate(names):
                series.append(viser.uplot.Series(label=name, stroke=_color(i), width=2))
            with self.server.atomic():
                self.error_plot.series = tuple(series)
                self.error_plot.data = (times, *columns)
            return
        self.error_plot.data = (times, *columns)

    def close(self) -> None:
        """Stop the server (its threads end)."""
        self.server.stop()


_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2")


def _color(index: int) -> str:
    return _PALETTE[index % len(_PALETTE)]
