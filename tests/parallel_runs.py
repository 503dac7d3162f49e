"""Parallel runs of the suite on pytest-xdist (``tools/test.sh``: ``-n 2 --dist loadscope``).

Groups (the unit a worker takes): every test file that starts ROS 2 nodes as processes (marker
``process``, found in the file's text so that the controller, which collects nothing, knows it)
belongs to one group, the process group: one worker runs those files one test at a time, so two
bringups never share the machine's two cores or DDS traffic, and a realtime-paced node competes
with at most one computing test. Every other file is a group of its own, so its module-scoped
fixtures are built once.

Order: xdist hands out groups in the order of their first test (``--no-loadscope-reorder``), two
to each worker at the start, then one more whenever a worker has one left. So that the long
groups start first and the worker that takes the process group (the longest) does not keep a
long second group waiting behind it, the tests are ordered: the process group, the first file
with slow tests, the first file without, then the other files with slow tests, then the rest.

DDS: each worker has its own domain, ``ROS_DOMAIN_ID`` + its index (within 100..230); the list
of the run's domains is in ``WBM_TEST_DOMAINS`` for tests that need a domain no worker uses.

(xdist's own ``--dist loadgroup`` does not group on pytest 9: it renames the test ids through an
attribute pytest no longer reads, so the grouping is this scheduler's.)
"""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path

import pytest

PROCESS_GROUP = "process"
PROCESS_MARK = "pytest.mark.process"


@functools.cache
def _starts_nodes(file: Path) -> bool:
    return file.is_file() and PROCESS_MARK in file.read_text()


def group_of(nodeid: str, root: Path) -> str:
    """The group of a test: the process group, or its file (relative to ``root``)."""
    path = nodeid.split("::")[0]
    return PROCESS_GROUP if _starts_nodes(root / path) else path


def pytest_configure(config: pytest.Config) -> None:
    """Give every xdist worker a DDS domain of its own, next to the run's ``ROS_DOMAIN_ID``."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", ... in a worker
    if worker is None:
        if getattr(config.option, "numprocesses", None):  # the controller: the workers' base
            os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(100, 199)))
        return
    index = int(worker.removeprefix("gw"))
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    base = int(os.environ.get("ROS_DOMAIN_ID", "100"))
    domains = [100 + (base - 100 + i) % 131 for i in range(count)]
    os.environ["ROS_DOMAIN_ID"] = str(domains[index])
    os.environ["WBM_TEST_DOMAINS"] = ",".join(str(d) for d in domains)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, order the tests by group (see the module docstring)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return
    groups = {item.nodeid: group_of(item.nodeid, config.rootpath) for item in items}
    slow = {groups[item.nodeid] for item in items if item.get_closest_marker("slow")}
    order = list(dict.fromkeys(groups.values()))
    long = [g for g in order if g in slow and g != PROCESS_GROUP]
    short = [g for g in order if g not in slow and g != PROCESS_GROUP]
    ranked = [PROCESS_GROUP] if PROCESS_GROUP in order else []
    ranked += long[:1] + short[:1] + long[1:] + short[1:]
    rank = {group: i for i, group in enumerate(ranked)}
    items.sort(key=lambda item: rank[groups[item.nodeid]])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's scope scheduler, with this module's groups as scopes."""
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid, root)

    return GroupScheduling(config, log)
