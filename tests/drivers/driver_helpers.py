"""Helpers of the driver tests: the device emulator as a process, and its dump."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wbm_dynamics.backends.plugins import ENTRY_POINT_GROUP
from wbm_dynamics.backends.template_driver import TemplateDriver

TEMPLATE = "wbm_dynamics.backends.template_driver:TemplateDriver"


class BrokenSettingsBackend(TemplateDriver):
    """A backend class whose settings_class is not a Settings class (refused by the loader)."""

    settings_class = dict


def write_dist_info(root: Path, entries: dict[str, str], name: str = "wbm-test-driver") -> Path:
    """A distribution ``name`` 0.1 declaring ``entries`` in the backends group, under ``root``."""
    folder = root / f"{name.replace('-', '_')}-0.1.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = "".join(f"{key} = {value}\n" for key, value in entries.items())
    (folder / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    return folder


EMULATOR = Path(__file__).resolve().parent / "device_emulator.py"
START_TIMEOUT = 30.0  # [s] of wall time: imports and model building on a loaded machine


@dataclass
class Emulator:
    """A running device emulator."""

    process: subprocess.Popen
    port: int
    dump_path: Path

    terminated: bool = False

    def terminate(self) -> None:
        """Ask it to stop (SIGTERM, once: it then writes its dump and exits)."""
        if not self.terminated:
            self.terminated = True
            self.process.terminate()

    def stop(self) -> dict[str, np.ndarray]:
        """Stop it and load what it recorded."""
        self.terminate()
        self.process.wait(timeout=10.0)
        assert self.process.returncode == 0, f"emulator exited with {self.process.returncode}"
        with np.load(self.dump_path) as data:
            return dict(data)


@contextlib.contextmanager
def emulator_process(tmp_path: Path, *arguments: str) -> Iterator[Emulator]:
    """The device emulator on 127.0.0.1 (a free port); always terminated on exit."""
    dump = tmp_path / f"emulator_{time.monotonic_ns()}.npz"
    log = open(tmp_path / "emulator.log", "a")  # closed in the finally below
    process = subprocess.Popen(
        [sys.executable, str(EMULATOR), "--port", "0", "--dump", str(dump), *arguments],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=os.environ,
    )
    try:
        port = _wait_ready(process, tmp_path / "emulator.log")
        yield Emulator(process, port, dump)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()
        log.close()


def _wait_ready(process: subprocess.Popen, log: Path) -> int:
    """The port of the emulator's ``READY <port>`` line, within START_TIMEOUT."""
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT)
    line = process.stdout.readline() if ready else ""
    if not line.startswith("READY"):
        raise AssertionError(
            f"emulator not ready within {START_TIMEOUT} s: {line!r}\n{log.read_text()}"
        )
    return int(line.split()[1])


def state_at(dump: dict[str, np.ndarray], device_time: float) -> int:
    """Index of the emulator's sample at ``device_time`` (to within 1 us)."""
    index = int(np.argmin(np.abs(dump["state_time"] - device_time)))
    assert abs(dump["state_time"][index] - device_time) < 1e-6, (
        f"no emulator sample at t = {device_time} s (nearest {dump['state_time'][index]} s)"
    )
    return index


def mask_runs(masks: np.ndarray) -> list[tuple[tuple[int, ...], int, int]]:
    """Consecutive command packets with the same mask: (mask, first index, count), in order.

    Received command packets are in the order the driver sent them; their receive times are
    the emulator's, which lag the driver's view when a process is slow, so tests find the
    switches between commands by content rather than by time.
    """
    runs: list[tuple[tuple[int, ...], int, int]] = []
    for index, mask in enumerate(masks):
        key = tuple(int(m) for m in mask)
        if runs and runs[-1][0] == key:
            runs[-1] = (key, runs[-1][1], runs[-1][2] + 1)
        else:
            runs.append((key, index, 1))
    return runs
