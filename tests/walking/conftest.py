"""Fixtures of the walking tests (helpers live in walking_helpers.py)."""

from __future__ import annotations

import pytest
from walking_helpers import SPACING, feet_of_icub_size

from wbm_control.walking import Feet, WalkingGeometry, WalkingSettings


@pytest.fixture(scope="session")
def icub_geometry(icub) -> WalkingGeometry:
    return WalkingGeometry.from_model(icub)


@pytest.fixture(scope="session")
def feet() -> Feet:
    """iCub-sized soles without loading the robot: 0.14 x 0.07 m, centre 0.02 m ahead."""
    return feet_of_icub_size()


@pytest.fixture(scope="session")
def settings() -> WalkingSettings:
    """Default settings, resolved with an iCub-like spacing and CoM height."""
    return WalkingSettings(nominal_foot_spacing=SPACING, com_height=0.48)
