"""``wbm launch`` as a process: Ctrl-C forwarding, required processes, nothing left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.process

SLEEPER = (
    "import signal, sys, time, pathlib; "
    "pathlib.Path(sys.argv[1]).write_text(str(__import__('os').getpid())); "
    "signal.signal(signal.SIGINT, lambda *a: sys.exit(0)); "
    "time.sleep(60)"
)


def write_launch(directory: Path, entities: list) -> Path:
    path = directory / "test.launch.yaml"
    path.write_text(yaml.safe_dump({"launch": entities}, sort_keys=False))
    return path


def sleeper(directory: Path, name: str, **attributes) -> dict:
    pid_file = directory / f"{name}.pid"
    return {
        "executable": {
            "cmd": f'{sys.executable} -c "{SLEEPER}" {pid_file}',
            "name": name,
            **attributes,
        }
    }


def wait_for_files(paths: list[Path], timeout: float = 20.0) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(path.exists() and path.read_text() for path in paths):
            return [int(path.read_text()) for path in paths]
        time.sleep(0.05)
    raise AssertionError(f"processes did not start: {paths}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def start_launch(path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "wbm_bringup.cli", "launch", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_ctrl_c_stops_every_process(tmp_path):
    path = write_launch(tmp_path, [sleeper(tmp_path, "a"), sleeper(tmp_path, "b")])
    launcher = start_launch(path)
    try:
        pids = wait_for_files([tmp_path / "a.pid", tmp_path / "b.pid"])
        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=20)
        assert launcher.returncode == 0, output
        assert not any(alive(pid) for pid in pids), output
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)


def test_required_process_ends_the_launch(tmp_path):
    path = write_launch(
        tmp_path,
        [
            sleeper(tmp_path, "long"),
            {
                "executable": {
                    "cmd": f'{sys.executable} -c "import time, sys; time.sleep(1); sys.exit(3)"',
                    "name": "short",
                    "on_exit": "shutdown",
                }
            },
        ],
    )
    launcher = start_launch(path)
    try:
        (pid,) = wait_for_files([tmp_path / "long.pid"])
        output, _ = launcher.communicate(timeout=30)
        assert "short is required: shutting the launch down" in output
        assert launcher.returncode == 3, output
        assert not alive(pid)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)


def test_output_is_prefixed_with_the_process_name(tmp_path):
    path = write_launch(
        tmp_path,
        [{"executable": {"cmd": f"{sys.executable} -c \"print('hello')\"", "name": "greeter"}}],
    )
    launcher = start_launch(path)
    output, _ = launcher.communicate(timeout=30)
    assert "[greeter] hello" in output
    assert launcher.returncode == 0


def test_a_failing_required_process_ends_the_launch_with_its_code_and_says_why(tmp_path):
    path = write_launch(
        tmp_path,
        [
            sleeper(tmp_path, "long", on_exit="shutdown"),
            {
                "executable": {
                    "cmd": f"{sys.executable} -c \"print('cannot start: bad value'); raise "
                    f'SystemExit(2)"',
                    "name": "refuser",
                    "on_exit": "shutdown",
                }
            },
        ],
    )
    launcher = start_launch(path)
    try:
        (pid,) = wait_for_files([tmp_path / "long.pid"])
        output, _ = launcher.communicate(timeout=30)
        assert launcher.returncode == 2, output
        assert "[refuser] cannot start: bad value" in output
        assert "the launch ends because refuser failed (exit code 2)" in output
        assert "long exited" not in output  # stopped by the launcher: not counted
        assert not alive(pid)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)


def test_a_killed_required_process_ends_the_launch_with_128_plus_the_signal(tmp_path):
    path = write_launch(
        tmp_path,
        [sleeper(tmp_path, "victim", on_exit="shutdown"), sleeper(tmp_path, "other")],
    )
    launcher = start_launch(path)
    try:
        victim, other = wait_for_files([tmp_path / "victim.pid", tmp_path / "other.pid"])
        os.kill(victim, signal.SIGKILL)
        output, _ = launcher.communicate(timeout=30)
        assert launcher.returncode == 128 + signal.SIGKILL, output
        assert "victim was killed by SIGKILL" in output
        assert not alive(other)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)


def test_a_required_process_ending_normally_ends_the_launch_with_0(tmp_path):
    # The demo's flow: the scenario node ends at its end time, the bringup is stopped.
    path = write_launch(
        tmp_path,
        [
            sleeper(tmp_path, "bringup", on_exit="shutdown"),
            {
                "executable": {
                    "cmd": f'{sys.executable} -c "import time; time.sleep(1)"',
                    "name": "scenario",
                    "on_exit": "shutdown",
                }
            },
        ],
    )
    launcher = start_launch(path)
    try:
        (pid,) = wait_for_files([tmp_path / "bringup.pid"])
        output, _ = launcher.communicate(timeout=30)
        assert launcher.returncode == 0, output
        assert "scenario exited with code 0" in output and "failed" not in output
        assert not alive(pid)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)


class ClosingStream:
    """A stream whose reader goes away after ``lines`` writes (``wbm launch ... | head``)."""

    def __init__(self, lines: int) -> None:
        self.lines = lines
        self.written: list[str] = []

    def write(self, text: str) -> int:
        if len(self.written) >= self.lines:
            raise BrokenPipeError(32, "Broken pipe")
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        if len(self.written) > self.lines:
            raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize(
    ("first_line", "closes_after"),
    [(b"not utf-8: \xff\xfe", 10**9), (b"plain", 3)],
    ids=["bytes-not-utf-8", "reader-gone"],
)
def test_the_output_is_read_to_the_end(first_line, closes_after):
    """The processes' output is read whatever it holds and wherever it goes: bytes that are not
    UTF-8 are replaced, and after the launcher's stdout reader went away (``wbm launch ... |
    head``) it is still read and dropped. A process writing 8 MB after its first line (far more
    than a 64 kB pipe holds) runs to its own end: exit code 0, not stopped by the shutdown's
    signals, and the launch ends."""
    from wbm_bringup.launching.description import ProcessSpec
    from wbm_bringup.launching.runner import LaunchRunner

    chatty = (
        f"import sys; sys.stdout.buffer.write({first_line!r} + bytes([10])); "
        "[print('x' * 79) for _ in range(100_000)]"
    )
    spec = ProcessSpec(label="chatty", command=(sys.executable, "-c", chatty), required=True)
    stream = ClosingStream(lines=closes_after)
    runner = LaunchRunner([spec], stream=stream, grace=2.0)
    runner.start()
    code = runner.wait(timeout=120.0)
    child = runner.children[0]
    assert child.returncode == 0 and code == 0, (child.returncode, stream.written[:5])
    assert stream.written[0].startswith("[wbm launch] started chatty")
    expected = first_line.decode("utf-8", errors="replace")
    assert stream.written[1] == f"[chatty] {expected}\n"
