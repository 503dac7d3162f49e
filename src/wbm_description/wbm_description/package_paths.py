"""Finding package share directories and resolving ``package://`` URIs, without ROS.

A package's share directory is looked up, in order, under every prefix of ``AMENT_PREFIX_PATH``
(full ROS 2 installs and colcon workspaces), the Python environment's prefix, and the cmeel prefix
that Pinocchio-ecosystem wheels such as example-robot-data install into
(``site-packages/cmeel.prefix``).
"""

from __future__ import annotations

import os
import re
import site
import sys
from pathlib import Path

_PACKAGE_URI = re.compile(r"package://([^/\"']+)/([^\"'<>\s]*)")


def candidate_prefixes() -> list[Path]:
    """Install prefixes searched for ``share/<package>``, most specific first."""
    prefixes: list[Path] = []
    for entry in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if entry:
            prefixes.append(Path(entry))
    prefixes.append(Path(sys.prefix))
    for site_dir in [*site.getsitepackages(), site.getusersitepackages()]:
        prefixes.append(Path(site_dir) / "cmeel.prefix")
    seen: set[Path] = set()
    unique = []
    for prefix in prefixes:
        if prefix not in seen:
            seen.add(prefix)
            unique.append(prefix)
    return unique


def find_package_share(package: str) -> Path | None:
    """Share directory of ``package``, or None when no prefix has it."""
    for prefix in candidate_prefixes():
        share = prefix / "share" / package
        if share.is_dir():
            return share
    return None


def resolve_package_uri(uri: str) -> Path | None:
    """File path of a ``package://<pkg>/<path>`` URI, or None when the package is not found.

    example-robot-data's URDFs name meshes as ``package://example-robot-data/robots/...``; the
    package's share directory is then the root.
    """
    match = _PACKAGE_URI.fullmatch(uri)
    if match is None:
        return None
    share = find_package_share(match.group(1))
    if share is None:
        return None
    return share / match.group(2)


def resolve_package_uris_in_text(text: str) -> tuple[str, list[str]]:
    """Replace every ``package://`` URI in a URDF text by an absolute ``file://`` URI.

    Returns:
        The new text and the list of URIs that could not be resolved to an existing file.
    """
    unresolved: list[str] = []

    def replace(match: re.Match[str]) -> str:
        path = resolve_package_uri(match.group(0))
        if path is None or not path.exists():
            unresolved.append(match.group(0))
            return match.group(0)
        return path.resolve().as_uri()

    return _PACKAGE_URI.sub(replace, text), unresolved
