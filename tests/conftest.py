"""Shared fixtures: robot models built once per test session, and a seeded random generator.

Also the set-up of parallel runs (``pytest -n 2 --dist loadgroup``, as ``tools/test.sh`` runs
the suite): every test that starts ROS 2 nodes (marker ``process``) goes to one group, run by one
worker one test at a time, so that two bringups never share the machine's two cores or a DDS
domain, and realtime pacing competes with at most one computing test; every other test file is
a group of its own (its module-scoped fixtures are built once). Each worker has its own DDS
domain (``ROS_DOMAIN_ID`` + worker index) for the tests that create rclpy nodes in-process.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from wbm_description import WholeBodyModel, load_robot, load_robot_config

DATA = Path(__file__).resolve().parent / "data"
PROCESS_GROUP = "process"  # the xdist group of every test marked ``process``


def pytest_configure(config):
    """Give every xdist worker a DDS domain of its own, next to the run's ``ROS_DOMAIN_ID``."""
    workers = getattr(config.option, "numprocesses", None)
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", ... in a worker
    if worker is None:
        if workers:  # the controller: one base domain that the workers inherit
            os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(100, 199)))
        return
    index = int(worker.removeprefix("gw"))
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    base = int(os.environ.get("ROS_DOMAIN_ID", "100"))
    domains = [100 + (base - 100 + i) % 131 for i in range(count)]  # within 100..230
    os.environ["ROS_DOMAIN_ID"] = str(domains[index])
    os.environ["WBM_TEST_DOMAINS"] = ",".join(str(d) for d in domains)


def pytest_collection_modifyitems(config, items):
    """Group the tests for ``--dist loadgroup``: process tests together, else one group a file."""
    if getattr(config.option, "dist", "no") != "loadgroup":
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        if item.get_closest_marker("process") is not None:
            group = PROCESS_GROUP
        else:
            group = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


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
