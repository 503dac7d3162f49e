"""What a whole-body controller cares about, as drawable shapes: CoM, CoP/ZMP, support, forces.

:func:`marker_scene` computes, for one configuration and the latest F/T readings, a fixed list
of :class:`MarkerShape` slots (same namespace and id every time, so a display can update them in
place; a slot whose quantity is undefined is ``visible=False``):

- ``com``: sphere at the centre of mass;
- ``com_ground``: sphere at its vertical projection on the ground, and ``com_line`` joining both;
- ``cop``: sphere at the centre of pressure (= ZMP on flat ground) of all loaded feet, from the
  F/T sensors (seed 004, eqs 8.5-8.8); hidden when no foot is loaded. A robot without F/T
  sensors has ``cop_estimated`` instead (the namespace says it is not measured): the quasi-static
  ZMP estimate, the CoM's ground projection (exact when the momentum does not change; the
  controller's dynamic estimate is in its diagnostics, :mod:`wbm_control.zmp_estimation`);
- ``support_polygon``: closed line around the convex hull of the loaded soles' corners;
- ``contact_force``: one arrow per F/T sensor, from its foot's CoP along the ground reaction
  force, length proportional to its magnitude; hidden when that foot is unloaded.

Everything is in the world frame, z up. Pure numpy and Pinocchio (no ROS): the state publisher
turns these into ``visualization_msgs/Marker`` and the browser viewer into MeshCat objects.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.support_geometry import center_of_pressure, convex_hull_2d


class MarkerKind(enum.StrEnum):
    """Shape of a marker.

    Attributes:
        SPHERE: ``points[0]`` is the centre; ``scale`` holds the diameters [m].
        LINE_STRIP: ``points`` are the vertices; ``scale[0]`` is the line width [m].
        ARROW: ``points`` are (start, end); ``scale`` is (shaft diameter, head diameter,
            head length) [m].
    """

    SPHERE = "sphere"
    LINE_STRIP = "line_strip"
    ARROW = "arrow"


@dataclass(frozen=True)
class MarkerShape:
    """One drawable marker in the world frame.

    Attributes:
        namespace: Marker namespace (what it shows).
        marker_id: Id, unique within the namespace.
        kind: Shape.
        points: (n, 3) points in the world [m] (see :class:`MarkerKind`); empty when hidden.
        scale: Sizes [m] (see :class:`MarkerKind`).
        color_rgba: Colour, components in [0, 1].
        visible: False when the quantity is undefined (e.g. the CoP with no foot loaded).
    """

    namespace: str
    marker_id: int
    kind: MarkerKind
    points: np.ndarray
    scale: tuple[float, float, float]
    color_rgba: tuple[float, float, float, float]
    visible: bool = True


@dataclass(frozen=True)
class MarkerOptions:
    """How markers are computed and drawn.

    Attributes:
        ground_height: Height of the ground plane [m] (CoP plane, CoM projection).
        min_normal_force: A foot is loaded when its ground reaction pushes up with at least this
            force [N]; the CoP needs this much in total (seed 004's guard against 0 / 0).
        force_scale: Length of a contact force arrow per newton [m/N].
        sphere_diameter: Diameter of the CoM, projection and CoP spheres [m].
        line_width: Width of the support polygon and CoM line [m].
    """

    ground_height: float = 0.0
    min_normal_force: float = 5.0
    force_scale: float = 0.002
    sphere_diameter: float = 0.04
    line_width: float = 0.005

    def __post_init__(self) -> None:
        for name in ("ground_height", "min_normal_force", "force_scale"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise InputError(name, "a finite number", value)
        for name in ("min_normal_force", "force_scale"):
            if getattr(self, name) < 0.0:
                raise InputError(name, "a number >= 0", getattr(self, name))
        for name in ("sphere_diameter", "line_width"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise InputError(name, "a finite number > 0 [m]", value)


GREEN = (0.1, 0.8, 0.2, 1.0)
RED = (0.9, 0.1, 0.1, 1.0)
BLUE = (0.1, 0.3, 0.9, 1.0)
ORANGE = (1.0, 0.55, 0.0, 1.0)


@dataclass(frozen=True)
class MarkerScene:
    """The markers of one state, and the quantities they show.

    Attributes:
        com: Centre of mass in the world [m], (3,).
        cop: Centre of pressure on the ground [m], (3,), or None with no foot loaded; for a
            robot without F/T sensors the estimate (``cop_estimated``).
        support_polygon: (m, 2) counter-clockwise hull of the loaded soles' corners [m].
        ground_reactions: Per F/T sensor, the ground-on-robot wrench (force, torque about the
            world origin), world axes.
        markers: Every marker slot, always in the same order.
        cop_estimated: Whether ``cop`` is estimated (no F/T sensors) rather than measured.
    """

    com: np.ndarray
    cop: np.ndarray | None
    support_polygon: np.ndarray
    ground_reactions: dict[str, np.ndarray] = field(default_factory=dict)
    markers: tuple[MarkerShape, ...] = ()
    cop_estimated: bool = False


def _sphere(namespace: str, center: np.ndarray | None, diameter: float, color) -> MarkerShape:
    visible = center is not None
    points = np.asarray(center, dtype=float).reshape(1, 3) if visible else np.zeros((0, 3))
    return MarkerShape(namespace, 0, MarkerKind.SPHERE, points, (diameter,) * 3, color, visible)


def marker_scene(
    sensors: FootForceSensors,
    q: np.ndarray,
    readings: Mapping[str, np.ndarray],
    options: MarkerOptions | None = None,
) -> MarkerScene:
    """The marker scene of a configuration and F/T readings.

    Args:
        sensors: The robot's F/T sensors (and its whole-body model, ``sensors.model``).
        q: Configuration, Pinocchio layout (nq,).
        readings: Latest reading per F/T sensor name, (force [N], torque [N m]) child side on
            parent side at the sensor origin in sensor axes; sensors without a reading count as
            unloaded.
        options: How markers are computed and drawn (defaults: :class:`MarkerOptions`).

    Returns:
        The scene; its marker slots are always the same (namespace, id) in the same order.
    """
    options = options or MarkerOptions()
    model = sensors.model
    q = model.check_configuration(q)
    h = options.ground_height
    com = model.com_position(q)
    reactions = sensors.ground_reactions(q, readings)

    loaded = {
        name: wrench for name, wrench in reactions.items() if wrench[2] >= options.min_normal_force
    }
    cop = center_of_pressure(
        loaded.values(), ground_height=h, min_normal_force=options.min_normal_force
    )
    corners = []
    for sensor in sensors.sensors:
        if sensor.name not in loaded:
            continue
        for sole_name in sensor.sole_names:
            sole = model.config.sole(sole_name)
            placement = model.frame_placement(q, sole.frame)
            corners.extend(placement.act(corner) for corner in sole.corners())
    hull = convex_hull_2d(corners) if corners else np.zeros((0, 2))
    estimated = not sensors.sensors
    if estimated:
        cop = np.array([com[0], com[1], h])

    markers = [
        _sphere("com", com, options.sphere_diameter, GREEN),
        _sphere("com_ground", np.array([com[0], com[1], h]), options.sphere_diameter, GREEN),
        MarkerShape(
            "com_line",
            0,
            MarkerKind.LINE_STRIP,
            np.array([com, [com[0], com[1], h]]),
            (options.line_width, 0.0, 0.0),
            GREEN,
        ),
        _sphere("cop_estimated" if estimated else "cop", cop, options.sphere_diameter, RED),
    ]
    if len(hull) >= 2:
        ring = np.column_stack([hull, np.full(len(hull), h)])
        ring = np.vstack([ring, ring[:1]])
        markers.append(
            MarkerShape(
                "support_polygon",
                0,
                MarkerKind.LINE_STRIP,
                ring,
                (options.line_width, 0.0, 0.0),
                BLUE,
            )
        )
    else:
        markers.append(
            MarkerShape(
                "support_polygon",
                0,
                MarkerKind.LINE_STRIP,
                np.zeros((0, 3)),
                (options.line_width, 0.0, 0.0),
                BLUE,
                visible=False,
            )
        )
    for index, sensor in enumerate(sensors.sensors):
        wrench = loaded.get(sensor.name)
        start = (
            None
            if wrench is None
            else center_of_pressure([wrench], ground_height=h, min_normal_force=1e-9)
        )
        if wrench is None or start is None:
            points, visible = np.zeros((0, 3)), False
        else:
            points, visible = np.array([start, start + options.force_scale * wrench[:3]]), True
        shaft = 2.0 * options.line_width
        markers.append(
            MarkerShape(
                "contact_force",
                index,
                MarkerKind.ARROW,
                points,
                (shaft, 2.0 * shaft, 3.0 * shaft),
                ORANGE,
                visible,
            )
        )
    return MarkerScene(com, cop, hull, reactions, tuple(markers), cop_estimated=estimated)
