"""A browser view of the robot and its markers: a MeshCat scene served on localhost (no ROS).

:class:`MeshcatServer` runs MeshCat's ZeroMQ/WebSocket server as a child process that dies with
this one; :class:`RobotViewer` shows a whole-body model in it through Pinocchio's
``MeshcatVisualizer`` (the URDF's visual meshes) and draws a
:class:`~wbm_description.markers.MarkerScene` next to it. The viewer node feeds both from topics.
"""

from __future__ import annotations

import ctypes
import os
import re
import select
import signal
import subprocess
import sys
import time

import meshcat
import meshcat.geometry as g
import meshcat.transformations as tf
import numpy as np
import pinocchio as pin
from pinocchio.visualize import MeshcatVisualizer

from wbm_description.exceptions import UrdfError, WbmError
from wbm_description.markers import MarkerKind, MarkerScene, MarkerShape
from wbm_description.package_paths import resolve_package_uris_in_text
from wbm_description.whole_body_model import WholeBodyModel

_PR_SET_PDEATHSIG = 1


class ViewerError(WbmError, RuntimeError):
    """The MeshCat server could not be started or reached."""


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class MeshcatServer:
    """MeshCat's server (static page + WebSocket on localhost) as a child process.

    The child gets SIGTERM when this process dies, even by SIGKILL (Linux PDEATHSIG), so no
    server is left behind.

    Args:
        timeout: How long to wait for the server to print its URLs [s].

    Attributes:
        zmq_url: Where :class:`meshcat.Visualizer` sends commands.
        web_url: The page to open in a browser (``http://127.0.0.1:<port>/static/``).
    """

    def __init__(self, *, timeout: float = 20.0):
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", "meshcat.servers.zmqserver"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ),
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only prctl, no threads involved
        )
        urls: dict[str, str] = {}
        output = b""
        deadline = time.monotonic() + timeout
        while len(urls) < 2:
            remaining = deadline - time.monotonic()
            if remaining <= 0.0 or self.process.poll() is not None:
                self.close()
                raise ViewerError(f"the MeshCat server did not start within {timeout} s")
            ready, _, _ = select.select([self.process.stdout], [], [], remaining)
            if ready:
                output += os.read(self.process.stdout.fileno(), 4096)
                for line in output.decode(errors="replace").splitlines():
                    match = re.fullmatch(r"(zmq_url|web_url)=(.*)", line.strip())
                    if match:
                        urls[match.group(1)] = match.group(2)
        self.zmq_url = urls["zmq_url"]
        self.web_url = urls["web_url"]

    def close(self) -> None:
        """Stop the server."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5.0)
        if self.process.stdout is not None:
            self.process.stdout.close()


_Y_UP_TO_Z_UP = pin.SE3(pin.rpy.rpyToMatrix(np.pi / 2.0, 0.0, 0.0), np.zeros(3))


def _collada_y_up(path: str) -> bool:
    """Whether a mesh file is COLLADA declaring a y-up axis (read from its first 4 kB)."""
    if not path.lower().endswith(".dae"):
        return False
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return False
    return re.search(rb"<up_axis>\s*Y_UP\s*</up_axis>", head) is not None


def _rotation_y_to(direction: np.ndarray) -> np.ndarray:
    """A rotation matrix taking the y axis (MeshCat's cylinder axis) to a unit direction."""
    y = np.array([0.0, 1.0, 0.0])
    axis = np.cross(y, direction)
    sin, cos = np.linalg.norm(axis), float(np.dot(y, direction))
    if sin < 1e-12:
        return np.eye(3) if cos > 0.0 else np.diag([1.0, -1.0, -1.0])
    return pin.exp3(axis / sin * np.arctan2(sin, cos))


def _color_int(rgba: tuple[float, float, float, float]) -> int:
    r, g_, b = (int(round(255 * c)) for c in rgba[:3])
    return (r << 16) | (g_ << 8) | b


class RobotViewer:
    """A whole-body model and its markers in a MeshCat scene.

    Args:
        model: The whole-body model (its URDF's visual meshes are loaded).
        zmq_url: The MeshCat server's command URL (:attr:`MeshcatServer.zmq_url`).

    Raises:
        UrdfError: The URDF's visual geometry cannot be loaded (e.g. a missing mesh).
    """

    ROBOT_PATH = "robot"
    DEFAULT_COLOR = (0.78, 0.78, 0.82, 1.0)
    DEFAULT_CAMERA = (1.7, -0.8, 1.0)
    MARKERS_PATH = "markers"

    def __init__(self, model: WholeBodyModel, zmq_url: str):
        self.model = model
        text, unresolved = resolve_package_uris_in_text(model.urdf_text or "")
        if unresolved:
            raise UrdfError(
                model.urdf_path, "mesh filename", "resolvable package:// URIs", unresolved
            )
        try:
            visual_model = pin.buildGeomFromUrdfString(model.model, text, pin.GeometryType.VISUAL)
        except (ValueError, RuntimeError) as error:
            raise UrdfError(
                model.urdf_path, "visual geometry", "loadable meshes", str(error)
            ) from None
        # Send the meshes as triangles (loaded by Pinocchio's mesh loader, scale applied) rather
        # than as COLLADA files: MeshCat's browser-side COLLADA loader fails on iCub's
        # multi-part .dae files ("mergeBufferGeometries() failed"), leaving parts out.
        for geometry in visual_model.geometryObjects:
            if _collada_y_up(geometry.meshPath):
                # A COLLADA file with <up_axis>Y_UP</up_axis>: ROS tools (RViz) turn it to
                # z up, Pinocchio's loader does not; without this iCub's legs lie flat.
                geometry.placement = geometry.placement * _Y_UP_TO_Z_UP
            geometry.meshPath = ""
            if not np.any(geometry.meshColor[:3]):  # no URDF material: light grey, not black
                geometry.meshColor = np.array(self.DEFAULT_COLOR)
        self.visualizer = MeshcatVisualizer(model.model, visual_model, visual_model)
        self.viewer = meshcat.Visualizer(zmq_url=zmq_url)
        self.visualizer.initViewer(viewer=self.viewer)
        self.visualizer.loadViewerModel(rootNodeName=self.ROBOT_PATH)
        self.set_camera(np.array(self.DEFAULT_CAMERA))
        self._marker_geometry: dict[str, tuple] = {}

    def set_camera(self, camera_position: np.ndarray) -> None:
        """Place the default camera at a world position [m]; it looks at the world origin.

        MeshCat's camera lives in a y-up frame rotated from the world's z-up one, so the
        position is sent as (x, z, -y) to ``/Cameras/default/rotated/<object>``.
        """
        x, y, z = (float(c) for c in camera_position)
        self.viewer["/Cameras/default/rotated/<object>"].set_property("position", [x, z, -y])

    def display(self, q: np.ndarray) -> None:
        """Move the robot to a configuration (Pinocchio layout)."""
        self.visualizer.display(self.model.check_configuration(q))

    def draw_markers(self, scene: MarkerScene) -> None:
        """Draw (or hide) every marker of a scene under ``markers/<namespace>/<id>``."""
        for shape in scene.markers:
            path = f"{self.MARKERS_PATH}/{shape.namespace}/{shape.marker_id}"
            node = self.viewer[path]
            if not shape.visible:
                node.set_property("visible", False)
                continue
            self._draw(node, path, shape)
            node.set_property("visible", True)

    def _draw(self, node, path: str, shape: MarkerShape) -> None:
        material = g.MeshLambertMaterial(color=_color_int(shape.color_rgba))
        if shape.kind == MarkerKind.SPHERE:
            key = ("sphere", shape.scale[0])
            if self._marker_geometry.get(path) != key:
                node.set_object(g.Sphere(shape.scale[0] / 2.0), material)
                self._marker_geometry[path] = key
            node.set_transform(tf.translation_matrix(shape.points[0]))
        elif shape.kind == MarkerKind.LINE_STRIP:
            line_material = g.LineBasicMaterial(color=_color_int(shape.color_rgba), linewidth=3)
            node.set_object(
                g.Line(g.PointsGeometry(shape.points.T.astype(np.float32)), line_material)
            )
            self._marker_geometry[path] = ("line",)
        elif shape.kind == MarkerKind.ARROW:
            start, end = shape.points
            vector = end - start
            length = float(np.linalg.norm(vector))
            key = ("arrow", round(length, 4), shape.scale)
            if self._marker_geometry.get(path) != key:
                node.set_object(g.Cylinder(max(length, 1e-6), shape.scale[0] / 2.0), material)
                self._marker_geometry[path] = key
            pose = np.eye(4)
            if length > 0.0:
                pose[:3, :3] = _rotation_y_to(vector / length)
            pose[:3, 3] = start + vector / 2.0
            node.set_transform(pose)
