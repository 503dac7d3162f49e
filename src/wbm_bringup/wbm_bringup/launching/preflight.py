"""Pre-flight checks of a launch plan: every node's parameters, before any process starts.

For every node of the plan, the parameters are gathered as the node will receive them
(parameter files and inline parameters in order, typed the way rcl types them, see
:mod:`.ros_parameters`) and checked:

- a value given again later with another type (a string after a double) would be ignored by
  rcl (see :func:`~.ros_parameters.received_value`): it is refused rather than ignored;
- ROS's own parameters (``use_sim_time``) must be booleans: rclpy only logs a wrong type and
  goes on with wall time, which would leave a simulation bringup waiting forever;
- the node module's validation hook, when it has one: a module-level function

  ``check_parameters(parameters: Mapping[str, Any]) -> None``

  that raises :class:`~wbm_description.exceptions.ConfigError` (key: the dotted parameter
  name) for any value the node would refuse at start. It is the package's entry point named
  like the executable in the group :data:`CHECKS_GROUP` (``wbm.parameter_checks``) when there
  is one: a light module with the node's checks, so that checking does not import what only
  running the node needs (the controller's solvers and compiled kernels); otherwise the
  ``check_parameters`` of the module of the package's console entry point named like the
  executable (``importlib.metadata`` entry points, loaded the way the executable itself loads
  it). A node whose module has no hook is checked by itself at start; every shipped node has
  ``on_exit: shutdown``, so its refusal ends the launch.

A refused value is reported as a :class:`LaunchArgumentError` naming the launch arguments that
made it, or, when no argument fed it, as a :class:`LaunchFileError` naming the parameters file
or launch file and the parameter.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from wbm_bringup.launching.description import InlineParameter, LaunchPlan, NodeSpec, ParameterFile
from wbm_bringup.launching.errors import LaunchArgumentError, LaunchFileError
from wbm_bringup.launching.ros_parameters import (
    ParameterValue,
    ParameterValueError,
    parameter_kind,
    parameter_value,
    parameters_file,
    received_value,
)
from wbm_description.exceptions import ConfigError, WbmError

#: Name of the validation hook in a node's module.
HOOK_NAME = "check_parameters"

#: Entry point group of a node's validation hook in a module of its own (name: the executable).
CHECKS_GROUP = "wbm.parameter_checks"

#: Parameters rclpy declares on every node, with the type it requires (all booleans).
ROS_OWN_PARAMETERS = ("use_sim_time", "start_type_description_service")

ParameterCheck = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True)
class NodeModule:
    """The module of a node's executable and its validation hook.

    Attributes:
        module: The module's name (``wbm_control.ros.controller_node``).
        check: Its ``check_parameters``, or None when it has none.
    """

    module: str
    check: ParameterCheck | None


@dataclass(frozen=True)
class GivenParameter:
    """A parameter of a node with its value and where it was given.

    Attributes:
        name: Dotted parameter name.
        value: The value as the node receives it.
        source: The parameters file or inline parameter that gave it (the last one that did).
    """

    name: str
    value: ParameterValue
    source: ParameterFile | InlineParameter


@dataclass(frozen=True)
class NodeCheck:
    """What the pre-flight did for one process.

    Attributes:
        label: The process.
        checked_by: ``module.check_parameters`` when the node's hook checked its parameters;
            None when only ROS's own parameters were checked (the node checks at start).
    """

    label: str
    checked_by: str | None


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def find_node_module(package: str, executable: str) -> NodeModule | None:
    """The module with the checks of ``<prefix>/lib/<package>/<executable>`` (module docstring).

    Its :data:`CHECKS_GROUP` entry point's module, or the module of its console entry point.

    Returns:
        None when no console entry point of that name belongs to the package's distribution
        (not a Python node, or one this environment does not know).

    Raises:
        Exception: Whatever importing the module raises (the node could not start either).
    """
    for entry in entry_points(group=CHECKS_GROUP, name=executable):
        if entry.dist is not None and _normalized(entry.dist.name) != _normalized(package):
            continue
        check = entry.load()
        return NodeModule(entry.module, check if callable(check) else None)
    for entry in entry_points(group="console_scripts", name=executable):
        if entry.dist is not None and _normalized(entry.dist.name) != _normalized(package):
            continue
        entry.load()
        module = sys.modules[entry.module]
        check = getattr(module, HOOK_NAME, None)
        return NodeModule(entry.module, check if callable(check) else None)
    return None


def node_parameters(node: NodeSpec, plan: LaunchPlan) -> dict[str, GivenParameter]:
    """A node's parameters as it will receive them, each with where it was given.

    Raises:
        LaunchArgumentError: An inline value made from launch arguments that rcl cannot read.
        LaunchFileError: A parameters file rcl cannot read, or such an inline value given by
            the launch file itself.
    """
    given: dict[str, list[GivenParameter]] = {}
    for source in node.parameters:
        if isinstance(source, ParameterFile):
            values = parameters_file(source.path, node.fully_qualified_name)
            for name, value in values.items():
                given.setdefault(name, []).append(GivenParameter(name, value, source))
            continue
        try:
            # The planner passes an empty value as '' (rcl refuses an empty -p value).
            value = parameter_value(source.text) if source.text else ""
        except ParameterValueError as error:
            where = f"node {_label(node)} parameter '{source.name}'"
            problem = f"rcl cannot read {source.text!r} as a parameter value: {error}"
            raise _error(plan, source, where, problem) from None
        given.setdefault(source.name, []).append(GivenParameter(source.name, value, source))
    parameters = {}
    for name, values in given.items():
        received = values[received_value([item.value for item in values])]
        last = values[-1]
        if received is not last:
            kind, ignored = parameter_kind(received.value), parameter_kind(last.value)
            problem = (
                f"expected {_article(kind)} {kind} value: {_origin(received.source)} gives "
                f"the {kind} {received.value!r}, and rcl gives the node that one, ignoring the "
                f"later {ignored} {last.value!r}"
            )
            raise _error(plan, last.source, f"node {_label(node)} parameter '{name}'", problem)
        parameters[name] = received
    return parameters


def _article(word: str) -> str:
    """'an' before a vowel ("an integer"), else 'a'."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def _origin(source: ParameterFile | InlineParameter) -> str:
    if isinstance(source, ParameterFile):
        return f"the parameters file {source.path}"
    return f"the launch file {source.launch_file}"


def _label(node: NodeSpec) -> str:
    return node.name or node.executable


def _error(
    plan: LaunchPlan, source: ParameterFile | InlineParameter, where: str, problem: str
) -> LaunchFileError:
    """The error for a value given by ``source``: naming its launch arguments if it has any."""
    if isinstance(source, InlineParameter):
        arguments = plan.argument_values(source.origins)
        if arguments:
            return LaunchArgumentError(source.launch_file, where, problem, arguments)
        return LaunchFileError(source.launch_file, where, problem)
    chosen = plan.argument_values(source.origins)
    given = [argument.describe() for argument in chosen if argument.given]
    if given:
        problem += f" (parameters file chosen by launch argument {', '.join(given)})"
    return LaunchFileError(source.path, where, problem)


def _check_ros_parameters(parameters: Mapping[str, GivenParameter]) -> None:
    for name in ROS_OWN_PARAMETERS:
        if name in parameters and not isinstance(parameters[name].value, bool):
            raise ConfigError(None, name, "true or false", parameters[name].value)


def _from_arguments(given: GivenParameter, plan: LaunchPlan) -> bool:
    source = given.source
    return isinstance(source, InlineParameter) and bool(plan.argument_values(source.origins))


def _strip_indices(key: str) -> str:
    return re.sub(r"\[\d+\]", "", key)


def _refused(
    error: WbmError, node: NodeSpec, parameters: Mapping[str, GivenParameter], plan: LaunchPlan
) -> LaunchFileError:
    """Turn a check's error into one that names the parameter and what gave it."""
    label = _label(node)
    if isinstance(error, ConfigError) and error.path == "<no file>":
        key = _strip_indices(error.key)
        problem = f"expected {error.expected}"
        if error.got is not None:
            problem += f", got {error.got!r}"
        if key in parameters:
            given = parameters[key]
            return _error(plan, given.source, f"node {label} parameter '{key}'", problem)
        inside = [p for name, p in parameters.items() if name.startswith(f"{key}.")]
        if inside:  # a section: name a value that launch arguments gave, if any
            inside.sort(key=lambda p: not _from_arguments(p, plan))
            return _error(plan, inside[0].source, f"node {label} parameter '{key}'", problem)
        # A default the node refuses with the values given around it (a rule between fields):
        # name the launch arguments that gave the other parameters of its section.
        section = key.rpartition(".")[0]
        around = [
            p
            for name, p in parameters.items()
            if name.rpartition(".")[0] == section and isinstance(p.source, InlineParameter)
        ]
        origins = frozenset().union(*(p.source.origins for p in around))
        arguments = plan.argument_values(origins)
        where = f"node {label} parameter '{key}' (not given: its default)"
        if arguments:
            return LaunchArgumentError(node.launch_file, where, problem, arguments)
        return LaunchFileError(node.launch_file, where, problem)
    path = getattr(error, "path", None)
    if path:
        # A file named by a parameter (a robot config) is wrong: name that parameter.
        for given in parameters.values():
            if isinstance(given.value, str) and given.value and _same_file(given.value, path):
                where = f"node {label} parameter '{given.name}'"
                return _error(plan, given.source, where, str(error))
    problem = f"would not start: {error}"
    origins = frozenset().union(*(source.origins for source in node.parameters))
    given = [argument.describe() for argument in plan.argument_values(origins) if argument.given]
    if given:
        problem += f" (its parameters come from launch arguments {', '.join(given)})"
    return LaunchFileError(node.launch_file, f"node {label}", problem)


def _same_file(value: str, path: str) -> bool:
    try:
        return Path(value).resolve() == Path(path).resolve()
    except (OSError, ValueError):
        return False


def check_node(
    node: NodeSpec, plan: LaunchPlan, module: NodeModule | None
) -> ParameterCheck | None:
    """Check one node's parameters (see the module docstring).

    Returns:
        The hook that checked them, or None (only ROS's own parameters were checked).

    Raises:
        LaunchArgumentError: A value made from launch arguments is refused; names them.
        LaunchFileError: A value given by a file is refused; names the file and parameter.
    """
    parameters = node_parameters(node, plan)
    check = module.check if module is not None else None
    try:
        _check_ros_parameters(parameters)
        if check is not None:
            check({name: given.value for name, given in parameters.items()})
    except WbmError as error:
        raise _refused(error, node, parameters, plan) from None
    return check


def check_plan(
    plan: LaunchPlan,
    *,
    find_module: Callable[[str, str], NodeModule | None] = find_node_module,
) -> list[NodeCheck]:
    """Check every node of ``plan`` before anything starts.

    Args:
        plan: The launch plan.
        find_module: Finds a node's module from its package and executable.

    Returns:
        What was checked, per process (for ``wbm launch --print``).

    Raises:
        LaunchArgumentError: A value made from launch arguments is refused; names them.
        LaunchFileError: A value given by a launch or parameters file is refused, or a node's
            module cannot be imported.
    """
    checks = []
    for process in plan.processes:
        node = process.node
        if node is None:
            checks.append(NodeCheck(process.label, None))
            continue
        try:
            module = find_module(node.package, node.executable)
        except Exception as error:  # any import-time failure: the node would fail the same way
            raise LaunchFileError(
                node.launch_file,
                f"node {process.label}",
                f"its module cannot be imported: {type(error).__name__}: {error}",
            ) from None
        check = check_node(node, plan, module)
        checked_by = f"{module.module}.{HOOK_NAME}" if module and check else None
        checks.append(NodeCheck(process.label, checked_by))
    return checks


__all__ = [
    "CHECKS_GROUP",
    "HOOK_NAME",
    "ROS_OWN_PARAMETERS",
    "GivenParameter",
    "NodeCheck",
    "NodeModule",
    "check_node",
    "check_plan",
    "find_node_module",
    "node_parameters",
]
