"""ROS parameters as a node receives them from ``-p name:=value`` and ``--params-file``.

``wbm launch`` passes inline parameters as ``-p name:=value`` and parameter files as
``--params-file``; rcl (not Python's YAML) reads both, with its own typing of scalars
(rcl_yaml_param_parser): ``y``/``n``, ``yes``/``no``, ``on``/``off``, ``true``/``false`` in
three casings are booleans; what C's ``strtol`` reads whole (base 0: ``010`` is 8, ``0x10`` is
16) in the range of a 64-bit integer is an integer; what ``strtod`` reads whole without
overflow or underflow (``1e3``, ``inf``, ``nan``, ``0x1p3``, ``.inf``) is a double; quoted
scalars and anything else are strings. A list holds values of one type. The pre-flight checks
of ``wbm launch`` use this module to see the values a node will see, without ROS; the tests
compare it with rclpy's own reading.

Values rcl refuses (an empty ``-p`` value, a mapping, a list of mixed types, a null in a file)
make the node fail before it can say anything useful; they are :class:`ParameterValueError`.

When a parameter is given more than once (a parameters file, then ``-p``), rcl keeps the last
value of each type, and the node gets the one whose type comes first in :data:`KINDS` (bool,
integer, double, string, then the lists): ``control_rate: 500.0`` in a file followed by
``-p control_rate:=abc`` gives the node 500.0, while ``-p control_rate:=250`` gives it 250.
:func:`received_value` says which.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from wbm_bringup.launching.errors import LaunchFileError

#: A parameter value as rcl types it.
ParameterValue = bool | int | float | str | list[bool] | list[int] | list[float] | list[str]

_TRUE = {"Y", "y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_FALSE = {"N", "n", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
_SPACE = "[ \\t\\n\\v\\f\\r]*"
_INTEGER = re.compile(_SPACE + r"([+-]?)(?:0[xX]([0-9a-fA-F]+)|0([0-7]*)|([1-9][0-9]*))\Z")
_DECIMAL = re.compile(_SPACE + r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_HEX_FLOAT = re.compile(
    _SPACE + r"([+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)\Z"
)
_SPECIAL = re.compile(_SPACE + r"([+-]?)(inf|infinity|nan(?:\([0-9A-Za-z_]*\))?)\Z", re.I)
_YAML_SPECIAL = {
    f"{sign}.{word}": float(f"{sign or '+'}{word}")
    for sign in ("", "+", "-")
    for word in ("inf", "Inf", "INF")
} | {".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan}
_INT64 = 2**63
_SMALLEST_NORMAL = 2.2250738585072014e-308
_STRING_TAG = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()


#: Parameter types in the order rclpy reads them when rcl holds values of several types.
KINDS = ("bool", "integer", "double", "string", "bool[]", "integer[]", "double[]", "string[]")

_KIND_OF = {bool: "bool", int: "integer", float: "double", str: "string"}


class ParameterValueError(ValueError):
    """A value rcl cannot read as a parameter (the node would not start)."""


def parameter_kind(value: ParameterValue) -> str:
    """``"double"``, ``"string[]"``, ...: the ROS type of a value typed by this module."""
    if isinstance(value, list):
        return _KIND_OF[type(value[0])] + "[]"
    return _KIND_OF[type(value)]


def received_value(values: list[ParameterValue]) -> int:
    """Which of the values given for one parameter, in order, the node receives (its index).

    rcl keeps the last value of each type; rclpy reads the type that comes first in
    :data:`KINDS`.
    """
    last = {parameter_kind(value): i for i, value in enumerate(values)}
    return last[min(last, key=KINDS.index)]


def scalar_value(text: str, *, quoted: bool = False) -> bool | int | float | str:
    """A YAML scalar typed the way rcl types it (see the module docstring).

    Args:
        text: The scalar's text.
        quoted: Whether it was quoted (or tagged ``!!str``): then it is a string.
    """
    if quoted:
        return text
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    match = _INTEGER.match(text)
    if match:
        sign, hexadecimal, octal, decimal = match.groups()
        if hexadecimal is not None:
            value = int(hexadecimal, 16)
        elif octal is not None:
            value = int(octal or "0", 8)
        else:
            value = int(decimal)
        value = -value if sign == "-" else value
        if -_INT64 <= value < _INT64:
            return value
    number = _double(text)
    return text if number is None else number


def _double(text: str) -> float | None:
    """What strtod reads whole without a range error, or None."""
    if text in _YAML_SPECIAL:
        return _YAML_SPECIAL[text]
    if _DECIMAL.match(text):
        value = float(text.strip())
        mantissa = re.sub(r"[eE].*", "", text)
        nonzero = any(char in "123456789" for char in mantissa)
    elif match := _HEX_FLOAT.match(text):
        literal = match.group(1)
        if "p" not in literal.lower():
            literal += "p0"
        try:
            value = float.fromhex(literal)
        except OverflowError:
            return None
        nonzero = any(char not in "0.xX+-" for char in literal.lower().split("p")[0])
    elif match := _SPECIAL.match(text):
        sign, word = match.groups()
        value = math.nan if word.lower().startswith("nan") else math.inf
        return -value if sign == "-" else value
    else:
        return None
    if math.isinf(value) or (nonzero and abs(value) < _SMALLEST_NORMAL):
        return None  # ERANGE: overflow, or underflow to a subnormal or zero
    return value


def _typed_node(node: yaml.Node) -> ParameterValue:
    """A composed YAML node (scalar or sequence) as a parameter value."""
    if isinstance(node, yaml.ScalarNode):
        if node.value == "" and node.style is None and node.tag != _STRING_TAG:
            raise ParameterValueError("expected a value, got nothing (null)")
        return scalar_value(node.value, quoted=_is_string(node))
    if isinstance(node, yaml.SequenceNode):
        values = list(_flatten(node))
        if not values:
            raise ParameterValueError(
                "an empty list has no type for ROS (leave the key out for the default)"
            )
        kinds = {type(value) for value in values}
        if len(kinds) > 1:
            names = sorted(kind.__name__ for kind in kinds)
            raise ParameterValueError(
                f"expected a list of values of one type, got {names} in {values!r}"
            )
        return values
    raise ParameterValueError("expected a value or a list of values, got a mapping")


def _is_string(node: yaml.ScalarNode) -> bool:
    if node.style in ("'", '"', "|", ">"):
        return True
    implicit = _RESOLVER.resolve(yaml.ScalarNode, node.value, (True, False))
    return node.tag == _STRING_TAG and implicit != _STRING_TAG  # an explicit !!str


def _flatten(node: yaml.SequenceNode) -> Iterator[bool | int | float | str]:
    for item in node.value:
        if isinstance(item, yaml.SequenceNode):
            yield from _flatten(item)  # rcl reads [[1]] as [1]
        elif isinstance(item, yaml.ScalarNode):
            yield scalar_value(item.value, quoted=_is_string(item))
        else:
            raise ParameterValueError("expected a list of values, got a mapping in it")


def parameter_value(text: str) -> ParameterValue:
    """The value of ``-p name:=<text>`` as the node receives it.

    Raises:
        ParameterValueError: rcl cannot read it (empty, a mapping, a list of mixed types or
            an empty list, YAML syntax); the node would fail before starting.
    """
    if text == "":
        raise ParameterValueError("an empty value cannot be given as -p name:=value")
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as error:
        raise ParameterValueError(f"not a YAML value: {error}".replace("\n", " ")) from None
    if node is None:
        raise ParameterValueError(f"expected a value, got {text!r}")
    return _typed_node(node)


# ---------------------------------------------------------------------------- parameter files

_NAME_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def node_pattern_matches(pattern: str, node: str) -> bool:
    """Whether a node key of a parameters file applies to the node ``node`` (fully qualified).

    Keys: ``/**`` (every node), ``name`` (as ``/name``), ``/ns/name``, ``/*/name`` (one
    namespace level), ``/**/name`` (any number of levels).

    Raises:
        ParameterValueError: The key is not a node name pattern rcl accepts.
    """
    if not pattern.startswith("/"):
        pattern = "/" + pattern
    tokens = pattern.split("/")[1:]
    for token in tokens:
        if token not in ("*", "**") and not _NAME_TOKEN.match(token):
            raise ParameterValueError(f"not a node name or wildcard pattern: {pattern!r}")
    names = [token for token in node.split("/") if token]
    return _match(tokens, names)


def _match(tokens: list[str], names: list[str]) -> bool:
    if not tokens:
        return not names
    head, rest = tokens[0], tokens[1:]
    if head == "**":
        return any(_match(rest, names[i:]) for i in range(len(names) + 1))
    if not names:
        return False
    return (head == "*" or head == names[0]) and _match(rest, names[1:])


def parameters_file(path: str | Path, node: str) -> dict[str, ParameterValue]:
    """The parameters a ROS 2 parameters file gives the node ``node`` (fully qualified name).

    Every section whose key matches the node applies, in the file's order (a later value of the
    same parameter wins, as in rclpy). Nested mappings give dotted names.

    Raises:
        LaunchFileError: A file rcl would refuse, naming the file and the key.
    """
    path = Path(path)
    try:
        document = yaml.compose(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise LaunchFileError(path, "file", f"not a readable YAML file: {error}") from None
    if document is None:
        return {}
    if not isinstance(document, yaml.MappingNode):
        raise LaunchFileError(path, "root", "expected a mapping from node names to sections")
    values: dict[str, ParameterValue] = {}
    for key_node, section in document.value:
        key = key_node.value
        try:
            applies = node_pattern_matches(key, node)
        except ParameterValueError as error:
            raise LaunchFileError(path, f"key {key!r}", str(error)) from None
        if not isinstance(section, yaml.MappingNode) or [
            item.value for item, _ in section.value
        ] != ["ros__parameters"]:
            raise LaunchFileError(
                path, f"key {key!r}", "expected a mapping holding only 'ros__parameters'"
            )
        parameters = section.value[0][1]
        if applies:
            values.update(_flatten_section(path, parameters, f"{key}.ros__parameters", ""))
        else:
            _flatten_section(path, parameters, f"{key}.ros__parameters", "")  # rcl checks all
    return values


def _flatten_section(
    path: Path, node: yaml.Node, where: str, prefix: str
) -> dict[str, ParameterValue]:
    if isinstance(node, yaml.ScalarNode) and node.value == "" and not prefix:
        return {}  # ros__parameters: (empty)
    if not isinstance(node, yaml.MappingNode):
        raise LaunchFileError(path, where, "expected a mapping of parameters")
    values: dict[str, ParameterValue] = {}
    for key_node, value in node.value:
        name = f"{prefix}{key_node.value}"
        if isinstance(value, yaml.MappingNode):
            values.update(_flatten_section(path, value, where, f"{name}."))
            continue
        try:
            values[name] = _typed_node(value)
        except ParameterValueError as error:
            raise LaunchFileError(path, f"parameter '{name}'", str(error)) from None
    return values


__all__ = [
    "KINDS",
    "ParameterValue",
    "ParameterValueError",
    "node_pattern_matches",
    "parameter_kind",
    "parameter_value",
    "parameters_file",
    "received_value",
    "scalar_value",
]
