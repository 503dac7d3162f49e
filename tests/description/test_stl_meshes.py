"""STL meshes (G1's visual geometry): found through package:// URIs and loaded as they are.

What the viewer and robot_description consumers do with a model's URDF: resolve its package://
URIs (:func:`wbm_description.package_paths.resolve_package_uris_in_text`) and load the meshes
(Pinocchio's geometry loader, through coal and assimp). The reference is the STL files
themselves, read here by a 20-line binary STL parser: every visual element of the URDF gets its
mesh, with exactly the file's vertices.
"""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from wbm_description import WholeBodyModel
from wbm_description.package_paths import resolve_package_uris_in_text


def read_binary_stl(path: Path) -> np.ndarray:
    """Vertices of a binary STL file, 3 per triangle [file units], (3 n, 3) float32."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 80)
    assert len(data) == 84 + 50 * count, f"{path} is not a binary STL"
    record = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
    triangles = np.frombuffer(data, dtype=record, count=count, offset=84)
    return triangles["vertices"].reshape(-1, 3)


@pytest.fixture(scope="module")
def g1_visuals(g1: WholeBodyModel):
    text, unresolved = resolve_package_uris_in_text(g1.urdf_text)
    assert unresolved == []
    return text, pin.buildGeomFromUrdfString(g1.model, text, pin.GeometryType.VISUAL)


def test_every_visual_mesh_uri_resolves_to_an_stl_file(g1: WholeBodyModel, g1_visuals):
    text, _ = g1_visuals
    files = [m.get("filename") for m in ET.fromstring(text).iter("mesh")]
    assert files, "G1's URDF names its meshes"
    for uri in files:
        assert uri.startswith("file://") and uri.endswith(".STL"), uri
        assert Path(uri.removeprefix("file://")).is_file(), uri


def test_meshes_load_with_the_files_vertices(g1: WholeBodyModel, g1_visuals):
    text, visuals = g1_visuals
    robot = ET.fromstring(text)
    visual_links = [link.get("name") for link in robot.iter("link") for _ in link.iter("visual")]
    # One geometry per <visual> element (Pinocchio names them <link>_<index>).
    assert sorted(g.name.rsplit("_", 1)[0] for g in visuals.geometryObjects) == sorted(
        visual_links
    )
    for geometry in visuals.geometryObjects:
        loaded = np.asarray(geometry.geometry.vertices(), dtype=np.float32)
        expected = np.unique(read_binary_stl(Path(geometry.meshPath)), axis=0)
        # The loader merges the triangles' shared corners; the set of vertices is the file's
        # (float32 in both; mesh scale 1 in G1's URDF).
        np.testing.assert_array_equal(np.unique(loaded, axis=0), expected, err_msg=geometry.name)
