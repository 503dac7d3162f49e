"""The reference picture: the robot's visual meshes projected through a camera, with numpy.

Independent of the viewer's code on purpose: the visuals are placed by Pinocchio's own URDF
geometry model (``pin.buildGeomFromUrdf`` + ``pin.updateGeometryPlacements``, which applies the
``<visual><origin>``) from the mesh paths and scales Pinocchio resolved, the triangles are
read with trimesh (not Pinocchio's own loader, coal/assimp: it drops the face of iCub's
multi-part head mesh, 21 % of the head's pixels), COLLADA's up axis is read with pycollada, and
the triangles are rasterized here (pixel centres
inside the projected triangle) through a pinhole camera built from the three.js conventions
(look-at with an up vector, vertical field of view, image width / height as aspect). Works for
any robot config (iCub's DAE meshes, G1's STL meshes).
"""

from __future__ import annotations

import math
import site
from dataclasses import dataclass
from pathlib import Path

import coal
import collada
import numpy as np
import pinocchio as pin
import trimesh

from wbm_description.robot_config import RobotConfig

_UP_TO_Z = {
    "Z_UP": np.eye(3),
    "Y_UP": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),  # y -> z
    "X_UP": np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),  # x -> z
}


@dataclass(frozen=True)
class PinholeCamera:
    """A three.js PerspectiveCamera looking at a point.

    Attributes:
        position: Camera position in the world [m].
        look_at: Point at the image centre [m].
        up: World direction that appears up.
        fov_deg: Vertical field of view [deg].
        width: Image width [px].
        height: Image height [px].
    """

    position: np.ndarray
    look_at: np.ndarray
    up: np.ndarray
    fov_deg: float
    width: int
    height: int

    @classmethod
    def parse(cls, line: str, width: int, height: int) -> PinholeCamera:
        """From ``position=x,y,z look_at=x,y,z up=x,y,z fov_deg=f`` (the node's camera line)."""
        fields = dict(part.split("=", 1) for part in line.split())

        def vector(name: str) -> np.ndarray:
            return np.array([float(v) for v in fields[name].split(",")])

        return cls(
            vector("position"),
            vector("look_at"),
            vector("up"),
            float(fields["fov_deg"]),
            width,
            height,
        )

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel coordinates (u right, v down, pixel centres at i + 0.5) and depths [m]."""
        backward = self.position - self.look_at
        backward = backward / np.linalg.norm(backward)  # camera z (it looks along -z)
        right = np.cross(self.up, backward)
        right = right / np.linalg.norm(right)
        true_up = np.cross(backward, right)
        relative = np.asarray(points, float) - self.position
        x, y = relative @ right, relative @ true_up
        depth = -(relative @ backward)
        focal = 1.0 / math.tan(math.radians(self.fov_deg) / 2.0)
        aspect = self.width / self.height
        ndc_x = focal / aspect * x / depth
        ndc_y = focal * y / depth
        u = (ndc_x + 1.0) / 2.0 * self.width
        v = (1.0 - ndc_y) / 2.0 * self.height
        return np.column_stack([u, v]), depth

    def ground_point(self, u: float, v: float) -> np.ndarray:
        """Where the ray through page pixel (u, v) meets the ground z = 0 [m] (inverse of
        :meth:`project` for points on the ground)."""
        backward = self.position - self.look_at
        backward = backward / np.linalg.norm(backward)
        right = np.cross(self.up, backward)
        right = right / np.linalg.norm(right)
        true_up = np.cross(backward, right)
        focal = 1.0 / math.tan(math.radians(self.fov_deg) / 2.0)
        aspect = self.width / self.height
        ndc_x, ndc_y = 2.0 * u / self.width - 1.0, 1.0 - 2.0 * v / self.height
        direction = ndc_x * aspect / focal * right + ndc_y / focal * true_up - backward
        assert direction[2] < 0.0, "the pixel's ray does not go down to the ground"
        return self.position - self.position[2] / direction[2] * direction


@dataclass(frozen=True)
class ReferenceMesh:
    """One visual geometry in the world: its name, link and triangles (world frame [m])."""

    name: str
    link: str
    vertices: np.ndarray
    faces: np.ndarray


def package_directories() -> list[str]:
    """Where example-robot-data's ``package://`` URIs resolve (the cmeel prefix's share)."""
    return [str(Path(s) / "cmeel.prefix" / "share") for s in site.getsitepackages()]


def full_model(config: RobotConfig) -> pin.Model:
    """The URDF's kinematic model with a free-flyer base (every joint, not only actuated)."""
    if config.floating_base:
        return pin.buildModelFromUrdf(str(config.urdf_path), pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(str(config.urdf_path))


def configuration(model: pin.Model, base: pin.SE3 | None, joints: dict[str, float]) -> np.ndarray:
    """q of the full model: a base placement and joint values by name (others at 0)."""
    q = pin.neutral(model)
    if base is not None:
        q[:7] = pin.SE3ToXYZQUAT(base)
    for name, value in joints.items():
        q[model.idx_qs[model.getJointId(name)]] = value
    return q


def standing_base(model: pin.Model, joints: dict[str, float], frame: str) -> pin.SE3:
    """The base placement that puts ``frame`` (a sole) at the world origin."""
    data = model.createData()
    q = configuration(model, pin.SE3.Identity(), joints)
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)].inverse()


def reference_meshes(
    config: RobotConfig, model: pin.Model, q: np.ndarray, *, skip_files: tuple[str, ...] = ()
) -> list[ReferenceMesh]:
    """The URDF's visual meshes in the world at ``q`` (Pinocchio's geometry model).

    Args:
        config: The robot config (its URDF).
        model: :func:`full_model` of it.
        q: Configuration of ``model``.
        skip_files: Mesh file names (basename) to leave out.
    """
    visual = pin.buildGeomFromUrdf(
        model, str(config.urdf_path), pin.GeometryType.VISUAL, package_dirs=package_directories()
    )
    data, geometry_data = model.createData(), visual.createData()
    pin.framesForwardKinematics(model, data, q)
    pin.updateGeometryPlacements(model, data, visual, geometry_data)
    meshes = []
    for index, geometry in enumerate(visual.geometryObjects):
        if geometry.meshPath and Path(geometry.meshPath).name in skip_files:
            continue
        vertices, faces = _triangles(geometry)
        placement = geometry_data.oMg[index]
        world = vertices @ placement.rotation.T + placement.translation
        link = model.frames[geometry.parentFrame].name
        meshes.append(ReferenceMesh(geometry.name, link, world, faces))
    return meshes


def _triangles(geometry: pin.GeometryObject) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (geometry frame, z up, scaled) and faces of one visual geometry."""
    shape = geometry.geometry
    if isinstance(shape, coal.Box):
        mesh = trimesh.creation.box(extents=2.0 * np.asarray(shape.halfSide))
    elif isinstance(shape, coal.Cylinder):
        mesh = trimesh.creation.cylinder(radius=shape.radius, height=2.0 * shape.halfLength)
    elif isinstance(shape, coal.Sphere):
        mesh = trimesh.creation.icosphere(subdivisions=3, radius=shape.radius)
    else:
        mesh = trimesh.load(geometry.meshPath, force="mesh", process=False)
        vertices = np.asarray(mesh.vertices, dtype=float)
        if geometry.meshPath.lower().endswith(".dae"):
            up = collada.Collada(geometry.meshPath).assetInfo.upaxis or "Y_UP"
            vertices = vertices @ _UP_TO_Z[str(up)].T
        return vertices * geometry.meshScale, np.asarray(mesh.faces, dtype=np.int64)
    return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int64)


def rasterize(meshes: list[ReferenceMesh], camera: PinholeCamera) -> np.ndarray:
    """Silhouette of the meshes: True where a pixel centre lies inside a projected triangle."""
    mask = np.zeros((camera.height, camera.width), dtype=bool)
    for mesh in meshes:
        mask |= rasterize_triangles(mesh.vertices, mesh.faces, camera)
    return mask


def rasterize_triangles(
    vertices: np.ndarray, faces: np.ndarray, camera: PinholeCamera
) -> np.ndarray:
    """Silhouette of one triangle set (every vertex must be in front of the camera)."""
    mask = np.zeros((camera.height, camera.width), dtype=bool)
    if len(faces) == 0:
        return mask
    pixels, depth = camera.project(vertices)
    assert np.all(depth > 0.01), "a vertex behind the camera's near plane"
    triangles = pixels[faces]  # (n, 3, 2)
    lower = np.floor(triangles.min(axis=1) - 0.5).astype(int)
    upper = np.ceil(triangles.max(axis=1) - 0.5).astype(int)
    lower = np.maximum(lower, 0)
    upper = np.minimum(upper, [camera.width - 1, camera.height - 1])
    sizes = np.maximum(upper - lower + 1, 0).max(axis=1)
    keep = sizes > 0
    triangles, lower, sizes = triangles[keep], lower[keep], sizes[keep]
    # Group triangles by bounding-box size (powers of two) and test pixel centres in batches.
    bins = np.ceil(np.log2(np.maximum(sizes, 1))).astype(int)
    for b in np.unique(bins):
        side = 2**b
        selected = np.nonzero(bins == b)[0]
        grid = np.arange(side)
        offsets = np.stack(np.meshgrid(grid, grid, indexing="xy"), axis=-1).reshape(-1, 2)
        batch = max(1, 2_000_000 // len(offsets))
        for start in range(0, len(selected), batch):
            chosen = selected[start : start + batch]
            corners = lower[chosen]  # (m, 2)
            centers = corners[:, None, :] + offsets[None, :, :] + 0.5  # (m, k, 2)
            tri = triangles[chosen]
            inside = _inside(tri, centers)
            cols = (corners[:, None, 0] + offsets[None, :, 0])[inside]
            rows = (corners[:, None, 1] + offsets[None, :, 1])[inside]
            valid = (cols < camera.width) & (rows < camera.height)
            mask[rows[valid], cols[valid]] = True
    return mask


def _inside(triangles: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Whether points (m, k, 2) lie in their triangle (m, 3, 2), either winding."""
    a, b, c = (triangles[:, i, None, :] for i in range(3))

    def edge(p, q):
        return (q[..., 0] - p[..., 0]) * (points[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (
            points[..., 0] - p[..., 0]
        )

    e0, e1, e2 = edge(a, b), edge(b, c), edge(c, a)
    return ((e0 >= 0) & (e1 >= 0) & (e2 >= 0)) | ((e0 <= 0) & (e1 <= 0) & (e2 <= 0))


def intersection_over_union(a: np.ndarray, b: np.ndarray) -> float:
    """|a and b| / |a or b| of two masks."""
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0


def centroid(mask: np.ndarray) -> np.ndarray:
    """(column, row) centroid of a mask [px]."""
    rows, cols = np.nonzero(mask)
    return np.array([cols.mean(), rows.mean()])
