"""Exceptions of wbm, one tree so callers can catch what they can handle.

Every error carries the data needed to fix it (file, key, name, expected and received values) and
says it in its message.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


class WbmError(Exception):
    """Base class of every wbm error."""


class ConfigError(WbmError, ValueError):
    """A robot or node config file is missing, unreadable or holds a wrong value.

    Attributes:
        path: The config file.
        key: Dotted key path inside the file (``"ft_sensors.l_foot.frame"``), or ``""`` for the
            whole file.
        expected: What the key should have held.
    """

    def __init__(self, path: str | Path | None, key: str, expected: str, got: object = None):
        self.path = str(path) if path is not None else "<no file>"
        self.key = key
        self.expected = expected
        self.got = got
        where = f"{self.path}: key '{key}'" if key else self.path
        message = f"{where}: expected {expected}"
        if got is not None:
            message += f", got {got!r}"
        super().__init__(message)


class UrdfError(WbmError, ValueError):
    """A URDF file is missing, malformed, or describes an impossible robot.

    Attributes:
        path: The URDF file.
        element: The offending element (``"link 'l_foot' inertial mass"``).
        expected: What the element should have held.
    """

    def __init__(self, path: str | Path, element: str, expected: str, got: object = None):
        self.path = str(path)
        self.element = element
        self.expected = expected
        self.got = got
        message = f"{self.path}: {element}: expected {expected}"
        if got is not None:
            message += f", got {got!r}"
        super().__init__(message)


class NameNotFound(WbmError, KeyError):
    """A joint, link or frame name that the model does not have.

    Attributes:
        kind: ``"joint"``, ``"link"`` or ``"frame"``.
        name: The unknown name.
        available: The names that exist.
    """

    def __init__(self, kind: str, name: str, available: Iterable[str], *, where: str = ""):
        self.kind = kind
        self.name = name
        self.available = sorted(available)
        shown = ", ".join(self.available[:12])
        more = f" and {len(self.available) - 12} more" if len(self.available) > 12 else ""
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}unknown {kind} '{name}'; known {kind}s: {shown}{more}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class InputError(WbmError, ValueError):
    """An argument of a public call has the wrong shape, type or a non-finite value.

    Attributes:
        argument: Name of the argument.
        expected: What was expected.
    """

    def __init__(self, argument: str, expected: str, got: object = None):
        self.argument = argument
        self.expected = expected
        self.got = got
        message = f"argument '{argument}': expected {expected}"
        if got is not None:
            message += f", got {got}"
        super().__init__(message)


class SingularConstraintError(WbmError, ArithmeticError):
    """The contact-space inertia J M^-1 J^T is singular (redundant or degenerate contacts)."""
