"""The page's live state: what the node received, turned into what the page shows (no ROS).

:class:`LiveView` is everything the viewer node does between a message and the page: it
assembles the robot's configuration from the joint positions and the base pose, places markers
given in robot frames in the world, keeps the controller's status and feeds the plots from
diagnostics, estimates the real-time factor from the simulated clock, and on each refresh tick
moves the robot (when its configuration changed), puts the target handles on the robot when
asked, and redraws the status panel and the plots at a few hertz. The node only converts
messages to plain values and calls it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from wbm_bringup.viewer.app import BrowserViewer
from wbm_bringup.viewer.markers_view import MarkerItem, in_world
from wbm_bringup.viewer.status import (
    ControllerStatusView,
    RealTimeFactor,
    controller_entry,
    service_text,
)
from wbm_description.exceptions import InputError

#: Wall time between redraws of the status panel and the plots [s].
PLOT_PERIOD = 0.2


class LiveView:
    """Feeds a :class:`~.app.BrowserViewer` from the robot's topics, as plain values.

    Args:
        viewer: The page.
        plot_period: Wall time between redraws of the status panel and the plots [s].
    """

    def __init__(self, viewer: BrowserViewer, plot_period: float = PLOT_PERIOD):
        self.viewer = viewer
        self.model = viewer.model
        self.settings = viewer.settings
        self.plot_period = plot_period
        self.joints: np.ndarray | None = None
        self.base: np.ndarray | None = None
        #: The configuration the page shows (the initial one until a state arrives).
        self.shown = self.model.initial_configuration()
        self.status: ControllerStatusView | None = None
        self.sim_time: float | None = None
        self.real_time_factor = RealTimeFactor(self.settings.rtf_window)
        self._last_plot = -math.inf
        self._world_frames = {"", self.settings.world_frame}

    # ------------------------------------------------------------------ robot state

    def set_joint_positions(self, indices: np.ndarray, positions: np.ndarray | None) -> None:
        """Joint positions [rad or m] of every joint, given at their model indices.

        Raises:
            InputError: Not one finite position per joint of the model.
        """
        expected = f"{self.model.ndof} finite joint positions"
        if positions is None:
            raise InputError("position", expected, "none")
        indices = np.asarray(indices, dtype=int)
        positions = np.asarray(positions, dtype=float)
        every = np.array_equal(np.sort(indices), np.arange(self.model.ndof))
        if not every or positions.shape != indices.shape or not np.all(np.isfinite(positions)):
            raise InputError("position", expected, positions)
        joints = np.empty(self.model.ndof)
        joints[indices] = positions
        self.joints = joints

    def set_base(self, base: np.ndarray) -> None:
        """The base pose in the world: (x, y, z [m], qx, qy, qz, qw), Pinocchio's layout."""
        self.base = np.asarray(base, dtype=float)

    def configuration(self) -> np.ndarray | None:
        """The robot's configuration (Pinocchio layout), or None until every input arrived."""
        if self.joints is None:
            return None
        if not self.model.floating_base:
            return self.joints.copy()
        if self.base is None:
            return None
        return np.concatenate([self.base, self.joints])

    def robot_state(self) -> str:
        """The robot's state as the status panel names it: live, or what it waits for."""
        if self.configuration() is not None:
            return "live"
        waiting = [] if self.joints is not None else ["joint_states"]
        if self.model.floating_base and self.base is None:
            waiting.append(f"'{self.settings.base_pose_topic}'")
        return "waiting for " + " and ".join(waiting)

    # ------------------------------------------------------------------ markers

    def add_markers(self, markers: Iterable[tuple[str, MarkerItem]]) -> list[str]:
        """Draw one MarkerArray: (header frame, item in that frame) per marker.

        Frames: the world frame (or ""), or any frame of the robot, placed at the configuration
        shown.

        Returns:
            One problem line per marker not drawn.

        Raises:
            InputError: A marker in a frame the viewer does not know, or with non-finite
                values (the whole array is dropped).
        """
        items = []
        for frame, item in markers:
            if frame in self._world_frames:
                placement = None
            elif self.model.model.existFrame(frame):
                placement = self.model.frame_placement(self.shown, frame)
            else:
                expected = f"the world frame '{self.settings.world_frame}' or a robot frame"
                raise InputError("header.frame_id", expected, frame)
            items.append(in_world(item, placement))
        return self.viewer.apply_markers(items)

    # ------------------------------------------------------------------ status

    def add_diagnostics(
        self, entries: Iterable[tuple[Mapping[str, str], str]], stamp: float
    ) -> bool:
        """One DiagnosticArray: (key/values, message) per status, its stamp [s].

        Returns:
            Whether it held the controller's status (then its tracking errors, CoM and ZMP
            are added to the plots at ``stamp``).
        """
        status = controller_entry(entries)
        if status is None:
            return False
        self.status = status
        self.viewer.add_tracking_errors(stamp, status.task_errors)
        self.viewer.add_balance_sample(stamp, status.com, status.zmp)
        return True

    def add_clock(self, sim_time: float, wall_time: float) -> None:
        """A simulated clock sample [s] received at ``wall_time`` [s] (any steady clock)."""
        self.sim_time = sim_time
        self.real_time_factor.add(sim_time, wall_time)

    def service_unavailable(self, name: str) -> None:
        """A simulation button was clicked and no server offers the service."""
        self.viewer.set_service_result(service_text(name, None, "no robot interface offers it"))

    def service_answered(self, name: str, success: bool, message: str) -> None:
        """The service's response."""
        self.viewer.set_service_result(service_text(name, success, message))

    def service_failed(self, name: str, error: str) -> None:
        """The call got no response (the server went away)."""
        self.viewer.set_service_result(service_text(name, None, f"failed: {error}"))

    # ------------------------------------------------------------------ refresh

    def refresh(self, wall_time: float) -> list[str]:
        """One refresh tick at ``wall_time`` [s] (the clock of :meth:`add_clock`).

        Moves the robot when its configuration changed, puts the target handles on the robot
        when the page asked, and every ``plot_period`` redraws the status panel and the plots.

        Returns:
            Problems (a configuration that cannot be shown).
        """
        problems = []
        q = self.configuration()
        if q is not None and not np.array_equal(q, self.shown):
            try:
                self.viewer.show(q)
                self.shown = q
            except InputError as error:
                problems.append(f"cannot show the state: {error}")
        if self.viewer.take_snap_request():
            self.viewer.targets_to_robot(self.shown)
        if wall_time - self._last_plot < self.plot_period:
            return problems
        self._last_plot = wall_time
        self.viewer.set_status(
            self.status, self.real_time_factor.value(wall_time), self.sim_time, self.robot_state()
        )
        self.viewer.refresh_plots(self.viewer.markers.support_polygon())
        return problems
