"""Fixtures of the reliability tests (helpers live in reliability_helpers.py)."""

from __future__ import annotations

import os
import random

import pytest


@pytest.fixture(autouse=True)
def ros_environment(monkeypatch):
    """A DDS domain of our own unless the environment sets one; discovery on localhost only."""
    if "ROS_DOMAIN_ID" not in os.environ:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(random.randint(120, 230)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
