"""What every wbm node shares: parameters from a settings class, throttled logs, ``main``.

- :func:`declare_settings` declares a node's parameters from a :class:`~wbm_description.
  settings.Settings` class (one read-only parameter per setting, with its description, unit and
  range; named sections as they come in the parameters file) and returns the validated settings.
- :class:`ThrottledLog` logs a repeated problem at most once per period (wall time) per key.
- :func:`run_node` is every node's ``main``: init, build the node, spin it with the chosen
  executor, and shut down cleanly. A node that cannot start (a bad parameter, robot config or
  URDF) logs one line naming the problem and exits with :data:`EXIT_STARTUP_ERROR`; Ctrl-C,
  SIGTERM and an external shutdown end it with 0 and no traceback. It sets the interpreter's
  GIL switch interval to :data:`SWITCH_INTERVAL`.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy._rclpy_pybind11 import RCLError
from rclpy.exceptions import ParameterException
from rclpy.executors import (
    ExternalShutdownException,
    MultiThreadedExecutor,
    SingleThreadedExecutor,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from wbm_description.cpu_affinity import AffinityOutcome, set_cpu_affinity
from wbm_description.cpu_latency import LatencyRequest, request_cpu_latency
from wbm_description.exceptions import WbmError
from wbm_description.realtime_priority import RealtimeOutcome, set_realtime_priority
from wbm_description.ros.discovery import use_default_profile
from wbm_description.settings import ParameterSpec, Settings, nest, parameter_specs

S = TypeVar("S", bound=Settings)
Outcome = TypeVar("Outcome", RealtimeOutcome, AffinityOutcome, LatencyRequest)

#: Exit code of a node that refused to start (its message says why).
EXIT_STARTUP_ERROR = 2

#: GIL switch interval of every wbm node's process [s] (Python's default: 5 ms). A node on the
#: control loop has several threads (the robot interface's pacing thread beside its input thread
#: taking joint_commands; the controller's input thread beside the executor): a thread woken by
#: a message waits for the GIL up to the switch interval while another computes. With 0.5 ms the
#: realtime-500 bringup's command transit p99 was lower in each of 5 alternated pairs
#: (`wbm_benchmark_bringup --rows realtime-500 --seconds 15`, loaded machine: 15-30 ms against
#: 32-164 ms), the nodes' CPU per cycle unchanged within the noise.
SWITCH_INTERVAL = 5e-4

SPIN_WAKE_PERIOD = 0.5
"""Longest wait of a node's executor before it checks whether the context was shut down [s].

A node whose executor has no timer (the state publisher with ``marker_rate`` 0, or with its
markers on its input thread as an earlier change had them: its inputs are served by their own
thread) waited in ``rcl_wait`` without a timeout. On SIGTERM, rclpy's signal handler shut the
context down (the input thread ended) but now and then the executor's wait was not woken and
the process did not exit: a py-spy dump of the stuck node showed the main thread in
``rcl_wait`` and no input thread; 2 of 40 runs of ``tests/state_publisher/test_tf_rate.py``
(markers on the input thread) under two CPU hogs, 0 of 32 with this period."""

#: Parameters rclpy declares itself: accepted, never passed to a settings class.
ROS_PARAMETERS = frozenset({"use_sim_time", "start_type_description_service"})

_ARRAY_TYPES = {
    "float[]": Parameter.Type.DOUBLE_ARRAY,
    "int[]": Parameter.Type.INTEGER_ARRAY,
    "str[]": Parameter.Type.STRING_ARRAY,
    "bool[]": Parameter.Type.BOOL_ARRAY,
}


def node_options() -> dict[str, Any]:
    """Keyword arguments of ``Node.__init__`` that :func:`declare_settings` relies on."""
    return {
        "allow_undeclared_parameters": True,
        "automatically_declare_parameters_from_overrides": True,
    }


def _declare(node: Node, spec: ParameterSpec) -> None:
    descriptor = ParameterDescriptor(
        description=spec.description, read_only=True, dynamic_typing=True
    )
    if node.has_parameter(spec.name):
        return  # given in the parameters file or on the command line
    default: Any = spec.default
    if isinstance(default, list) and not default:
        default = _ARRAY_TYPES[spec.kind]  # an empty list has no type: declare it typed
        descriptor.dynamic_typing = False
    node.declare_parameter(spec.name, default, descriptor)


def declare_settings(
    node: Node, cls: type[S], *, prefix: str = "", exclude: Iterable[str] = ()
) -> S:
    """Declare ``cls``'s settings as parameters of ``node`` and read them back validated.

    The node must be created with :func:`node_options` (parameters from the file are declared
    as they come, so that named sections and unknown keys reach the settings reader, which
    rejects what it does not know). Every setting of ``cls`` that the file does not give is
    declared with its default and description, so ``ros2 param list/describe`` show them all.

    Args:
        node: The node.
        cls: The settings class.
        prefix: Read only the parameters below this dotted prefix (e.g. ``"simulator."``).
        exclude: Sections (first names below ``prefix``) read by someone else, e.g. the
            sections of robot backends other than the node's own settings.

    Raises:
        ConfigError: A parameter with a wrong type or value, or an unknown one; the message
            names the node and the parameter.
    """
    for spec in parameter_specs(cls, prefix):
        _declare(node, spec)
    flat = {
        name: parameter.value
        for name, parameter in node.get_parameters_by_prefix("").items()
        if name not in ROS_PARAMETERS
        and not name.startswith("qos_overrides.")
        and name.startswith(prefix)
    }
    skipped = set(exclude)
    values = nest(
        {
            name[len(prefix) :]: value
            for name, value in flat.items()
            if name[len(prefix) :].split(".")[0] not in skipped
        }
    )
    values = _drop_unset(values)
    source = f"parameters of node '{node.get_fully_qualified_name()}'"
    return cls.from_mapping(values, source=source)


def _drop_unset(values: dict[str, Any]) -> dict[str, Any]:
    """Parameters declared without a value (typed, unset) keep their defaults."""
    out = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out[key] = _drop_unset(value)
        elif value is not None:
            out[key] = value
    return out


class ThrottledLog:
    """Logs a repeated problem at most once per ``period`` seconds (wall time) per key.

    Args:
        logger: The node's logger.
        period: Shortest interval between two lines of the same key [s].
    """

    def __init__(self, logger: Any, period: float = 2.0):
        self.logger = logger
        self.period = float(period)
        self._last: dict[str, float] = {}

    def due(self, key: str) -> bool:
        """Whether a line of ``key`` may be logged now (and note it if so)."""
        now = time.monotonic()
        if now - self._last.get(key, -float("inf")) < self.period:
            return False
        self._last[key] = now
        return True

    def warning(self, key: str, text: str) -> None:
        """A warning, throttled per key."""
        if self.due(key):
            self.logger.warning(text)

    def error(self, key: str, text: str) -> None:
        """An error, throttled per key."""
        if self.due(key):
            self.logger.error(text)

    def info(self, key: str, text: str) -> None:
        """An info line, throttled per key."""
        if self.due(key):
            self.logger.info(text)


class WbmNode(Node):
    """A node of wbm: parameters declared from settings, throttled logs, start and stop.

    Subclasses call ``super().__init__(name)``, read their settings with
    ``declare_settings(self, SettingsClass)``, and may override :meth:`start` (called by
    :func:`run_node` once the node spins) and :meth:`stop` (called at shutdown).

    Attributes:
        throttled: Throttled logging of repeated problems (bad messages).
    """

    def __init__(self, name: str, *, log_period: float = 2.0, **kwargs: Any):
        super().__init__(name, **node_options(), **kwargs)
        self.throttled = ThrottledLog(self.get_logger(), log_period)
        self._clock_handle = self.get_clock().handle  # the node's clock is never replaced
        self._cpu_latency: LatencyRequest | None = None  # request_cpu_latency's, held until stop

    def now_nanoseconds(self) -> int:
        """The node clock's time [ns] (sim time under use_sim_time), as ``get_clock().now()``.

        Without the rclpy ``Time`` object ``now()`` builds and checks: a third of its CPU time,
        paid per message by a node that notes when its inputs arrived.
        """
        clock = self._clock_handle
        with clock:
            return clock.get_now().nanoseconds

    def _logged(self, outcome: Outcome) -> Outcome:
        """Log a scheduling outcome (a warning when refused, info when applied) and return it."""
        if outcome.error:
            self.get_logger().warning(outcome.describe())
        elif outcome.applied:
            self.get_logger().info(outcome.describe())
        return outcome

    def apply_realtime_priority(
        self, priority: int, scope: str = "all", loop_threads: Iterable[int] = ()
    ) -> RealtimeOutcome:
        """SCHED_FIFO at ``priority`` for the process's threads (0: nothing), logged.

        ``scope`` ``"all"``: every thread; ``"loop"``: the native ids ``loop_threads`` (the
        node's hand-over threads) and the middleware's receive threads. Called by a node once
        its threads run (:mod:`wbm_description.realtime_priority`); where it is not permitted
        the node logs why and keeps normal scheduling.
        """
        return self._logged(set_realtime_priority(priority, scope, loop_threads))

    def apply_cpu_affinity(self, cpus: Sequence[int]) -> AffinityOutcome:
        """Run every thread of the process on ``cpus`` (negative: from the end; (): any), logged.

        Called by a loop node once its threads run (:mod:`wbm_description.cpu_affinity`); where
        a CPU is not there the node logs why and keeps running on any CPU.
        """
        return self._logged(set_cpu_affinity(cpus))

    def request_cpu_latency(self, microseconds: int) -> LatencyRequest:
        """Hold a CPU wake-up latency request of ``microseconds`` (-1: none) until :meth:`stop`.

        :mod:`wbm_description.cpu_latency`; where it is not permitted the node logs why.
        """
        self.release_cpu_latency()
        self._cpu_latency = self._logged(request_cpu_latency(microseconds))
        return self._cpu_latency

    def release_cpu_latency(self) -> None:
        """End the CPU latency request (if any)."""
        if self._cpu_latency is not None:
            self._cpu_latency.release()
            self._cpu_latency = None

    def start(self) -> None:
        """Called once the node is added to its executor, before spinning."""

    def stop(self) -> None:
        """Called at shutdown, before the node is destroyed (stop threads, close devices)."""


EXECUTORS = ("single", "multi")


def run_node(
    create: Callable[[], WbmNode],
    program: str,
    args: list[str] | None = None,
    *,
    executor: str = "single",
) -> int:
    """Build a node with ``create`` and spin it until shutdown; every node's ``main``.

    :meth:`WbmNode.start` is called once the node is added to the executor, before spinning,
    and :meth:`WbmNode.stop` after spinning, before the node is destroyed.

    The executor: ``"single"`` (rclpy's SingleThreadedExecutor) or ``"multi"``
    (MultiThreadedExecutor). Not rclpy.experimental's EventsExecutor: in rclpy 9.1 it never
    answers service requests and ignores SIGINT/SIGTERM.

    The process's GIL switch interval becomes :data:`SWITCH_INTERVAL`, and Fast DDS reads wbm's
    default participant profile unless another is chosen
    (:func:`~wbm_description.ros.discovery.use_default_profile`).

    Returns:
        0 after a clean shutdown; :data:`EXIT_STARTUP_ERROR` when the node refused to start
        (a one-line message on stderr and in the log names the problem).
    """
    if executor not in EXECUTORS:
        raise ValueError(f"executor: expected one of {list(EXECUTORS)}, got {executor!r}")
    sys.setswitchinterval(SWITCH_INTERVAL)
    use_default_profile()  # fast discovery at start, unless a profile is chosen
    rclpy.init(args=args)
    node = None
    try:
        try:
            node = create()
        except (WbmError, ParameterException) as error:
            rclpy.logging.get_logger(program).fatal(f"cannot start: {error}")
            print(f"{program}: error: {error}", file=sys.stderr, flush=True)
            return EXIT_STARTUP_ERROR
        if not rclpy.ok():
            return 0  # Ctrl-C while the node was being built: rclpy shut the context down
        spinner = SingleThreadedExecutor() if executor == "single" else MultiThreadedExecutor()
        spinner.add_node(node)
        try:
            node.start()
            context = node.context
            while context.ok():  # a bounded wait: see SPIN_WAKE_PERIOD
                spinner.spin_once(timeout_sec=SPIN_WAKE_PERIOD)
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        except Exception:
            # A callback that was running when Ctrl-C shut the context down fails on it (a
            # publish on an invalid context): that is the shutdown, not an error. While the
            # context is still valid, the exception is a real failure.
            if rclpy.ok():
                raise
        finally:
            try:
                node.stop()
            except Exception as error:  # a failing stop must not hide the shutdown
                node.get_logger().error(f"stopping: {type(error).__name__}: {error}")
            spinner.shutdown()
        return 0
    except (KeyboardInterrupt, ExternalShutdownException):
        return 0  # Ctrl-C while the node was being built
    except RCLError:
        # Ctrl-C while the node was being built: rclpy's signal handler shut the context down
        # and the next rclpy call failed on it. Any other RCLError is a real failure.
        if rclpy.ok():
            raise
        return 0
    finally:
        if node is not None:
            with contextlib.suppress(Exception):
                node.destroy_node()
        rclpy.try_shutdown()


__all__ = [
    "EXIT_STARTUP_ERROR",
    "ROS_PARAMETERS",
    "SPIN_WAKE_PERIOD",
    "SWITCH_INTERVAL",
    "ThrottledLog",
    "WbmNode",
    "declare_settings",
    "node_options",
    "run_node",
]
