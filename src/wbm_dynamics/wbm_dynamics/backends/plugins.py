"""Robot backends by name: the built-in ones and the drivers installed as entry points.

A driver package registers its backend class in the entry point group ``wbm.robot_backends``::

    # setup.py
    entry_points={"wbm.robot_backends": ["my_robot = my_pkg.driver:MyRobotBackend"]}

    # or pyproject.toml
    [project.entry-points."wbm.robot_backends"]
    my_robot = "my_pkg.driver:MyRobotBackend"

and the robot-interface node hosts it with ``backend:=my_robot``. Names are looked up among the
built-in backends (:data:`wbm_dynamics.backends.BACKENDS`) first, then among the entry points of
every installed distribution (:func:`importlib.metadata.entry_points`); a plugin is imported only
when its name is asked for. A name that is both built-in and a plugin, or registered by two
distributions, is an error rather than a silent choice.

Construction (:func:`create_backend`): ``backend_class(model, settings)``, where the settings
are an instance of the backend's own ``settings_class``: read by the node from the section of its
parameters named after the backend, or read here from a backend config file
(``settings_class.from_yaml(path)``: how a hardware driver gets its address and timeouts). An
engine backend (:class:`~wbm_dynamics.backends.engine_backend.EngineBackend`) also takes the
sensor noise wrapper.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from wbm_description.exceptions import ConfigError
from wbm_description.settings import Settings
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.backend import RobotBackend
from wbm_dynamics.backends.engine_backend import EngineBackend
from wbm_dynamics.exceptions import BackendError
from wbm_dynamics.noise import SensorNoise

ENTRY_POINT_GROUP = "wbm.robot_backends"


@dataclass(frozen=True)
class BackendSource:
    """Where a backend name comes from.

    Attributes:
        name: The backend name (the node's ``backend`` parameter).
        origin: ``"built-in"``, or ``"<module>:<class> (<distribution> <version>)"``.
        entry_point: The entry point, None for a built-in backend.
    """

    name: str
    origin: str
    entry_point: EntryPoint | None = None


def _builtin_backends() -> dict[str, type[RobotBackend]]:
    from wbm_dynamics.backends import BACKENDS  # here: the package may import this module

    return dict(BACKENDS)


def _origin(entry_point: EntryPoint) -> str:
    dist = entry_point.dist
    where = f" ({dist.name} {dist.version})" if dist is not None else ""
    return f"{entry_point.value}{where}"


def available_backends() -> dict[str, list[BackendSource]]:
    """Every backend name with where it comes from (more than one source: ambiguous).

    Returns:
        Name to its sources, names sorted, built-in source first.
    """
    sources: dict[str, list[BackendSource]] = {
        name: [BackendSource(name, "built-in")] for name in _builtin_backends()
    }
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        source = BackendSource(entry_point.name, _origin(entry_point), entry_point)
        known = sources.setdefault(entry_point.name, [])
        if all(s.origin != source.origin for s in known):  # a dist-info seen twice on sys.path
            known.append(source)
    return dict(sorted(sources.items()))


def _listing(sources: dict[str, list[BackendSource]]) -> str:
    return ", ".join(
        f"{name} ({'; '.join(s.origin for s in found)})" for name, found in sources.items()
    )


def load_backend(name: str) -> type[RobotBackend]:
    """The backend class registered under ``name`` (a plugin is imported here).

    Raises:
        BackendError: Unknown name (the message lists the names available), a name registered
            more than once, a plugin that fails to import (the message names the entry point,
            its distribution and the import error), an object that is not a RobotBackend, or
            one whose ``settings_class`` is not a Settings class.
    """
    sources = available_backends()
    found = sources.get(name)
    if not found:
        raise BackendError(
            f"unknown robot backend {name!r}; available: {_listing(sources)}. A driver package "
            f"registers one in the entry point group {ENTRY_POINT_GROUP!r}"
        )
    if len(found) > 1:
        raise BackendError(
            f"robot backend {name!r} is registered more than once: "
            f"{'; '.join(s.origin for s in found)}; uninstall or rename one"
        )
    source = found[0]
    if source.entry_point is None:
        return _builtin_backends()[name]
    try:
        backend = source.entry_point.load()
    except Exception as error:  # any import-time failure of third-party code
        raise BackendError(
            f"robot backend {name!r} (entry point {source.origin} in group "
            f"{ENTRY_POINT_GROUP!r}) failed to import: {type(error).__name__}: {error}"
        ) from error
    if not (isinstance(backend, type) and issubclass(backend, RobotBackend)):
        raise BackendError(
            f"robot backend {name!r} (entry point {source.origin}) is {backend!r}, "
            "expected a subclass of wbm_dynamics.backends.RobotBackend"
        )
    settings_class = backend.settings_class
    if not (isinstance(settings_class, type) and issubclass(settings_class, Settings)):
        raise BackendError(
            f"robot backend {name!r} (entry point {source.origin}) has settings_class "
            f"{settings_class!r}, expected a subclass of wbm_description.settings.Settings"
        )
    return backend


def create_backend(
    name: str,
    model: WholeBodyModel,
    settings: Settings | None = None,
    *,
    config_file: str | Path | None = None,
    noise: SensorNoise | None = None,
) -> RobotBackend:
    """Build the backend ``name`` for ``model`` with its own settings.

    Args:
        name: Backend name (built-in or entry point).
        model: The whole-body model of the robot.
        settings: The backend's settings, an instance of its ``settings_class`` (the node reads
            them from the backend's section); None: read from ``config_file``, or the defaults.
        config_file: A file of the backend's settings (a hardware driver's address and
            timeouts), read with ``settings_class.from_yaml``; None or "" for none.
        noise: Sensor noise for a simulated robot (an engine backend); None for none.

    Raises:
        BackendError: See :func:`load_backend`; also noise for a backend that is not an engine
            (a real robot's sensors are what they are).
        ConfigError: Both settings and a config file, settings of another class, or a bad
            value in the config file (naming the file and the key).
        WbmError: Errors of the backend's constructor propagate (ConfigError, BackendError when
            the robot does not answer).
    """
    backend = load_backend(name)
    if config_file:
        if settings is not None:
            raise ConfigError(
                config_file,
                "",
                f"the settings of backend {name!r} from this file or given, not both",
            )
        settings = backend.settings_class.from_yaml(config_file)
    if noise is None:
        return backend(model, settings)
    if not issubclass(backend, EngineBackend):
        raise BackendError(
            f"robot backend {name!r} ({backend.__module__}.{backend.__qualname__}) is not a "
            "simulation: sensor noise applies to engine backends only; set every noise "
            "standard deviation to 0"
        )
    return backend(model, settings, noise=noise)


__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendSource",
    "available_backends",
    "create_backend",
    "load_backend",
]
