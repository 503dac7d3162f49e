"""Fixtures of the description tests: the Unitree G1 model (iCub's and Panda's are shared)."""

from __future__ import annotations

import pytest

from wbm_description import WholeBodyModel, load_robot


@pytest.fixture(scope="session")
def g1() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("g1"))
