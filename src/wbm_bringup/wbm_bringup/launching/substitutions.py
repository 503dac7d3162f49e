"""The ``$(...)`` substitutions of the ROS 2 launch format that ``wbm launch`` supports.

Supported: ``$(var name)``, ``$(env NAME [default])``, ``$(optenv NAME [default])``,
``$(find-pkg-share pkg)``, ``$(find-pkg-prefix pkg)``, ``$(dirname)``, ``$(filename)``,
``$(not x)``, ``$(and a b)``, ``$(or a b)``, ``$(equals a b)``, ``$(not-equals a b)`` and
``$(eval 'python expression')`` (literals, arithmetic, comparisons, and/or/not and
``a if condition else b``; no names or calls). Substitutions nest:
``$(var $(var which))``. Anything else is a :class:`LaunchFileError` naming the file.

Every value is traced (:func:`substitute_traced`): besides its text, it carries the names of the
top-level launch arguments it was made from (through ``var``, ``let``, include arguments and
defaults that use other arguments), so that a value refused later, or a substitution that fails
on it (``$(eval '1.0 / $(var rate)')`` with ``rate:=0``), is reported as a
:class:`LaunchArgumentError` naming those arguments.
"""

from __future__ import annotations

import ast
import operator
import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from wbm_bringup.launching.errors import ArgumentValue, LaunchArgumentError, LaunchFileError
from wbm_description.package_paths import find_package_share

#: No launch argument.
NO_ORIGINS: frozenset[str] = frozenset()


class Traced(NamedTuple):
    """A substituted value and the top-level launch arguments it was made from.

    Attributes:
        text: The value.
        origins: Names of the top-level launch arguments that fed it (empty: none).
    """

    text: str
    origins: frozenset[str] = NO_ORIGINS


@dataclass
class LaunchContext:
    """What substitutions see: launch arguments and the file being read.

    Attributes:
        path: The launch file being read.
        variables: Launch configurations (arguments and ``let``), by name.
        namespace: Namespace pushed by enclosing groups ("" for the root).
        origins: For each variable, the top-level launch arguments its value was made from.
        arguments: The top-level launch arguments and their values (shared by every context of
            a launch, included files too).
        namespace_origins: The launch arguments that made ``namespace``.
    """

    path: Path
    variables: dict[str, str] = field(default_factory=dict)
    namespace: str = ""
    origins: dict[str, frozenset[str]] = field(default_factory=dict)
    arguments: dict[str, ArgumentValue] = field(default_factory=dict)
    namespace_origins: frozenset[str] = NO_ORIGINS

    def child(self, path: Path | None = None, *, scoped: bool = True) -> LaunchContext:
        """A context for a group (scoped: own copy of the variables) or an included file."""
        variables = dict(self.variables) if scoped else self.variables
        origins = dict(self.origins) if scoped else self.origins
        return LaunchContext(
            path or self.path,
            variables,
            self.namespace,
            origins,
            self.arguments,
            self.namespace_origins,
        )

    def set(self, name: str, value: Traced) -> None:
        """Set the launch configuration ``name`` (an argument or a ``let``)."""
        self.variables[name] = value.text
        self.origins[name] = value.origins

    def argument_values(self, origins: Iterable[str]) -> list[ArgumentValue]:
        """The top-level launch arguments among ``origins``, with their values."""
        return [self.arguments[name] for name in sorted(set(origins)) if name in self.arguments]

    def error(self, where: str, problem: str, origins: Iterable[str] = ()) -> LaunchFileError:
        """The error for a refused value made from ``origins``.

        A :class:`LaunchArgumentError` naming the top-level arguments among ``origins`` when
        there are any, else a :class:`LaunchFileError` naming this file.
        """
        arguments = self.argument_values(origins)
        if arguments:
            return LaunchArgumentError(self.path, where, problem, arguments)
        return LaunchFileError(self.path, where, problem)


def _truthy(path: Path, text: str, where: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise LaunchFileError(path, where, f"expected a boolean ('true' or 'false'), got {text!r}")


_EVAL_ERRORS = (ArithmeticError, TypeError, ValueError, OverflowError, RecursionError)


_EVAL_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.Not: operator.not_,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


def _safe_eval(path: Path, expression: str) -> str:
    """Evaluate literals with arithmetic, comparisons and and/or/not; no names or calls."""

    def evaluate(node: ast.AST):
        if isinstance(node, ast.Expression):
            return evaluate(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _EVAL_OPERATORS:
            return _EVAL_OPERATORS[type(node.op)](evaluate(node.left), evaluate(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _EVAL_OPERATORS:
            return _EVAL_OPERATORS[type(node.op)](evaluate(node.operand))
        if isinstance(node, ast.IfExp):
            return evaluate(node.body) if evaluate(node.test) else evaluate(node.orelse)
        if isinstance(node, ast.BoolOp):
            values = [evaluate(value) for value in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = _EVAL_OPERATORS.get(type(node.ops[0]))
            if op is not None:
                return op(evaluate(node.left), evaluate(node.comparators[0]))
        raise LaunchFileError(
            path,
            "$(eval)",
            f"expected only literals, arithmetic and comparisons, got {expression!r}",
        )

    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise LaunchFileError(
            path, "$(eval)", f"expected a Python expression, got {expression!r}"
        ) from None
    try:
        result = evaluate(tree)
    except LaunchFileError:
        raise
    except _EVAL_ERRORS as error:  # 1.0 / 0, 'a' * 'b', 10 ** 10 ** 10, ...
        raise LaunchFileError(
            path,
            "$(eval)",
            f"expected values for which {expression!r} can be evaluated; it fails with "
            f"{type(error).__name__}: {error}",
        ) from None
    return str(result).lower() if isinstance(result, bool) else str(result)


def _find_closing(text: str, start: int) -> int:
    """Index of the ')' closing the '$(' at ``start``; quotes and inner parentheses nest."""
    depth = 0
    quote = ""
    i = start + 1
    while i < len(text):
        char = text[i]
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def substitute(text: object, context: LaunchContext) -> str:
    """Resolve every ``$(...)`` in ``text`` (non-strings are converted with str())."""
    return substitute_traced(text, context).text


def substitute_traced(text: object, context: LaunchContext) -> Traced:
    """Resolve every ``$(...)`` in ``text``, with the launch arguments the result was made from.

    Raises:
        LaunchArgumentError: A substitution fails on a value made from launch arguments
            (``$(eval '1.0 / $(var rate)')`` with ``rate:=0``); it names them.
        LaunchFileError: A substitution fails on the file's own text.
    """
    if not isinstance(text, str):
        return Traced(str(text).lower() if isinstance(text, bool) else str(text))
    result = []
    origins: set[str] = set()
    i = 0
    while i < len(text):
        start = text.find("$(", i)
        if start < 0:
            result.append(text[i:])
            break
        result.append(text[i:start])
        end = _find_closing(text, start)
        if end < 0:
            raise LaunchFileError(context.path, "substitution", f"unclosed '$(' in {text!r}")
        inner = substitute_traced(text[start + 2 : end], context)
        try:
            value = _apply(inner.text, context)
        except LaunchArgumentError:
            raise
        except LaunchFileError as error:
            raise context.error(error.where, error.problem, inner.origins) from None
        result.append(value.text)
        origins |= inner.origins | value.origins
        i = end + 1
    return Traced("".join(result), frozenset(origins))


def _apply(inner: str, context: LaunchContext) -> Traced:
    """One substitution (its arguments already substituted); ``var`` carries its origins."""
    try:
        parts = shlex.split(inner)
    except ValueError as error:
        raise LaunchFileError(context.path, f"$({inner})", str(error)) from None
    if not parts:
        raise LaunchFileError(context.path, "$()", "empty substitution")
    name, args = parts[0], parts[1:]
    where = f"$({inner})"

    def need(count: int) -> None:
        if len(args) != count:
            raise LaunchFileError(context.path, where, f"expected {count} argument(s)")

    if name == "var":
        need(1)
        if args[0] not in context.variables:
            known = sorted(context.variables)
            raise LaunchFileError(
                context.path, where, f"no launch argument or variable '{args[0]}' (known: {known})"
            )
        return Traced(context.variables[args[0]], context.origins.get(args[0], NO_ORIGINS))
    return Traced(_apply_other(name, args, where, context))


def _apply_other(name: str, args: list[str], where: str, context: LaunchContext) -> str:
    """The substitutions other than ``var`` (their values come from no launch argument)."""

    def need(count: int) -> None:
        if len(args) != count:
            raise LaunchFileError(context.path, where, f"expected {count} argument(s)")

    if name in ("env", "optenv"):
        if not 1 <= len(args) <= 2:
            raise LaunchFileError(context.path, where, "expected a name and an optional default")
        if args[0] in os.environ:
            return os.environ[args[0]]
        if len(args) == 2 or name == "optenv":
            return args[1] if len(args) == 2 else ""
        raise LaunchFileError(context.path, where, f"environment variable {args[0]} is not set")
    if name in ("find-pkg-share", "find-pkg-prefix"):
        need(1)
        share = find_package_share(args[0])
        if share is None:
            raise LaunchFileError(context.path, where, f"package '{args[0]}' not found")
        return str(share if name == "find-pkg-share" else share.parent.parent)
    if name == "dirname":
        need(0)
        return str(context.path.resolve().parent)
    if name == "filename":
        need(0)
        return context.path.name
    if name == "not":
        need(1)
        return str(not _truthy(context.path, args[0], where)).lower()
    if name in ("and", "or"):
        need(2)
        values = [_truthy(context.path, arg, where) for arg in args]
        return str(all(values) if name == "and" else any(values)).lower()
    if name in ("equals", "not-equals"):
        need(2)
        return str((args[0] == args[1]) == (name == "equals")).lower()
    if name == "eval":
        need(1)
        return _safe_eval(context.path, args[0])
    raise LaunchFileError(
        context.path,
        where,
        "unsupported substitution (wbm launch supports var, env, optenv, find-pkg-share, "
        "find-pkg-prefix, dirname, filename, not, and, or, equals, not-equals, eval)",
    )


def condition_holds(entity: dict, context: LaunchContext, where: str) -> bool:
    """Evaluate an entity's ``if`` / ``unless`` attributes (true when absent).

    Raises:
        LaunchArgumentError: A condition made from launch arguments is not a boolean.
    """
    holds = True
    for attribute in ("if", "unless"):
        if attribute not in entity:
            continue
        value = substitute_traced(entity[attribute], context)
        try:
            truth = _truthy(context.path, value.text, f"{where} '{attribute}'")
        except LaunchFileError as error:
            raise context.error(error.where, error.problem, value.origins) from None
        holds = holds and (truth if attribute == "if" else not truth)
    return holds
