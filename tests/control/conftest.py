"""Shared fixtures of the controller tests (helpers live in control_helpers.py)."""

from __future__ import annotations

import pytest

from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel


@pytest.fixture(scope="session")
def icub() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("icub"))
