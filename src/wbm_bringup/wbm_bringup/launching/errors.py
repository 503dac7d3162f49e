"""What ``wbm launch`` reports: a launch file it cannot run, or a launch argument that is wrong.

A :class:`LaunchFileError` names the file and the tag, attribute or substitution. When the
problem comes from the value of a launch argument (a value that fails a node's parameter checks,
a substitution it breaks, a namespace it makes invalid), a :class:`LaunchArgumentError` names the
argument and its value first, the way the user typed it, then the node, parameter or place that
refused it and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wbm_description.exceptions import WbmError


class LaunchFileError(WbmError, ValueError):
    """A launch file uses something ``wbm launch`` does not support, or uses it wrongly.

    Attributes:
        path: The launch file (or the parameters file) concerned.
        where: The tag, attribute, substitution, node or parameter.
        problem: What is wrong and what was expected.
    """

    def __init__(self, path: str | Path, where: str, problem: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        super().__init__(f"{self.path}: {where}: {problem}")


@dataclass(frozen=True)
class ArgumentValue:
    """A top-level launch argument and its value.

    Attributes:
        name: The argument's name.
        value: Its value (after substitutions).
        given: Whether it was given as ``name:=value`` (else it has its default).
    """

    name: str
    value: str
    given: bool

    def describe(self) -> str:
        """``name:='value'`` when given, ``name (default 'value')`` otherwise."""
        if self.given:
            return f"{self.name}:={self.value!r}"
        return f"{self.name} (default {self.value!r})"


class LaunchArgumentError(LaunchFileError):
    """A launch argument's value is refused (by a node's checks, a substitution, a namespace).

    Attributes:
        arguments: The launch arguments that made the refused value, given ones first.
    """

    def __init__(
        self, path: str | Path, where: str, problem: str, arguments: Iterable[ArgumentValue]
    ):
        self.arguments = tuple(sorted(arguments, key=lambda a: (not a.given, a.name)))
        if not self.arguments:
            raise ValueError("LaunchArgumentError needs at least one argument")
        super().__init__(path, where, problem)
        names = ", ".join(argument.describe() for argument in self.arguments)
        plural = "s" if len(self.arguments) > 1 else ""
        self.args = (f"launch argument{plural} {names}: {where}: {problem} (in {self.path})",)

    def __str__(self) -> str:
        return str(self.args[0])


__all__ = ["ArgumentValue", "LaunchArgumentError", "LaunchFileError"]
