"""Pinocchio's vectors of placements and motions as float arrays over its own memory.

Pinocchio keeps ``data.oMi`` / ``data.oMf`` as contiguous vectors of SE3 (each a 3 x 3
rotation, column-major, then a translation: 12 doubles) and ``data.v`` / ``data.a`` as
contiguous vectors of Motion (linear then angular: 6 doubles). A view reads them in place
(a kernel's argument, :mod:`wbm_control.jit.kinematics_kernels`) instead of one Python object
and one copy per element. Each view is checked against the elements' own views (addresses,
order and contents) when it is made; where the layout differs (another build of Pinocchio),
:class:`DataViews` copies the elements into arrays of the same layout instead, at each
:meth:`DataViews.refresh`.

A view is valid while its ``pin.Data`` lives and is not resized: :class:`DataViews` keeps a
reference to the data (never resized by the controller: Pinocchio sizes it at
``createData``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pinocchio as pin

_DOUBLE = ctypes.sizeof(ctypes.c_double)


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _contiguous_view(
    items: Sequence[Any], n: int, parts: Callable[[Any], tuple[np.ndarray, ...]], width: int
) -> np.ndarray | None:
    """The n items as one (n x width) array over their memory, or None where it is not one.

    ``parts(item)`` gives the item's own views, in the order of its doubles in a row (each
    read in Fortran order); they must lie one after the other, rows ``width`` doubles apart.
    """
    if n == 0:
        return None
    start = _address(parts(items[0])[0])
    for i in range(n):
        offset = start + i * width * _DOUBLE
        for part in parts(items[i]):
            if _address(part) != offset or not part.flags.f_contiguous:
                return None
            offset += part.size * _DOUBLE
        if offset != start + (i + 1) * width * _DOUBLE:
            return None
    buffer = (ctypes.c_double * (width * n)).from_address(start)
    view = np.ctypeslib.as_array(buffer).reshape(n, width)
    for i in range(n):  # the same bytes (NaN-safe: uninitialized data may hold any)
        expected = np.concatenate([part.ravel(order="F") for part in parts(items[i])])
        if view[i].tobytes() != expected.tobytes():
            return None
    return view


def _placement_parts(placement: pin.SE3) -> tuple[np.ndarray, np.ndarray]:
    return placement.rotation, placement.translation


def _motion_parts(motion: pin.Motion) -> tuple[np.ndarray, np.ndarray]:
    return motion.linear, motion.angular


def placements_view(placements: Sequence[pin.SE3], n: int) -> np.ndarray | None:
    """``data.oMi`` or ``data.oMf`` (n elements) as (n x 12) rows over Pinocchio's memory."""
    return _contiguous_view(placements, n, _placement_parts, 12)


def motions_view(motions: Sequence[pin.Motion], n: int) -> np.ndarray | None:
    """``data.v`` or ``data.a`` (n elements) as (n x 6) rows over Pinocchio's memory."""
    return _contiguous_view(motions, n, _motion_parts, 6)


def copy_placements(placements: Sequence[pin.SE3], out: np.ndarray) -> None:
    """The copying fallback of :func:`placements_view`: the same rows, copied into ``out``."""
    for i in range(out.shape[0]):
        placement = placements[i]
        out[i, :9] = placement.rotation.ravel(order="F")
        out[i, 9:] = placement.translation


def copy_motions(motions: Sequence[pin.Motion], out: np.ndarray) -> None:
    """The copying fallback of :func:`motions_view`: the same rows, copied into ``out``."""
    for i in range(out.shape[0]):
        out[i] = motions[i].vector


#: The Eigen arrays of a ``pin.Data`` the kernel reads (attribute of :class:`DataViews`, the
#: data's attribute and element, and the numpy order the kernel is compiled for).
EIGEN_ARRAYS: tuple[tuple[str, str, int | None, str], ...] = (
    ("joint_jacobians", "J", None, "F"),
    ("mass_upper", "M", None, "F"),
    ("com_jacobian", "Jcom", None, "F"),
    ("bias_forces", "nle", None, "C"),
    ("com", "com", 0, "C"),
    ("com_velocity", "vcom", 0, "C"),
    ("com_acceleration", "acom", 0, "C"),
)


def _eigen_array(data: pin.Data, attribute: str, element: int | None) -> np.ndarray:
    value = getattr(data, attribute)
    return value if element is None else value[element]


def _is_stable_view(data: Any, attribute: str, element: int | None, order: str) -> bool:
    """Whether ``data.<attribute>[element]`` is a view of the data in the kernel's order.

    A view: the same memory at each read, not its own; ``order`` "C" or "F".
    """
    first = _eigen_array(data, attribute, element)
    second = _eigen_array(data, attribute, element)
    return (
        isinstance(first, np.ndarray)
        and not first.flags.owndata
        and first.flags.writeable
        and _address(first) == _address(second)
        and (first.flags.f_contiguous if order == "F" else first.flags.c_contiguous)
    )


class DataViews:
    """What the frame kinematics kernel reads of a data, as arrays over Pinocchio's memory.

    The vectors of placements and motions (:func:`placements_view`, :func:`motions_view`) and
    Pinocchio's Eigen arrays (:data:`EIGEN_ARRAYS`: eigenpy returns views of them, checked
    here: the same memory at each read); what is not a view of the data is copied (or read
    again) at each :meth:`refresh`, into arrays of the same layout and order.

    Args:
        model: The model of ``data``.
        data: Pinocchio data (kept alive by this object).
        in_place: Read Pinocchio's memory where its layout allows (the default); False:
            always the copying fallback (tests).

    Attributes:
        joint_placements: (njoints x 12) (:func:`placements_view`).
        frame_placements: (nframes x 12).
        joint_velocities: (njoints x 6) (:func:`motions_view`).
        joint_accelerations: (njoints x 6).
        joint_jacobians: ``data.J`` (6 x nv, Fortran order); ``mass_upper``: ``data.M``;
            ``com_jacobian``: ``data.Jcom``; ``bias_forces``: ``data.nle``; ``com``,
            ``com_velocity``, ``com_acceleration``: ``data.com[0]``, ``vcom[0]``, ``acom[0]``;
            ``momentum``: ``data.hg.vector`` (linear then angular).
        copied: The arrays :meth:`refresh` copies (none where every view is in place).
    """

    def __init__(self, model: pin.Model, data: pin.Data, *, in_place: bool = True):
        self.model = model
        self.data = data
        njoints, nframes = model.njoints, model.nframes
        sources: list[tuple[str, Any, int, int, Callable[..., np.ndarray | None]]] = [
            ("joint_placements", data.oMi, njoints, 12, placements_view),
            ("frame_placements", data.oMf, nframes, 12, placements_view),
            ("joint_velocities", data.v, njoints, 6, motions_view),
            ("joint_accelerations", data.a, njoints, 6, motions_view),
        ]
        self.copied: tuple[str, ...] = ()
        for name, items, n, width, make_view in sources:
            view = make_view(items, n) if in_place else None
            if view is None:
                view = np.zeros((n, width))
                self.copied += (name,)
            setattr(self, name, view)
        for name, attribute, element, order in EIGEN_ARRAYS:
            if in_place and _is_stable_view(data, attribute, element, order):
                setattr(self, name, _eigen_array(data, attribute, element))
            else:
                self.copied += (name,)
                setattr(self, name, _eigen_array(data, attribute, element).copy(order=order))
        momentum = data.hg.vector
        if in_place and _is_stable_view(data.hg, "vector", None, "C"):
            self.momentum = momentum
        else:
            self.copied += ("momentum",)
            self.momentum = momentum.copy()

    def refresh(self) -> None:
        """Copy what is not read in place (after Pinocchio's pass; nothing when all are)."""
        data = self.data
        eigen = {name: (attribute, element) for name, attribute, element, _ in EIGEN_ARRAYS}
        for name in self.copied:
            out = getattr(self, name)
            if name == "joint_placements":
                copy_placements(data.oMi, out)
            elif name == "frame_placements":
                copy_placements(data.oMf, out)
            elif name == "joint_velocities":
                copy_motions(data.v, out)
            elif name == "joint_accelerations":
                copy_motions(data.a, out)
            elif name == "momentum":
                out[:] = data.hg.vector
            else:
                out[...] = _eigen_array(data, *eigen[name])
