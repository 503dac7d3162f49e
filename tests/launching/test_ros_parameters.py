"""Parameter values as rcl types them, checked against rclpy reading the same arguments.

The reference is rcl itself: a node created in a context initialised with ``-p`` or
``--params-file`` arguments, with every override declared, reports each parameter's type and
value. The module under test must give the same typed value, or refuse what rcl refuses (rcl
fails to initialise, or rclpy cannot declare the parameter).
"""

from __future__ import annotations

import math

import pytest
import rclpy
from rclpy._rclpy_pybind11 import RCLError

from wbm_bringup.launching.errors import LaunchFileError
from wbm_bringup.launching.ros_parameters import (
    KINDS,
    ParameterValueError,
    node_pattern_matches,
    parameter_kind,
    parameter_value,
    parameters_file,
    received_value,
)

# Scalars and lists covering rcl's typing rules: booleans in every spelling rcl knows, integers
# (base 0 strtol: octal, hexadecimal, signs, overflow to double), doubles (strtod: exponents,
# hex floats, inf and nan spellings, YAML's .inf, overflow and underflow to strings), quoted and
# tagged strings, comments, and lists.
ACCEPTED = [
    "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y",
    "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N",
    "0", "1", "-5", "+5", "500", "010", "-010", "00", "0x10", "-0x10", "0X1F",
    "9223372036854775807", "9223372036854775808", "99999999999999999999",
    "500.0", "1e3", "1E5", "1.", "0.", ".5", ".5e1", "0e-999", "2.2250738585072014e-308",
    "0x1p3", "0x1.8p1", "08", "inf", "-inf", "Inf", "infinity", "INFINITY", "nan", "NaN",
    "nan(1)", ".inf", "-.Inf", "+.INF", ".NaN", "+.nan",
    "1e999", "1e-310", "1e-400", "1_000", "0b1", "0o10", "1,2", "1.5.", "1e", "e5",
    "abc", "banana", "null", "Null", "~", "''", "'500'", '"5"', "!!str 5", "&a 5", "a # c",
    "ground_truth/odom", "/tmp/my bag", "500.0.1",
    "[1, 2]", "[a, b]", "[true, yes]", "[1.5, 2.5]", "['']", "[[1]]",
]  # fmt: skip
# Refused by rcl: empty, untyped or mixed lists ([x, y] too: 'y' is a boolean for rcl), mappings.
REFUSED = [
    "",
    "[]",
    "[ ]",
    "[x, y]",
    "[1, 2.0]",
    "[1, a]",
    "[1, '2']",
    "{a: 1}",
    "a: b",
    "[{a: 1}]",
]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def rclpy_overrides(arguments: list[str]) -> dict:
    """The parameters rclpy gives a node started with ``arguments`` (raises if it cannot)."""
    context = rclpy.Context()
    rclpy.init(args=["--ros-args", *arguments], context=context)
    try:
        node = rclpy.create_node(
            "reference",
            context=context,
            allow_undeclared_parameters=True,
            automatically_declare_parameters_from_overrides=True,
        )
        try:
            return {
                name: parameter.value
                for name, parameter in node.get_parameters_by_prefix("").items()
                if name not in ("use_sim_time", "start_type_description_service")
            }
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_inline_values_are_typed_as_rcl_types_them():
    arguments = []
    for i, text in enumerate(ACCEPTED):
        arguments += ["-p", f"p{i}:={text}"]
    reference = rclpy_overrides(arguments)
    for i, text in enumerate(ACCEPTED):
        expected = reference[f"p{i}"]
        expected = (
            list(expected) if not isinstance(expected, bool | int | float | str) else expected
        )
        got = parameter_value(text)
        if isinstance(expected, list):
            assert isinstance(got, list) and len(got) == len(expected), (text, got, expected)
            assert all(same(a, b) for a, b in zip(got, expected, strict=True)), (text, got)
        else:
            assert same(got, expected), (text, got, expected)


@pytest.mark.parametrize("text", REFUSED)
def test_values_rcl_refuses_are_refused(text):
    with pytest.raises(ParameterValueError):
        parameter_value(text)
    with pytest.raises((RCLError, ValueError)):
        rclpy_overrides(["-p", f"p:={text}"])


FILES = [
    # (file text, node namespace, node name)
    ("/**:\n  ros__parameters:\n    a: y\n    b: {c: 1, d: {e: x}}\n", "/", "n"),
    ("n:\n  ros__parameters:\n    a: 1\n", "/", "n"),
    ("n:\n  ros__parameters:\n    a: 1\n", "/ns", "n"),
    ("/ns/n:\n  ros__parameters:\n    a: 1\n", "/ns", "n"),
    ("/**/n:\n  ros__parameters:\n    a: 1\n", "/ns/x", "n"),
    ("/**/n:\n  ros__parameters:\n    a: 1\n", "/", "n"),
    ("/*/n:\n  ros__parameters:\n    a: 1\n", "/ns", "n"),
    ("/*/n:\n  ros__parameters:\n    a: 1\n", "/ns/x", "n"),
    ("/other:\n  ros__parameters:\n    a: 1\n", "/", "n"),
    ("/n:\n  ros__parameters:\n    a: 1\n/**:\n  ros__parameters:\n    a: 2\n", "/", "n"),
    ("/**:\n  ros__parameters:\n    a: 2\n/n:\n  ros__parameters:\n    a: 1\n", "/", "n"),
    ("/**:\n  ros__parameters:\n    a: 2\n/**:\n  ros__parameters:\n    b: 1\n", "/", "n"),
    ("/**:\n  ros__parameters: {}\n", "/", "n"),
    (
        "/**:\n  ros__parameters:\n    a: '5'\n    b: !!str 5\n    c: 1e3\n    d: 08\n"
        "    e: [1.5, 2.0]\n    f: [x, z]\n    g: +.nan\n    h: 1e-310\n",
        "/",
        "n",
    ),
]
REFUSED_FILES = [
    "/**:\n  ros__parameters:\n    a: [1, 2.0]\n",
    "/**:\n  ros__parameters:\n    a: []\n",
    "/**:\n  ros__parameters:\n    a: 2\n  other: 1\n",
    "/**:\n  a: 1\n",
    "/c*:\n  ros__parameters:\n    a: 1\n",
    "**:\n  ros__parameters:\n    a: 1\n",
    "/**:\n  ros__parameters:\n    a:\n    b: 1\n",
]


@pytest.mark.parametrize(("text", "namespace", "name"), FILES)
def test_parameter_files_as_rclpy_reads_them(tmp_path, text, namespace, name):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    reference = rclpy_overrides(
        ["--params-file", str(path), "-r", f"__ns:={namespace}", "-r", f"__node:={name}"]
    )
    got = parameters_file(path, f"{namespace.rstrip('/')}/{name}")
    assert sorted(got) == sorted(reference), (got, reference)
    for key, value in reference.items():
        value = list(value) if not isinstance(value, bool | int | float | str) else value
        if isinstance(value, list):
            assert all(same(a, b) for a, b in zip(got[key], value, strict=True)), key
        else:
            assert same(got[key], value), (key, got[key], value)


@pytest.mark.parametrize("text", REFUSED_FILES)
def test_parameter_files_rcl_refuses_are_refused_naming_the_file(tmp_path, text):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(LaunchFileError) as info:
        parameters_file(path, "/n")
    assert str(path) in str(info.value)
    with pytest.raises((RCLError, ValueError)):
        rclpy_overrides(["--params-file", str(path), "-r", "__node:=n"])


def test_node_patterns():
    assert node_pattern_matches("/**", "/a/b/n")
    assert node_pattern_matches("n", "/n") and not node_pattern_matches("n", "/a/n")
    assert node_pattern_matches("/**/n", "/n") and node_pattern_matches("/**/n", "/a/b/n")
    assert node_pattern_matches("/*/n", "/a/n") and not node_pattern_matches("/*/n", "/a/b/n")
    with pytest.raises(ParameterValueError):
        node_pattern_matches("/c*", "/c")


# One value of each ROS type, and a second one of the same type.
OF_KIND = {
    "bool": ("true", "false"),
    "integer": ("3", "4"),
    "double": ("2.5", "3.5"),
    "string": ("x", "z"),
    "bool[]": ("[true]", "[false]"),
    "integer[]": ("[1, 2]", "[3]"),
    "double[]": ("[1.5]", "[2.5]"),
    "string[]": ("[a]", "[b]"),
}


def test_which_of_several_values_the_node_receives():
    # rcl keeps the last value of each type; rclpy reads the first type of KINDS present.
    for first in KINDS:
        for second in KINDS:
            texts = [OF_KIND[first][0], OF_KIND[second][1]]
            values = [parameter_value(text) for text in texts]
            assert [parameter_kind(value) for value in values] == [first, second]
            reference = rclpy_overrides(["-p", f"a:={texts[0]}", "-p", f"a:={texts[1]}"])["a"]
            reference = (
                reference if isinstance(reference, bool | int | float | str) else list(reference)
            )
            got = values[received_value(values)]
            assert got == reference and type(got) is type(reference), (texts, got, reference)


def test_a_file_value_then_inline_values(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("/**:\n  ros__parameters:\n    a: 500.0\n")
    for texts in (["abc"], ["250"], ["abc", "250"], ["1e400"], ["7.5", "x"]):
        arguments = ["--params-file", str(path)]
        for text in texts:
            arguments += ["-p", f"a:={text}"]
        reference = rclpy_overrides(arguments)["a"]
        values = [parameters_file(path, "/n")["a"]] + [parameter_value(t) for t in texts]
        got = values[received_value(values)]
        assert got == reference and type(got) is type(reference), (texts, got, reference)
