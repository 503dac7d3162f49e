"""The browser viewer shows the Unitree G1 correctly (STL meshes, floating-root URDF).

The same picture test as iCub's (:mod:`tests.viewer.test_browser_viewer`): the viewer node as
its own process with G1's parameter file, a real headless chromium on its page, and the rendered
silhouette compared with a reference made without the viewer's code (Pinocchio's URDF geometry
model, its STL loader and a numpy rasterizer through the camera the node prints).

Tolerances, as for iCub and why: intersection over union >= 0.9 and centroid offset <= 3 px (the
silhouettes differ only at their anti-aliased border, about one pixel wide; a wrong joint sign or
a misplaced mesh moves whole limbs by tens of pixels), >= 0.8 of each visible part's reference
pixels are robot pixels, and the lowest rendered row is the reference's within 2 px (the feet are
drawn on the ground plane). Measured: IoU 0.978 and 0.976, centroid offsets 0.34 and 0.23 px,
coverage >= 0.989; against the arm-down reference the raised-arm picture scores IoU 0.81 and
16.7 px. Wall time: 11 min on the shared 2-core machine at a load average of 40 (chromium
renders WebGL in software), a few minutes when quiet.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from tests.viewer.test_browser_viewer import (
    HEIGHT,
    WIDTH,
    Scene,
    assert_silhouette_matches,
    compare,
    initial_joints,
)
from tests.viewer.viewer_browser import CHROMIUM
from tests.viewer.viewer_projection import configuration
from wbm_description import WholeBodyModel

pytestmark = [pytest.mark.process, pytest.mark.slow]

PARAMS_FILE = Path(__file__).resolve().parents[2] / "config" / "g1" / "viewer.yaml"


@pytest.fixture(scope="module")
def scene(rclpy_node, start_node, tmp_path_factory):
    assert shutil.which(CHROMIUM), "chromium missing: run bash tools/install_browser.sh"
    scene = Scene(
        rclpy_node,
        start_node,
        tmp_path_factory.mktemp("g1_shots"),
        "g1",
        "show_targets:=false",
        "target_frames:=[left_rubber_hand,right_rubber_hand]",  # as config/g1/viewer.yaml
    )
    yield scene
    scene.close()


def standing_base(scene: Scene, joints: dict[str, float]) -> pin.SE3:
    """The pelvis placement that puts the left sole (a config tool, not a URDF frame: hence
    wbm's model) at the world origin."""
    model = WholeBodyModel.from_config(scene.config)
    values = np.array([joints[name] for name in model.joint_names])
    return model.base_placement_for_reference_frame(values, scene.config.world_reference_link)


def assert_g1_picture(scene: Scene, mask: np.ndarray, q: np.ndarray, result: dict) -> None:
    assert_silhouette_matches(result)
    # Torso above feet: the torso link's origin (the waist joints' axes; the G1 has no head frame)
    # projects inside the silhouette, above the ankles (the soles are config tools, not URDF
    # frames: their links, the ankle roll links, stand for them).
    data = scene.model.createData()
    pin.framesForwardKinematics(scene.model, data, q)
    torso = data.oMf[scene.model.getFrameId("torso_link")].translation
    (torso_px,), _ = scene.camera.project(torso[None])
    ankles = [
        data.oMf[scene.model.getFrameId(f"{side}_ankle_roll_link")].translation
        for side in ("left", "right")
    ]
    sole_px, _ = scene.camera.project(np.array(ankles))
    rows, _ = np.nonzero(mask)
    assert mask[int(torso_px[1]), int(torso_px[0])]
    assert np.all(sole_px[:, 1] > torso_px[1]), (torso_px, sole_px)
    reference_rows = np.nonzero(result["reference"])[0]
    assert abs(rows.max() - reference_rows.max()) <= 2, (rows.max(), reference_rows.max())


def test_g1_viewer_file_matches_icubs_layout():
    """config/g1/viewer.yaml has iCub's keys (read by the same settings class at start)."""
    import yaml

    def keys(path: Path) -> list[str]:
        return list(yaml.safe_load(path.read_text())["/**"]["ros__parameters"])

    assert keys(PARAMS_FILE) == keys(PARAMS_FILE.parents[1] / "icub" / "viewer.yaml")


def test_g1_initial_posture_picture(scene):
    config = scene.config
    joints = initial_joints(config)
    base = standing_base(scene, joints)
    _, _, mask = scene.silhouette(base, joints)
    q = configuration(scene.model, base, joints)
    result = compare(scene, mask, q)
    assert_g1_picture(scene, mask, q, result)
    # The default camera frames the whole robot: inside the image with a 5 % margin.
    rows, cols = np.nonzero(mask)
    assert rows.min() > 0.05 * HEIGHT and rows.max() < 0.95 * HEIGHT, (rows.min(), rows.max())
    assert cols.min() > 0.05 * WIDTH and cols.max() < 0.95 * WIDTH, (cols.min(), cols.max())
    # The feet stand on z = 0: the sole frames (config tools) are the ground contact of the STL
    # feet, whose lowest vertices are 0.4 mm below them (model fact, 1 mm).
    for mesh in result["meshes"]:
        if "ankle_roll" in mesh.link:
            assert abs(mesh.vertices[:, 2].min()) < 1e-3, (mesh.name, mesh.vertices[:, 2].min())


def test_g1_raised_arm_and_yawed_base_picture(scene):
    config = scene.config
    joints = initial_joints(config)
    joints["left_shoulder_pitch_joint"] = -1.4  # the left arm forward and up
    joints["left_elbow_joint"] = 0.3
    standing = standing_base(scene, joints)
    base = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.6), standing.translation) * pin.SE3(
        standing.rotation, np.zeros(3)
    )
    _, _, mask = scene.silhouette(base, joints)
    q = configuration(scene.model, base, joints)
    result = compare(scene, mask, q)
    assert_g1_picture(scene, mask, q, result)
    # A wrong convention fails: the same picture against the arm-down reference.
    down = configuration(scene.model, base, initial_joints(config))
    assert compare(scene, mask, down)["iou"] < result["iou"] - 0.01
