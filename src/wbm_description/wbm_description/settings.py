"""One way to read settings: frozen dataclasses whose fields carry their own checks.

Every settings class of wbm (a node's parameters, the simulator's constants, a driver's address,
the robot config file) is a frozen dataclass deriving from :class:`Settings`, and declares its
fields with :func:`setting`: the default, the unit and meaning (``doc``), and the checks (ranges,
choices, lengths). One reader, :meth:`Settings.from_mapping`, builds any of them from a nested
mapping (a parsed YAML file, or a node's ROS parameters), converting types where it is safe
(an int where a float is expected, a list where a tuple is) and raising a
:class:`~wbm_description.exceptions.ConfigError` that names the file, the dotted key and what was
expected. Construction in code runs the same checks (``__post_init__``), so a settings object is
valid however it was made.

Supported field types: ``bool``, ``int``, ``float``, ``str``, ``tuple[float, ...]`` (or of str,
int, fixed length), a nested :class:`Settings` class (a section of the file), ``dict[str, S]``
for named sections of a settings class ``S`` (YAML: a mapping from name to section; ROS
parameters, which cannot hold a list of mappings: ``names: [a, b]`` plus one section per name),
``X | None``, and anything else through a ``parse`` function in the field's metadata.

Example::

    @dataclass(frozen=True)
    class Pacing(Settings):
        mode: str = setting("realtime", doc="how time advances", choices=PACINGS)
        rate: float = setting(500.0, doc="publication rate", unit="Hz", gt=0.0, le=10000.0)

    Pacing.from_mapping({"rate": 1000}, source="config/icub/simulator.yaml")
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml

from wbm_description.exceptions import ConfigError

S = TypeVar("S", bound="Settings")

#: Key of the list of section names in the ROS encoding of ``dict[str, Settings]`` fields.
NAMES_KEY = "names"


@dataclass(frozen=True)
class Check:
    """The checks of one field, kept in its metadata (see :func:`setting`)."""

    doc: str = ""
    unit: str = ""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[Any, ...] | None = None
    nonempty: bool = False
    length: int | None = None
    finite: bool = True
    null: Any = None
    parse: Callable[[Any, str, Reader], Any] | None = None

    def describe(self) -> str:
        """The doc with its unit and range, as a ROS parameter description."""
        text = self.doc
        if self.unit:
            text += f" [{self.unit}]"
        bounds = self.range_text()
        if bounds:
            text += f" ({bounds})"
        if self.choices is not None:
            text += f" (one of {list(self.choices)})"
        return text

    def range_text(self) -> str:
        """The allowed range as text, e.g. "> 0 and <= 1", or ""."""
        parts = []
        for symbol, bound in ((">=", self.ge), (">", self.gt), ("<=", self.le), ("<", self.lt)):
            if bound is not None:
                parts.append(f"{symbol} {bound:g}")
        return " and ".join(parts)


def setting(
    default: Any = MISSING,
    *,
    default_factory: Callable[[], Any] | Any = MISSING,
    doc: str = "",
    unit: str = "",
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    choices: Sequence[Any] | None = None,
    nonempty: bool = False,
    length: int | None = None,
    finite: bool = True,
    null: Any = None,
    parse: Callable[[Any, str, Reader], Any] | None = None,
) -> Any:
    """A settings field with its default, meaning and checks.

    Args:
        default: The default value (immutable); or give ``default_factory``.
        default_factory: Builds the default (for nested settings).
        doc: What the field means (also the ROS parameter's description).
        unit: Its unit ("s", "Hz", "N m/rad", ...).
        ge: Lower bound (inclusive) of a number, or of every number of a tuple.
        gt: Lower bound (exclusive).
        le: Upper bound (inclusive).
        lt: Upper bound (exclusive).
        choices: The allowed values.
        nonempty: A string or tuple must not be empty.
        length: A tuple's exact length.
        finite: Numbers must be finite (default).
        null: For ``X | None`` fields: the value that also means None where None cannot be
            written (ROS parameters cannot be null), e.g. 0.0.
        parse: ``parse(value, key, reader) -> field value`` for a form the generic reader does
            not know (e.g. per-joint values); it raises through ``reader.fail``.
    """
    check = Check(
        doc=doc,
        unit=unit,
        ge=ge,
        gt=gt,
        le=le,
        lt=lt,
        choices=tuple(choices) if choices is not None else None,
        nonempty=nonempty,
        length=length,
        finite=finite,
        null=null,
        parse=parse,
    )
    metadata = {"check": check}
    if default_factory is not MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def field_check(field: dataclasses.Field) -> Check:
    """The checks of a dataclass field (an empty :class:`Check` for a plain field)."""
    return field.metadata.get("check", Check())


class Reader:
    """Reads one mapping into a settings class, naming the source and the key in errors.

    Args:
        source: The file or origin of the values ("parameters of node '/controller'"), or None.
    """

    def __init__(self, source: str | Path | None = None):
        self.source = source

    def fail(self, key: str, expected: str, got: object = None) -> ConfigError:
        """The error for ``key``."""
        return ConfigError(self.source, key, expected, got)

    # ------------------------------------------------------------------ scalars

    def mapping(self, value: Any, key: str) -> Mapping[str, Any]:
        """A mapping, or ConfigError."""
        if not isinstance(value, Mapping):
            raise self.fail(key, "a mapping", type(value).__name__)
        return value

    def number(self, value: Any, key: str, *, finite: bool = True) -> float:
        """A float from an int or float (not a bool)."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, "a number", value)
        value = float(value)
        if finite and not math.isfinite(value):
            raise self.fail(key, "a finite number", value)
        if math.isnan(value):
            raise self.fail(key, "a number (not NaN)", value)
        return value

    def integer(self, value: Any, key: str) -> int:
        """An int (a float with an integral value is accepted)."""
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, "an integer", value)
        return value

    def flag(self, value: Any, key: str) -> bool:
        """A bool."""
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def string(self, value: Any, key: str) -> str:
        """A str."""
        if not isinstance(value, str):
            raise self.fail(key, "a string", value)
        return value

    def sequence(self, value: Any, key: str) -> Sequence[Any]:
        """A list or tuple (not a string)."""
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise self.fail(key, "a list", value)
        return value

    # ------------------------------------------------------------------ typed values

    def value(self, kind: Any, value: Any, key: str, check: Check) -> Any:
        """``value`` converted to the annotated type ``kind`` (not range-checked here)."""
        if check.parse is not None:
            return check.parse(value, key, self)
        origin = typing.get_origin(kind)
        if origin in (typing.Union, types.UnionType):
            options = [arg for arg in typing.get_args(kind) if arg is not type(None)]
            if value is None or (check.null is not None and value == check.null):
                return None
            if len(options) == 1:
                return self.value(options[0], value, key, check)
            raise TypeError(f"{key}: unions other than X | None are not supported")
        if kind is bool:
            return self.flag(value, key)
        if kind is int:
            return self.integer(value, key)
        if kind is float:
            return self.number(value, key, finite=check.finite)
        if kind is str:
            return self.string(value, key)
        if kind is Any:
            return value
        if origin is tuple:
            args = typing.get_args(kind)
            items = self.sequence(value, key)
            if len(args) == 2 and args[1] is Ellipsis:
                element_types = [args[0]] * len(items)
            else:
                if len(items) != len(args):
                    raise self.fail(key, f"a list of {len(args)} values", value)
                element_types = list(args)
            return tuple(
                self.value(t, item, f"{key}[{i}]", Check(finite=check.finite))
                for i, (t, item) in enumerate(zip(element_types, items, strict=True))
            )
        if origin is dict:
            _, section_type = typing.get_args(kind)
            return self.named_sections(section_type, value, key)
        if isinstance(kind, type) and issubclass(kind, Settings):
            return self.section(kind, value, key)
        raise TypeError(f"{key}: field type {kind!r} needs a parse function")

    def named_sections(self, cls: type[S], value: Any, key: str) -> dict[str, S]:
        """``{name: section}``, or the ROS form ``{names: [...], <name>: section, ...}``."""
        table = self.mapping(value, key)
        if NAMES_KEY in table:
            names = self.sequence(table[NAMES_KEY], f"{key}.{NAMES_KEY}")
            names = [self.string(n, f"{key}.{NAMES_KEY}[{i}]") for i, n in enumerate(names)]
            names = [n for n in names if n]
            for name in names:
                if name not in table:
                    raise self.fail(f"{key}.{name}", f"a section for '{name}' (listed in names)")
            extra = sorted(set(table) - set(names) - {NAMES_KEY})
            if extra:
                raise self.fail(f"{key}.{extra[0]}", f"a name listed in {key}.{NAMES_KEY}")
        else:
            names = list(table)
        sections = {}
        has_name = "name" in {f.name for f in dataclasses.fields(cls)}
        for name in names:
            where = f"{key}.{name}"
            body = dict(self.mapping(table[name], where))
            if has_name:
                if "name" in body and body["name"] != name:
                    raise self.fail(f"{where}.name", f"'{name}' or no name", body["name"])
                body["name"] = name
            sections[name] = self.section(cls, body, where)
        return sections

    def section(self, cls: type[S], values: Any, key: str = "") -> S:
        """An instance of ``cls`` from ``values``; missing keys keep their defaults."""
        values = self.mapping(values, key or "")
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        hints = typing.get_type_hints(cls)
        ignored = set(getattr(cls, "ignored_keys", ()))
        unknown = sorted(set(values) - set(fields) - ignored, key=str)
        if unknown:
            raise self.fail(_join(key, str(unknown[0])), f"one of the known keys {sorted(fields)}")
        kwargs = {}
        for name, value in values.items():
            if name in ignored:
                continue
            kwargs[name] = self.value(
                hints[name], value, _join(key, name), field_check(fields[name])
            )
        try:
            return cls(**kwargs)
        except ConfigError as error:
            raise ConfigError(
                self.source, _join(key, error.key), error.expected, error.got
            ) from None


def _join(prefix: str, key: str) -> str:
    if not prefix:
        return key
    if not key:
        return prefix
    return f"{prefix}.{key}"


def _validate_field(field: dataclasses.Field, kind: Any, value: Any) -> None:
    """Type and range checks of one field value (ConfigError with the field's name as key)."""
    check = field_check(field)
    name = field.name
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return
        kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
        origin = typing.get_origin(kind)
    if check.parse is not None and not (kind in (bool, int, float, str) or origin is tuple):
        return  # a custom form: checked by its parse function
    numbers: list[float] = []
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(None, name, "true or false", value)
    elif kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(None, name, "an integer" if kind is int else "a number", value)
        if kind is int and not isinstance(value, int):
            raise ConfigError(None, name, "an integer", value)
        numbers = [value]
    elif kind is str:
        if not isinstance(value, str):
            raise ConfigError(None, name, "a string", value)
        if check.nonempty and not value:
            raise ConfigError(None, name, "a non-empty string", value)
    elif origin is tuple:
        if not isinstance(value, tuple):
            raise ConfigError(None, name, "a tuple", value)
        if check.length is not None and len(value) != check.length:
            raise ConfigError(None, name, f"{check.length} values", list(value))
        if check.nonempty and not value:
            raise ConfigError(None, name, "at least one value", list(value))
        numbers = [v for v in value if isinstance(v, int | float) and not isinstance(v, bool)]
    elif isinstance(kind, type) and issubclass(kind, Settings):
        if not isinstance(value, kind):
            raise ConfigError(None, name, kind.__name__, type(value).__name__)
    for number in numbers:
        if math.isnan(number) or (check.finite and not math.isfinite(number)):
            raise ConfigError(None, name, "a finite number", value)
        bounds = check.range_text()
        if (
            (check.ge is not None and number < check.ge)
            or (check.gt is not None and number <= check.gt)
            or (check.le is not None and number > check.le)
            or (check.lt is not None and number >= check.lt)
        ):
            raise ConfigError(None, name, f"a number {bounds}", value)
    if check.choices is not None:
        items = value if origin is tuple else (value,)
        for item in items:
            if item not in check.choices:
                raise ConfigError(None, name, f"one of {list(check.choices)}", value)


class Settings:
    """Base of every settings dataclass: validation on construction and one reader.

    Subclasses are ``@dataclass(frozen=True)`` classes whose fields use :func:`setting`. A
    subclass may override :meth:`check` for rules between fields (raise ConfigError with the
    field's name as key, no source: the reader adds it).

    Class attributes:
        ignored_keys: Keys accepted and ignored by the reader (e.g. ROS's own ``use_sim_time``).
    """

    ignored_keys: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for field in dataclasses.fields(self):
            if field.init:
                _validate_field(field, hints[field.name], getattr(self, field.name))
        self.check()

    def check(self) -> None:
        """Rules between fields (override); raise ConfigError(None, key, expected, got)."""

    @classmethod
    def from_mapping(
        cls: type[S], values: Mapping[str, Any] | None, *, source: str | Path | None = None
    ) -> S:
        """The settings from a nested mapping; missing keys keep their defaults.

        Args:
            values: The mapping (a parsed YAML section, or a node's nested parameters).
            source: Where it came from (a file, "parameters of node '/x'"), for errors.

        Raises:
            ConfigError: An unknown key, a wrong type or a value out of range, naming the
                source and the dotted key.
        """
        return Reader(source).section(cls, {} if values is None else values)

    @classmethod
    def from_yaml(cls: type[S], path: str | Path, *, node: str | None = None) -> S:
        """The settings from a YAML file: a plain mapping, or a ROS 2 parameters file.

        In a parameters file (``<node or /**>: {ros__parameters: {...}}``) the section of
        ``node`` is read if given and present, else ``/**``, else the only one.

        Raises:
            ConfigError: Missing or unreadable file, or a bad value (see :meth:`from_mapping`).
        """
        return cls.from_mapping(read_yaml_section(path, node=node), source=path)

    def replace(self: S, **changes: Any) -> S:
        """A copy with some fields changed (checked again)."""
        return dataclasses.replace(self, **changes)

    def to_mapping(self) -> dict[str, Any]:
        """Plain nested values (lists for tuples): ``from_mapping(to_mapping())`` round-trips."""
        return _plain(self)


def _plain(value: Any) -> Any:
    if isinstance(value, Settings):
        return {
            f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def read_yaml_section(path: str | Path, *, node: str | None = None) -> Mapping[str, Any]:
    """A YAML file's mapping, unwrapped from a ROS 2 parameters file's node section.

    Raises:
        ConfigError: Missing or unreadable file, not a mapping, or no ``ros__parameters``.
    """
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(path, "", f"a readable YAML file ({error})") from error
    if document is None:
        return {}
    if not isinstance(document, Mapping):
        raise ConfigError(path, "", "a mapping", type(document).__name__)
    sections = {
        name: section
        for name, section in document.items()
        if isinstance(section, Mapping) and "ros__parameters" in section
    }
    if not sections:
        return document
    if node is not None and node in sections:
        name = node
    elif "/**" in sections:
        name = "/**"
    elif len(sections) == 1:
        name = next(iter(sections))
    else:
        raise ConfigError(path, "", f"a section for node {node!r} or '/**'", sorted(sections))
    values = sections[name]["ros__parameters"]
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise ConfigError(path, f"{name}.ros__parameters", "a mapping", type(values).__name__)
    return values


@dataclass(frozen=True)
class ParameterSpec:
    """One flattened setting, as a node declares it.

    Attributes:
        name: Dotted name (``simulator.compliant.stiffness``).
        default: The default, in a form a ROS parameter can hold (None: declared untyped).
        description: Meaning, unit and range.
        kind: "bool", "int", "float", "str", "float[]", "int[]", "str[]", "bool[]".
    """

    name: str
    default: Any
    description: str
    kind: str


def parameter_specs(cls: type[Settings], prefix: str = "") -> list[ParameterSpec]:
    """Every scalar or array setting of ``cls`` as a dotted parameter, nested sections included.

    ``dict[str, S]`` sections (named sections) are not listed: they are read from the
    parameter overrides as they come.
    """
    specs = []
    hints = typing.get_type_hints(cls)
    instance = cls()
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        kind = hints[field.name]
        check = field_check(field)
        name = f"{prefix}{field.name}"
        default = getattr(instance, field.name)
        origin = typing.get_origin(kind)
        if origin in (typing.Union, types.UnionType):
            kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
            origin = typing.get_origin(kind)
            if default is None:
                default = check.null
        if isinstance(kind, type) and issubclass(kind, Settings):
            specs.extend(parameter_specs(kind, f"{name}."))
            continue
        if origin is dict:
            continue
        if kind in (bool, int, float, str):
            type_name = kind.__name__
        elif origin is tuple:
            element = typing.get_args(kind)[0]
            if element not in (bool, int, float, str):
                continue
            type_name = f"{element.__name__}[]"
            default = list(default) if default is not None else None
        else:
            continue
        specs.append(ParameterSpec(name, default, check.describe(), type_name))
    return specs


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}`` (ROS parameter names to a nested mapping)."""
    nested: dict[str, Any] = {}
    for name, value in flat.items():
        table = nested
        *parents, leaf = name.split(".")
        for parent in parents:
            table = table.setdefault(parent, {})
        table[leaf] = list(value) if isinstance(value, list | tuple) else value
    return nested


__all__ = [
    "Check",
    "ParameterSpec",
    "Reader",
    "Settings",
    "field_check",
    "nest",
    "parameter_specs",
    "read_yaml_section",
    "setting",
]
