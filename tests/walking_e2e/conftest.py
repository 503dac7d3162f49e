"""Fixtures of the walking closed-loop tests: the controller file and walking settings."""

from __future__ import annotations

from pathlib import Path

import pytest

CONTROLLER_YAML = Path(__file__).resolve().parents[2] / "config" / "icub" / "controller.yaml"


@pytest.fixture(scope="session")
def controller_yaml() -> Path:
    return CONTROLLER_YAML
