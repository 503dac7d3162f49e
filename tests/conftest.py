"""Shared fixtures: robot models built once per test session, and a seeded random generator.

The hooks of parallel runs (pytest-xdist, as ``tools/test.sh`` runs the suite) are in
``tests/parallel_runs.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from parallel_runs import (  # noqa: F401 (hooks)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_xdist_make_scheduler,
)

from wbm_description import WholeBodyModel, load_robot, load_robot_config

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def icub() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("icub"))


@pytest.fixture(scope="session")
def panda() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("panda"))


@pytest.fixture(scope="session")
def planar_arm() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot_config(DATA / "planar_2link.yaml"))


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(42)


@pytest.fixture()
def random_state(rng):
    """A function (model) -> (q, v): a configuration within the joint limits, a random velocity."""

    def draw(model: WholeBodyModel) -> tuple[np.ndarray, np.ndarray]:
        lower, upper = model.joint_position_limits
        joints = rng.uniform(lower, upper)
        if model.floating_base:
            rotation = pin.rpy.rpyToMatrix(rng.uniform(-np.pi, np.pi, 3))
            q = model.configuration(pin.SE3(rotation, rng.normal(size=3)), joints)
        else:
            q = joints
        return q, rng.normal(size=model.nv)

    return draw
