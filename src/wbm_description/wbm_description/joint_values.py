"""Per-joint values as a robot config writes them, read through the settings reader.

A per-joint value (a torque limit, a servo gain, a friction coefficient) is written in one of
three forms:

- a number: the same value for every joint (``viscous: 0.05``);
- a list in the order of the config's ``joints`` (``kp: [100, 100, ...]``);
- a table of a default and overrides (``{default: 40.0, joints: {l_knee: 60.0}}``).

:func:`joint_values` is the ``parse`` function of such a settings field: it checks the numbers
(and their range) where they are written and keeps the form, as :class:`JointValues`, because
the joint names are only known to the whole file. :meth:`JointValues.array` then gives the
array in ``joints`` order and names the key of any length or joint-name mismatch. The initial
posture (``{joint: value}``, the others 0) is read by :func:`joint_table`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wbm_description.exceptions import ConfigError
from wbm_description.settings import Check, Reader

#: The keys of the table form.
TABLE_KEYS = ("default", "joints")


@dataclass(frozen=True)
class JointValues:
    """One per-joint setting in the form it was written.

    Attributes:
        default: The value of every joint not listed (the number form, or the table's
            ``default``); None in the list form or when the table has no default.
        values: The list form: one value per joint in ``joints`` order; None otherwise.
        overrides: The table's ``joints``: (joint name, value) pairs.
    """

    default: float | None = None
    values: tuple[float, ...] | None = None
    overrides: tuple[tuple[str, float], ...] = ()

    def array(
        self,
        joints: Sequence[str],
        key: str,
        *,
        fallback: float | None = None,
        overrides_key: str | None = None,
    ) -> np.ndarray:
        """The values in ``joints`` order.

        Args:
            joints: The config's actuated joints, in order.
            key: Dotted key of this setting, for errors (``"servo_gains.kp"``).
            fallback: Value of the joints neither listed nor covered by a default; None when
                the setting must give one.
            overrides_key: Dotted key of the overrides table (default ``<key>.joints``).

        Raises:
            ConfigError: A list of the wrong length, a joint that is not in ``joints``, or no
                default where one is needed (no file: the reader adds it).
        """
        n = len(joints)
        if self.values is not None:
            if len(self.values) != n:
                raise ConfigError(
                    None,
                    key,
                    f"a list of {n} numbers (one per joint)",
                    f"{len(self.values)} items",
                )
            return np.array(self.values, dtype=float)
        default = self.default if self.default is not None else fallback
        if default is None:
            raise ConfigError(None, f"{key}.default", "a number")
        array = np.full(n, default, dtype=float)
        where = overrides_key if overrides_key is not None else f"{key}.joints"
        index = {joint: i for i, joint in enumerate(joints)}
        for joint, value in self.overrides:
            if joint not in index:
                raise ConfigError(
                    None, f"{where}.{joint}", f"one of the config's joints {list(joints)}"
                )
            array[index[joint]] = value
        return array


def _bounded(check: Check) -> Callable[[Any, str, Reader], float]:
    """A number reader that also checks the range of ``check``."""

    def number(value: Any, key: str, reader: Reader) -> float:
        number = reader.number(value, key)
        if (
            (check.ge is not None and number < check.ge)
            or (check.gt is not None and number <= check.gt)
            or (check.le is not None and number > check.le)
            or (check.lt is not None and number >= check.lt)
        ):
            raise reader.fail(key, f"a number {check.range_text()}", value)
        return number

    return number


def _named_numbers(
    value: Any, key: str, reader: Reader, number: Callable[[Any, str, Reader], float]
) -> tuple[tuple[str, float], ...]:
    table = reader.mapping({} if value is None else value, key)
    return tuple(
        (reader.string(name, key), number(item, f"{key}.{name}", reader))
        for name, item in table.items()
    )


def joint_values(
    *, ge: float | None = None, gt: float | None = None
) -> Callable[[Any, str, Reader], JointValues | None]:
    """The ``parse`` function of a per-joint setting whose numbers are within the bounds.

    Args:
        ge: Every value must be >= this.
        gt: Every value must be > this.
    """
    number = _bounded(Check(ge=ge, gt=gt))

    def parse(value: Any, key: str, reader: Reader) -> JointValues | None:
        if value is None:
            return None
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - set(TABLE_KEYS), key=str)
            if unknown:
                raise reader.fail(key, "only the keys 'default' and 'joints'", unknown)
            default = value.get("default")
            return JointValues(
                default=None if default is None else number(default, f"{key}.default", reader),
                overrides=_named_numbers(value.get("joints"), f"{key}.joints", reader, number),
            )
        if isinstance(value, Sequence) and not isinstance(value, str):
            return JointValues(
                values=tuple(number(item, f"{key}[{i}]", reader) for i, item in enumerate(value))
            )
        return JointValues(default=number(value, key, reader))

    return parse


def joint_table(value: Any, key: str, reader: Reader) -> JointValues:
    """The ``parse`` function of ``{joint: value}`` (the initial posture): overrides only."""
    return JointValues(overrides=_named_numbers(value, key, reader, _bounded(Check())))


def joint_ranges(value: Any, key: str, reader: Reader) -> tuple[tuple[str, float, float], ...]:
    """The ``parse`` function of ``{joint: [lower, upper]}`` (position limit overrides)."""
    table = reader.mapping({} if value is None else value, key)
    ranges = []
    for joint, pair in table.items():
        where = f"{key}.{joint}"
        items = reader.sequence(pair, where)
        if len(items) != 2:
            raise reader.fail(where, "a list of 2 numbers [lower, upper]", pair)
        lower, upper = (reader.number(item, f"{where}[{i}]") for i, item in enumerate(items))
        if lower > upper:
            raise reader.fail(where, "[lower, upper] with lower <= upper", list(pair))
        ranges.append((reader.string(joint, key), lower, upper))
    return tuple(ranges)


__all__ = ["JointValues", "joint_ranges", "joint_table", "joint_values"]
