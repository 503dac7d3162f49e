"""The ``$(...)`` substitutions of the ROS 2 launch format that ``wbm launch`` supports.

Supported: ``$(var name)``, ``$(env NAME [default])``, ``$(optenv NAME [default])``,
``$(find-pkg-share pkg)``, ``$(find-pkg-prefix pkg)``, ``$(dirname)``, ``$(filename)``,
``$(not x)``, ``$(and a b)``, ``$(or a b)``, ``$(equals a b)``, ``$(not-equals a b)`` and
``$(eval 'python expression')`` (literals, arithmetic, comparisons, and/or/not and
``a if condition else b``; no names or calls). Substitutions nest:
``$(var $(var which))``. Anything else is a :class:`LaunchFileError` naming the file.
"""

from __future__ import annotations

import ast
import operator
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from wbm_description.exceptions import WbmError
from wbm_description.package_paths import find_package_share


class LaunchFileError(WbmError, ValueError):
    """A launch file uses something ``wbm launch`` does not support, or uses it wrongly."""

    def __init__(self, path: str | Path, where: str, problem: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        super().__init__(f"{self.path}: {where}: {problem}")


@dataclass
class LaunchContext:
    """What substitutions see: launch arguments and the file being read.

    Attributes:
        path: The launch file being read.
        variables: Launch configurations (arguments and ``let``), by name.
        namespace: Namespace pushed by enclosing groups ("" for the root).
    """

    path: Path
    variables: dict[str, str] = field(default_factory=dict)
    namespace: str = ""

    def child(self, path: Path | None = None, *, scoped: bool = True) -> LaunchContext:
        """A context for a group (scoped: own copy of the variables) or an included file."""
        variables = dict(self.variables) if scoped else self.variables
        return LaunchContext(path or self.path, variables, self.namespace)


def _truthy(path: Path, text: str, where: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise LaunchFileError(path, where, f"expected a boolean ('true' or 'false'), got {text!r}")


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
            path, "$(eval)", f"only literals, arithmetic and comparisons: {expression!r}"
        )

    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise LaunchFileError(path, "$(eval)", f"not an expression: {expression!r}") from None
    result = evaluate(tree)
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
    if not isinstance(text, str):
        return str(text).lower() if isinstance(text, bool) else str(text)
    result = []
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
        inner = substitute(text[start + 2 : end], context)
        result.append(_apply(inner, context))
        i = end + 1
    return "".join(result)


def _apply(inner: str, context: LaunchContext) -> str:
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
        return context.variables[args[0]]
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
    """Evaluate an entity's ``if`` / ``unless`` attributes (true when absent)."""
    holds = True
    if "if" in entity:
        holds = _truthy(context.path, substitute(entity["if"], context), f"{where} 'if'")
    if "unless" in entity:
        holds = holds and not _truthy(
            context.path, substitute(entity["unless"], context), f"{where} 'unless'"
        )
    return holds
