"""The robot in a viser scene: one node per link carrying its visuals, moved by kinematics.

Each link that has visuals becomes a scene node ``/robot/<link>`` placed at the link frame's
world placement (the whole-body model's forward kinematics of a configuration); its visual
meshes are children with their vertices already in the link frame (see
:mod:`wbm_bringup.viewer.urdf_visuals`). No ROS here.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import viser

from wbm_bringup.viewer.urdf_visuals import VisualSet
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.whole_body_model import WholeBodyModel

#: Colour of visuals without a URDF material (RGB 0-255): a mid blue, far from the white page.
DEFAULT_COLOR = (70, 110, 200)


def _wxyz(rotation: np.ndarray) -> np.ndarray:
    x, y, z, w = quaternion_of_rotation(rotation).coeffs()
    return np.array([w, x, y, z])


def _rgb(rgba: tuple[float, float, float, float] | None) -> tuple[int, int, int]:
    if rgba is None or not any(rgba[:3]):
        return DEFAULT_COLOR
    return tuple(int(round(255 * c)) for c in rgba[:3])


class RobotScene:
    """A whole-body model's visuals in a viser scene.

    Args:
        scene: The viser scene.
        model: The whole-body model (its frames place the links).
        visuals: The URDF's visuals (meshes in their link frames).
        root: Scene path of the robot.
    """

    def __init__(
        self,
        scene: viser.SceneApi,
        model: WholeBodyModel,
        visuals: VisualSet,
        root: str = "/robot",
    ):
        self.model = model
        self.visuals = visuals
        self._frame_ids = {}
        #: Scene frame of each link with visuals (its pose is the link's world placement).
        self.link_frames: dict[str, viser.FrameHandle] = {}
        for link in visuals.links():
            if not model.model.existFrame(link):
                continue
            self._frame_ids[link] = model.model.getFrameId(link)
            self.link_frames[link] = scene.add_frame(f"{root}/{link}", show_axes=False)
        for visual in visuals.visuals:
            if visual.link not in self._frame_ids:
                continue
            scene.add_mesh_simple(
                f"{root}/{visual.link}/visual_{visual.index}",
                visual.vertices,
                visual.faces,
                color=_rgb(visual.color_rgba),
                cast_shadow=False,
                receive_shadow=False,
            )
        self._data = model.model.createData()

    def placements(self, q: np.ndarray) -> dict[str, pin.SE3]:
        """World placement of every link with visuals at configuration ``q`` (Pinocchio)."""
        q = self.model.check_configuration(q)
        pin.framesForwardKinematics(self.model.model, self._data, q)
        return {link: self._data.oMf[i] for link, i in self._frame_ids.items()}

    def show(self, q: np.ndarray) -> None:
        """Move the links to configuration ``q``."""
        for link, placement in self.placements(q).items():
            handle = self.link_frames[link]
            handle.position = placement.translation.copy()
            handle.wxyz = _wxyz(placement.rotation)

    def bounds(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lowest and highest corner of the axis-aligned box around every visual at ``q`` [m]."""
        placements = self.placements(q)
        lower, upper = np.full(3, np.inf), np.full(3, -np.inf)
        for visual in self.visuals.visuals:
            placement = placements[visual.link]
            points = visual.vertices @ placement.rotation.T + placement.translation
            lower = np.minimum(lower, points.min(axis=0))
            upper = np.maximum(upper, points.max(axis=0))
        if not np.all(np.isfinite(lower)):
            return np.zeros(3), np.zeros(3)
        return lower, upper
