"""Fixtures of the driver tests: an emulated robot on 127.0.0.1."""

from __future__ import annotations

import pytest
from driver_helpers import emulator_process


@pytest.fixture()
def emulator(tmp_path):
    """The device emulator (iCub, 2 ms cycle, firmware watchdog 0.2 s)."""
    with emulator_process(tmp_path) as running:
        yield running
