"""The visual geometry of a URDF as triangle meshes, each attached to its link (no ROS).

:func:`load_visuals` reads every ``<link><visual>`` of a URDF text: its origin in the link frame,
its geometry (a ``<mesh>`` file with its ``scale``, or a ``<box>``, ``<cylinder>``, ``<sphere>``)
and its colour (inline ``<material><color>`` or a named top-level material). Mesh files (STL,
OBJ, DAE, ...) are loaded with trimesh; ``package://`` URIs are resolved the way the rest of wbm
does (:mod:`wbm_description.package_paths`).

COLLADA files declare their up axis (``<asset><up_axis>``); the vertices are turned to z up as
the COLLADA specification asks and as RViz shows them (trimesh and Pinocchio's loader both keep
the file's axes: iCub's Y_UP feet would stand across the sole, its chest would hang in front).

A visual that cannot be loaded (missing file, unresolvable URI, unreadable mesh) does not stop
the others: it is left out and reported in :attr:`VisualSet.problems`, naming the link and file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pinocchio as pin
import trimesh

from wbm_description.package_paths import resolve_package_uri

#: Rotation taking a COLLADA file's up axis to z (applied to the vertices).
_UP_AXIS_TO_Z = {
    "Z_UP": np.eye(3),
    "Y_UP": pin.rpy.rpyToMatrix(np.pi / 2.0, 0.0, 0.0),
    "X_UP": pin.rpy.rpyToMatrix(0.0, -np.pi / 2.0, 0.0),
}
_UP_AXIS = re.compile(rb"<up_axis>\s*([XYZ]_UP)\s*</up_axis>")


@dataclass(frozen=True)
class Visual:
    """One visual element of a link, as triangles in the link frame.

    Attributes:
        link: The URDF link it is attached to.
        index: Its index among the link's visuals (0 for the first).
        source: The mesh file (resolved path) or the primitive ("box", "cylinder", "sphere").
        vertices: (n, 3) vertices in the link frame [m] (origin and scale applied), float32.
        faces: (m, 3) vertex indices of the triangles, uint32.
        color_rgba: The URDF material colour, components in [0, 1], or None when unset.
    """

    link: str
    index: int
    source: str
    vertices: np.ndarray
    faces: np.ndarray
    color_rgba: tuple[float, float, float, float] | None


@dataclass
class VisualSet:
    """The loadable visuals of a URDF and what could not be loaded.

    Attributes:
        visuals: Every visual that loaded, in URDF order.
        problems: One line per visual left out, naming the link and the file and why.
    """

    visuals: list[Visual] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def links(self) -> list[str]:
        """The links that carry at least one visual, in URDF order, each once."""
        return list(dict.fromkeys(visual.link for visual in self.visuals))


def _floats(text: str | None, count: int, default: float) -> np.ndarray:
    if text is None:
        return np.full(count, default)
    values = np.array([float(x) for x in text.split()])
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        raise ValueError(f"expected {count} finite numbers, got {text!r}")
    return values


def _origin(element: ET.Element | None) -> pin.SE3:
    """The placement of an ``<origin xyz rpy>`` (identity when absent)."""
    if element is None:
        return pin.SE3.Identity()
    xyz = _floats(element.get("xyz"), 3, 0.0)
    rpy = _floats(element.get("rpy"), 3, 0.0)
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz)


def _color(material: ET.Element | None, named: dict[str, tuple]) -> tuple | None:
    if material is None:
        return None
    color = material.find("color")
    if color is not None and color.get("rgba"):
        rgba = _floats(color.get("rgba"), 4, 1.0)
        return tuple(float(c) for c in np.clip(rgba, 0.0, 1.0))
    return named.get(material.get("name", ""))


def mesh_file(filename: str, urdf_path: Path | None) -> Path:
    """The file a URDF ``<mesh filename>`` names.

    Args:
        filename: ``package://pkg/path``, ``file:///abs/path``, an absolute path, or a path
            relative to the URDF's directory.
        urdf_path: The URDF file (for relative paths), or None.

    Raises:
        FileNotFoundError: The URI cannot be resolved or the file does not exist; the message
            names the filename.
    """
    if filename.startswith("package://"):
        path = resolve_package_uri(filename)
        if path is None:
            raise FileNotFoundError(f"'{filename}': its package is not found")
    elif filename.startswith("file://"):
        path = Path(unquote(urlparse(filename).path))
    else:
        path = Path(filename)
        if not path.is_absolute() and urdf_path is not None:
            path = Path(urdf_path).parent / path
    if not path.is_file():
        raise FileNotFoundError(f"'{filename}': no such file {path}")
    return path


def collada_up_axis(path: Path) -> str:
    """The ``<up_axis>`` of a COLLADA file ("Y_UP" is COLLADA's default), read from its head."""
    with open(path, "rb") as file:
        head = file.read(65536)
    match = _UP_AXIS.search(head)
    return match.group(1).decode() if match else "Y_UP"


def load_mesh(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (z up, file units) and triangles of a mesh file.

    Raises:
        ValueError: The file holds no triangles or cannot be parsed.
    """
    try:
        mesh = trimesh.load(str(path), force="mesh", process=False)
    except Exception as error:  # trimesh raises many types for unreadable files
        raise ValueError(f"{type(error).__name__}: {error}") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ValueError("no triangles in the file")
    vertices = np.asarray(mesh.vertices, dtype=float)
    if path.suffix.lower() == ".dae":
        vertices = vertices @ _UP_AXIS_TO_Z[collada_up_axis(path)].T
    return vertices, np.asarray(mesh.faces, dtype=np.uint32)


def _primitive(geometry: ET.Element) -> tuple[str, trimesh.Trimesh] | None:
    box = geometry.find("box")
    if box is not None:
        return "box", trimesh.creation.box(extents=_floats(box.get("size"), 3, 0.0))
    cylinder = geometry.find("cylinder")
    if cylinder is not None:
        radius = float(cylinder.get("radius", "nan"))
        length = float(cylinder.get("length", "nan"))
        return "cylinder", trimesh.creation.cylinder(radius=radius, height=length, sections=24)
    sphere = geometry.find("sphere")
    if sphere is not None:
        radius = float(sphere.get("radius", "nan"))
        return "sphere", trimesh.creation.icosphere(subdivisions=2, radius=radius)
    return None


def load_visuals(
    urdf_text: str, urdf_path: Path | None = None, links: set[str] | None = None
) -> VisualSet:
    """The visuals of a URDF as triangle meshes in their link frames.

    Args:
        urdf_text: The URDF.
        urdf_path: Its file (for mesh paths relative to it), or None.
        links: Only the visuals of these links (all when None).

    Returns:
        The visuals that loaded, and one problem line per visual that did not.
    """
    root = ET.fromstring(urdf_text)
    named = {}
    for material in root.findall("material"):
        color = _color(material, {})
        if color is not None:
            named[material.get("name", "")] = color
    result = VisualSet()
    for link in root.findall("link"):
        name = link.get("name", "")
        if links is not None and name not in links:
            continue
        for index, visual in enumerate(link.findall("visual")):
            geometry = visual.find("geometry")
            where = f"link '{name}' visual {index}"
            try:
                origin = _origin(visual.find("origin"))
                color = _color(visual.find("material"), named)
                if geometry is None:
                    raise ValueError("no <geometry>")
                mesh = geometry.find("mesh")
                if mesh is not None:
                    filename = mesh.get("filename", "")
                    where += f" mesh '{filename}'"
                    path = mesh_file(filename, urdf_path)
                    vertices, faces = load_mesh(path)
                    vertices = vertices * _floats(mesh.get("scale"), 3, 1.0)
                    source = str(path)
                else:
                    primitive = _primitive(geometry)
                    if primitive is None:
                        raise ValueError("no <mesh>, <box>, <cylinder> or <sphere>")
                    source, shape = primitive
                    vertices = np.asarray(shape.vertices, dtype=float)
                    faces = np.asarray(shape.faces, dtype=np.uint32)
            except (OSError, ValueError) as error:
                result.problems.append(f"{where}: {error}")
                continue
            vertices = vertices @ origin.rotation.T + origin.translation
            if not np.all(np.isfinite(vertices)):
                result.problems.append(f"{where}: non-finite vertices")
                continue
            result.visuals.append(
                Visual(name, index, source, vertices.astype(np.float32), faces, color)
            )
    return result
