"""Live plot data over a sliding window, and the top view of CoM and ZMP (no ROS).

:class:`SlidingWindow` keeps named samples over the last ``span`` seconds (of simulated time)
for the tracking-error time plot (drawn by uPlot in the page). :func:`top_view_image` draws the
CoM and ZMP traces over the support polygon, seen from above (world x right, y up, equal axes),
as an RGB image the page shows: uPlot's aligned mode cannot draw x-y paths.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Mapping, Sequence

import numpy as np
from PIL import Image, ImageDraw

SUPPORT_COLOR = (40, 80, 220)
COM_COLOR = (20, 170, 60)
ZMP_COLOR = (220, 30, 30)


class SlidingWindow:
    """Named samples over the last ``span`` seconds.

    Args:
        span: Time span kept [s].
    """

    def __init__(self, span: float):
        self.span = float(span)
        self._samples: collections.deque[tuple[float, dict[str, float]]] = collections.deque()

    def add(self, time: float, values: Mapping[str, float]) -> None:
        """Add a sample at ``time`` [s]; samples older than ``time - span`` are dropped."""
        if self._samples and time < self._samples[-1][0]:
            self._samples.clear()  # time went back (a reset): start over
        self._samples.append((float(time), dict(values)))
        while self._samples and self._samples[0][0] < time - self.span:
            self._samples.popleft()

    def names(self) -> list[str]:
        """Every name seen in the window, sorted."""
        return sorted({name for _, values in self._samples for name in values})

    def arrays(self, names: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Times [s] and one array per name (NaN where a sample lacks the name)."""
        times = np.array([t for t, _ in self._samples], dtype=float)
        columns = [
            np.array([values.get(name, math.nan) for _, values in self._samples], dtype=float)
            for name in names
        ]
        return times, columns

    def __len__(self) -> int:
        return len(self._samples)


def top_view_image(
    support_polygon: np.ndarray | None,
    com: np.ndarray | None,
    zmp: np.ndarray | None,
    *,
    size: int = 240,
    margin: float = 0.05,
) -> np.ndarray:
    """CoM and ZMP traces over the support polygon, from above, as an RGB image.

    Args:
        support_polygon: (m, 2) vertices in the world [m], or None.
        com: (n, 2) CoM ground projections, oldest first [m], or None.
        zmp: (k, 2) ZMP points, oldest first [m], or None.
        size: Image width and height [px].
        margin: Space around the drawn points [m].

    Returns:
        (size, size, 3) uint8 image; world x to the right, y up, same scale on both.
    """
    image = Image.new("RGB", (size, size), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    given = [a for a in (support_polygon, com, zmp) if a is not None]
    sets = [np.asarray(a, float).reshape(-1, 2) for a in given]
    points = np.vstack(sets) if sets else np.zeros((0, 2))
    points = points[np.all(np.isfinite(points), axis=1)]
    if len(points) == 0:
        draw.text((8, size // 2 - 6), "waiting for CoM and ZMP", fill=(120, 120, 120))
        return np.asarray(image)
    lower, upper = points.min(axis=0) - margin, points.max(axis=0) + margin
    center = (lower + upper) / 2.0
    extent = float(max(upper - lower))
    scale = (size - 20) / extent  # px per m

    def pixels(xy: np.ndarray) -> list[tuple[float, float]]:
        xy = np.asarray(xy, float).reshape(-1, 2)
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        u = size / 2.0 + (xy[:, 0] - center[0]) * scale
        v = size / 2.0 - (xy[:, 1] - center[1]) * scale
        return list(zip(u.tolist(), v.tolist(), strict=True))

    if support_polygon is not None and len(support_polygon) >= 2:
        ring = pixels(support_polygon)
        draw.line([*ring, ring[0]], fill=SUPPORT_COLOR, width=2)
    for trace, color in ((com, COM_COLOR), (zmp, ZMP_COLOR)):
        if trace is None or len(trace) == 0:
            continue
        path = pixels(trace)
        if len(path) >= 2:
            draw.line(path, fill=color, width=1)
        if path:
            x, y = path[-1]
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=color)
    bar = 0.1 * scale  # a 10 cm scale bar
    draw.line([(8, size - 8), (8 + bar, size - 8)], fill=(0, 0, 0), width=2)
    draw.text((10, size - 22), "10 cm", fill=(0, 0, 0))
    draw.text((8, 4), "CoM", fill=COM_COLOR)
    draw.text((40, 4), "ZMP", fill=ZMP_COLOR)
    draw.text((72, 4), "support", fill=SUPPORT_COLOR)
    return np.asarray(image)
