"""Reading a ROS 2 YAML launch file into the list of processes to start.

``wbm launch`` runs the project's launch files where the ROS 2 ``launch`` package is not
installable. It supports the subset of the YAML launch format those files use, with the same
meaning as ``ros2 launch``:

- ``arg`` (name, default, description), ``let`` (name, value), ``set_env`` (name, value);
- ``include`` (file, ``arg`` list of name/value), ``group`` (``scoped``, children as a list or
  under ``children``), ``push_ros_namespace`` / ``push-ros-namespace`` (namespace);
- ``node`` (pkg, exec, name, namespace, output, args, ros_args, ``param`` list of name/value or
  ``from`` files, ``remap`` list of from/to, ``env`` list of name/value, on_exit: shutdown);
- ``executable`` (cmd, name, output, env, on_exit: shutdown);
- ``if`` / ``unless`` on every entity, and the substitutions of :mod:`.substitutions`.

Anything else is a :class:`LaunchFileError` naming the file and the tag or attribute.

Each node of the plan keeps what ``wbm launch``'s pre-flight checks need
(:class:`NodeSpec`): its package and executable, its fully qualified name, and its parameter
sources in order, each with the top-level launch arguments its value was made from. A value
that is already wrong here (not one of an argument's ``choices``, a missing parameters file, an
invalid namespace, a condition that is not a boolean) is a :class:`LaunchArgumentError` naming
the launch argument that made it.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wbm_bringup.launching.errors import ArgumentValue, LaunchFileError
from wbm_bringup.launching.ros_names import namespace_problem, node_name_problem
from wbm_bringup.launching.substitutions import (
    NO_ORIGINS,
    LaunchContext,
    Traced,
    condition_holds,
    substitute,
    substitute_traced,
)
from wbm_description.package_paths import candidate_prefixes


@dataclass(frozen=True)
class ParameterFile:
    """A ``param: {from: file}`` entry of a node (passed as ``--params-file``).

    Attributes:
        path: The parameters file.
        origins: The top-level launch arguments its path was made from.
        launch_file: The launch file that names it.
    """

    path: str
    origins: frozenset[str]
    launch_file: Path


@dataclass(frozen=True)
class InlineParameter:
    """A ``param: {name, value}`` entry of a node (passed as ``-p name:=value``).

    Attributes:
        name: The parameter's name.
        text: Its value as text (rcl types it, see :mod:`.ros_parameters`).
        origins: The top-level launch arguments the value was made from.
        launch_file: The launch file that gives it.
    """

    name: str
    text: str
    origins: frozenset[str]
    launch_file: Path


@dataclass(frozen=True)
class NodeSpec:
    """What a ``node`` entity starts, for the pre-flight checks.

    Attributes:
        package: The ROS package.
        executable: The executable (a console entry point of the package for wbm's nodes).
        name: The node name given by the launch file, or None (the node's own default).
        namespace: The fully qualified namespace ("" for the root).
        parameters: The parameter sources, in the order rcl applies them (later ones win).
        launch_file: The launch file that declares the node.
    """

    package: str
    executable: str
    name: str | None
    namespace: str
    parameters: tuple[ParameterFile | InlineParameter, ...]
    launch_file: Path

    @property
    def fully_qualified_name(self) -> str:
        """``/namespace/name`` (the executable's name when the launch file gives none)."""
        return f"{self.namespace.rstrip('/')}/{self.name or self.executable}"


@dataclass(frozen=True)
class ProcessSpec:
    """A process to start.

    Attributes:
        label: Name used to prefix its output and in messages (the node name).
        command: The argv.
        environment: Variables added to the launcher's environment.
        required: Whether the launch ends when it exits (``on_exit: shutdown``).
        output: ``screen`` or ``log``.
        node: For a ``node`` entity, what the pre-flight checks need; None for an
            ``executable``.
    """

    label: str
    command: tuple[str, ...]
    environment: dict[str, str] = field(default_factory=dict)
    required: bool = False
    output: str = "screen"
    node: NodeSpec | None = None


@dataclass(frozen=True)
class LaunchPlan:
    """The resolved launch: its processes and the arguments it declared (with their values).

    Attributes:
        processes: What to start, in order.
        arguments: The top-level launch arguments and their values.
        descriptions: Their descriptions.
        given: The arguments given as ``name:=value`` (the others have their defaults).
    """

    processes: tuple[ProcessSpec, ...]
    arguments: dict[str, str]
    descriptions: dict[str, str]
    given: frozenset[str] = frozenset()

    def argument_values(self, origins: frozenset[str] | set[str]) -> list[ArgumentValue]:
        """The launch arguments among ``origins`` with their values (given ones first)."""
        values = [
            ArgumentValue(name, self.arguments[name], name in self.given)
            for name in sorted(origins)
            if name in self.arguments
        ]
        return sorted(values, key=lambda argument: not argument.given)


_ENTITY_ATTRIBUTES: dict[str, set[str]] = {
    "arg": {"name", "default", "description", "choices"},
    "let": {"name", "value"},
    "set_env": {"name", "value"},
    "include": {"file", "arg"},
    "group": {"scoped", "children", "forwarding"},
    "push_ros_namespace": {"namespace"},
    "node": {
        "pkg",
        "exec",
        "name",
        "namespace",
        "output",
        "args",
        "ros_args",
        "param",
        "remap",
        "env",
        "on_exit",
    },
    "executable": {"cmd", "name", "output", "env", "on_exit", "cwd"},
}
_ALIASES = {"push-ros-namespace": "push_ros_namespace", "set-env": "set_env"}
_CONDITIONS = {"if", "unless"}


def find_executable(package: str, executable: str) -> Path | None:
    """``<prefix>/lib/<package>/<executable>`` as ``ros2 run`` finds it, or None."""
    for prefix in candidate_prefixes():
        candidate = prefix / "lib" / package / executable
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _load(path: Path) -> list[Any]:
    if path.suffix not in (".yaml", ".yml"):
        raise LaunchFileError(
            path, "file", "wbm launch reads YAML launch files (.launch.yaml); use ros2 launch"
        )
    try:
        document = yaml.safe_load(path.read_text())
    except OSError as error:
        raise LaunchFileError(path, "file", f"cannot be read: {error}") from None
    except yaml.YAMLError as error:
        raise LaunchFileError(path, "file", f"not valid YAML: {error}") from None
    if not isinstance(document, dict) or set(document) != {"launch"}:
        raise LaunchFileError(path, "root", "expected a mapping with the single key 'launch'")
    entities = document["launch"] or []
    if not isinstance(entities, list):
        raise LaunchFileError(path, "launch", "expected a list of entities")
    return entities


def _split_entity(path: Path, item: Any) -> tuple[str, dict[str, Any] | list[Any]]:
    if not isinstance(item, dict) or len(item) != 1:
        raise LaunchFileError(path, "entity", f"expected a mapping with one tag, got {item!r}")
    ((tag, body),) = item.items()
    tag = _ALIASES.get(tag, tag)
    if tag not in _ENTITY_ATTRIBUTES:
        raise LaunchFileError(
            path, f"tag '{tag}'", f"not supported by wbm launch ({sorted(_ENTITY_ATTRIBUTES)})"
        )
    if tag == "group" and isinstance(body, list):
        return tag, {"children": body}
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise LaunchFileError(path, f"tag '{tag}'", "expected a mapping of attributes")
    unknown = set(body) - _ENTITY_ATTRIBUTES[tag] - _CONDITIONS
    if unknown:
        raise LaunchFileError(
            path, f"tag '{tag}' attribute '{sorted(unknown)[0]}'", "not supported by wbm launch"
        )
    return tag, body


def _require(path: Path, body: dict, tag: str, key: str) -> Any:
    if key not in body:
        raise LaunchFileError(path, f"tag '{tag}'", f"missing attribute '{key}'")
    return body[key]


def _name_value_list(path: Path, body: dict, tag: str, key: str) -> list[dict]:
    items = body.get(key, []) or []
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise LaunchFileError(
            path, f"tag '{tag}' attribute '{key}'", "expected a list of mappings"
        )
    return items


def _join_namespace(outer: str, inner: str) -> str:
    if inner.startswith("/"):
        return inner.rstrip("/") or "/"
    parts = [part for part in (outer.strip("/"), inner.strip("/")) if part]
    return "/" + "/".join(parts) if parts else ""


class _Planner:
    def __init__(self, overrides: dict[str, str]):
        self.overrides = dict(overrides)
        self.processes: list[ProcessSpec] = []
        self.environment: dict[str, str] = {}
        self.arguments: dict[str, str] = {}
        self.descriptions: dict[str, str] = {}
        self.given: set[str] = set()

    def run_file(self, path: Path, context: LaunchContext, *, top_level: bool) -> None:
        entities = _load(path)
        self.run_entities(entities, context, top_level=top_level)

    def run_entities(self, entities: list, context: LaunchContext, *, top_level: bool) -> None:
        for item in entities:
            tag, body = _split_entity(context.path, item)
            if not condition_holds(body, context, f"tag '{tag}'"):
                continue
            getattr(self, f"_{tag}")(body, context, top_level)

    def _arg(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        name = substitute(_require(context.path, body, "arg", "name"), context)
        given = top_level and name in self.overrides
        if given:
            value = Traced(self.overrides.pop(name))
        elif name in context.variables:
            value = Traced(context.variables[name], context.origins.get(name, NO_ORIGINS))
        elif "default" in body:
            value = substitute_traced(body["default"], context)
        else:
            raise LaunchFileError(
                context.path, f"arg '{name}'", "has no default: give it as name:=value"
            )
        if top_level:
            # A top-level argument is an origin of its own, besides those of its default.
            value = Traced(value.text, value.origins | {name})
            context.arguments[name] = ArgumentValue(name, value.text, given)
            self.arguments[name] = value.text
            self.descriptions[name] = str(body.get("description", ""))
            if given:
                self.given.add(name)
        choices = body.get("choices")
        if choices is not None:
            allowed = [substitute(choice, context) for choice in choices]
            if value.text not in allowed:
                problem = f"expected one of {allowed}, got {value.text!r}"
                raise context.error(f"arg '{name}'", problem, value.origins)
        context.set(name, value)

    def _let(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        name = substitute(_require(context.path, body, "let", "name"), context)
        context.set(name, substitute_traced(_require(context.path, body, "let", "value"), context))

    def _set_env(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        name = substitute(_require(context.path, body, "set_env", "name"), context)
        self.environment[name] = substitute(
            _require(context.path, body, "set_env", "value"), context
        )

    def _push_ros_namespace(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        namespace = substitute_traced(
            _require(context.path, body, "push_ros_namespace", "namespace"), context
        )
        context.namespace = _join_namespace(context.namespace, namespace.text)
        context.namespace_origins = context.namespace_origins | namespace.origins

    def _group(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        scoped = substitute(body.get("scoped", "true"), context).lower() != "false"
        children = body.get("children") or []
        if not isinstance(children, list):
            raise LaunchFileError(context.path, "tag 'group'", "expected a list of children")
        inner = context.child(scoped=scoped)
        self.run_entities(children, inner, top_level=False)
        if not scoped:
            context.namespace = inner.namespace
            context.namespace_origins = inner.namespace_origins

    def _include(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        file = Path(substitute(_require(context.path, body, "include", "file"), context))
        if not file.is_absolute():
            file = context.path.resolve().parent / file
        if not file.is_file():
            raise LaunchFileError(context.path, "tag 'include'", f"no launch file {file}")
        inner = context.child(file)
        for item in _name_value_list(context.path, body, "include", "arg"):
            name = substitute(_require(context.path, item, "include arg", "name"), context)
            inner.set(
                name,
                substitute_traced(_require(context.path, item, "include arg", "value"), context),
            )
        self.run_file(file, inner, top_level=False)

    def _environment(self, body: dict, context: LaunchContext, tag: str) -> dict[str, str]:
        environment = dict(self.environment)
        for item in _name_value_list(context.path, body, tag, "env"):
            name = substitute(_require(context.path, item, f"{tag} env", "name"), context)
            environment[name] = substitute(
                _require(context.path, item, f"{tag} env", "value"), context
            )
        return environment

    def _required(self, body: dict, context: LaunchContext, tag: str) -> bool:
        on_exit = body.get("on_exit")
        if on_exit is None:
            return False
        if substitute(on_exit, context) != "shutdown":
            raise LaunchFileError(
                context.path, f"tag '{tag}' attribute 'on_exit'", "only 'shutdown' is supported"
            )
        return True

    def _output(self, body: dict, context: LaunchContext, tag: str) -> str:
        output = substitute(body.get("output", "screen"), context)
        if output not in ("screen", "log", "both"):
            raise LaunchFileError(
                context.path, f"tag '{tag}' attribute 'output'", "expected screen, log or both"
            )
        return output

    def _executable(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        command = shlex.split(
            substitute(_require(context.path, body, "executable", "cmd"), context)
        )
        if not command:
            raise LaunchFileError(context.path, "tag 'executable'", "empty 'cmd'")
        label = substitute(body.get("name", Path(command[0]).name), context)
        self.processes.append(
            ProcessSpec(
                label,
                tuple(command),
                self._environment(body, context, "executable"),
                self._required(body, context, "executable"),
                self._output(body, context, "executable"),
            )
        )

    def _node(self, body: dict, context: LaunchContext, top_level: bool) -> None:
        package = substitute(_require(context.path, body, "node", "pkg"), context)
        executable = substitute(_require(context.path, body, "node", "exec"), context)
        path = find_executable(package, executable)
        if path is None:
            raise LaunchFileError(
                context.path,
                f"node {package}/{executable}",
                "executable not found in any <prefix>/lib/<pkg>/ (is the set-up done?)",
            )
        command = [sys.executable, str(path)] if _is_python_script(path) else [str(path)]
        command += shlex.split(substitute(body.get("args", ""), context))
        ros_args: list[str] = []
        name = None
        if "name" in body:
            traced_name = substitute_traced(body["name"], context)
            name = traced_name.text
            problem = node_name_problem(name)
            if problem:
                raise context.error(f"node {executable} name", problem, traced_name.origins)
            ros_args += ["-r", f"__node:={name}"]
        label = name or executable
        inner_namespace = substitute_traced(body.get("namespace", ""), context)
        namespace = _join_namespace(context.namespace, inner_namespace.text)
        if namespace:
            problem = namespace_problem(namespace)
            if problem:
                origins = context.namespace_origins | inner_namespace.origins
                raise context.error(f"node {label} namespace", problem, origins)
            ros_args += ["-r", f"__ns:={namespace}"]
        parameters: list[ParameterFile | InlineParameter] = []
        for item in _name_value_list(context.path, body, "node", "param"):
            if "from" in item:
                file = substitute_traced(item["from"], context)
                if not Path(file.text).is_file():
                    raise context.error(
                        f"node {label} param from",
                        f"no file {file.text} (expected an existing parameters file)",
                        file.origins,
                    )
                ros_args += ["--params-file", file.text]
                parameters.append(ParameterFile(file.text, file.origins, context.path))
            else:
                key = substitute(_require(context.path, item, "node param", "name"), context)
                value = substitute_traced(
                    _require(context.path, item, "node param", "value"), context
                )
                # rcl cannot read an empty -p value; '' is the empty string.
                ros_args += ["-p", f"{key}:={value.text or repr('')}"]
                parameters.append(InlineParameter(key, value.text, value.origins, context.path))
        for item in _name_value_list(context.path, body, "node", "remap"):
            source = substitute(_require(context.path, item, "node remap", "from"), context)
            target = substitute(_require(context.path, item, "node remap", "to"), context)
            ros_args += ["-r", f"{source}:={target}"]
        ros_args += shlex.split(substitute(body.get("ros_args", ""), context))
        if ros_args:
            command += ["--ros-args", *ros_args]
        node = NodeSpec(package, executable, name, namespace, tuple(parameters), context.path)
        self.processes.append(
            ProcessSpec(
                label,
                tuple(command),
                self._environment(body, context, "node"),
                self._required(body, context, "node"),
                self._output(body, context, "node"),
                node,
            )
        )


def _is_python_script(path: Path) -> bool:
    with path.open("rb") as handle:
        first = handle.readline(200)
    return first.startswith(b"#!") and b"python" in first


def plan_launch(path: str | Path, arguments: dict[str, str] | None = None) -> LaunchPlan:
    """Resolve a launch file with ``name:=value`` arguments into processes.

    Raises:
        LaunchArgumentError: A launch argument's value is refused here (not one of its choices,
            a substitution that fails on it, a missing parameters file, an invalid namespace
            or a condition that is not a boolean); the message names the argument.
        LaunchFileError: Unsupported tags or substitutions, unknown arguments, missing files.
    """
    path = Path(path)
    planner = _Planner(arguments or {})
    planner.run_file(path, LaunchContext(path), top_level=True)
    if planner.overrides:
        raise LaunchFileError(
            path,
            "arguments",
            f"unknown launch argument(s) {sorted(planner.overrides)}; "
            f"declared: {sorted(planner.arguments)}",
        )
    return LaunchPlan(
        tuple(planner.processes),
        planner.arguments,
        planner.descriptions,
        frozenset(planner.given),
    )
