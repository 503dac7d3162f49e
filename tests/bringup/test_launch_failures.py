"""A node that fails at start, or dies, ends the whole launch with its message and status.

`wbm launch` runs as a process over the real nodes. A URDF that is not well-formed XML is
refused by the pre-flight checks (which build each node's model before anything starts) and, when
they are told not to look (``--no-check``), by the nodes themselves; so is the issue's
``target_duration:=-1``, which left the simulator running without a controller; and a node killed
while running ends the launch too.
Afterwards no process of the launch may be left.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
import yaml
from bringup_helpers import ROOT, Process, alive, wbm_launch

from wbm_description.registry import load_robot, robot_config_path

pytestmark = [pytest.mark.process, pytest.mark.slow]

END_TIMEOUT = 90.0  # [s] to start the nodes and see them fail on a loaded 2-core machine


def wait_for_end(launch: Process) -> int:
    try:
        return launch.popen.wait(timeout=END_TIMEOUT)
    except Exception:
        launch.stop(signal.SIGKILL)
        raise AssertionError(f"the launch did not end:\n{launch.output[-4000:]}") from None


def assert_nothing_left(launch: Process) -> None:
    time.sleep(0.2)
    launch._reader.join(timeout=5.0)
    pids = launch.child_pids()
    assert pids, launch.output
    left = {label: pid for label, pid in pids.items() if alive(pid)}
    assert left == {}, f"processes left behind: {left}\n{launch.output[-3000:]}"


def output_of(launch: Process, label: str) -> str:
    """The lines of one process (prefixed ``[label]``) or of the launcher (``wbm launch``)."""
    return "".join(line for line in launch.lines if line.startswith(f"[{label}] "))


def ending_node(launch: Process) -> tuple[str, int]:
    match = re.search(r"the launch ends because (\S+) failed \(exit code (\d+)\)", launch.output)
    assert match, launch.output[-4000:]
    return match[1], int(match[2])


@pytest.fixture()
def robot_with_a_broken_urdf(tmp_path) -> Path:
    """iCub's robot config with a URDF cut in half (not well-formed XML)."""
    config = yaml.safe_load(robot_config_path("icub").read_text())
    urdf = load_robot("icub").urdf_path.read_text()
    (tmp_path / "broken.urdf").write_text(urdf[: len(urdf) // 2])
    config["urdf"] = "broken.urdf"
    path = tmp_path / "broken_icub.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_urdf_that_is_not_xml_is_refused_before_any_node_starts(robot_with_a_broken_urdf):
    launch = wbm_launch(
        "robot.launch.yaml",
        f"robot:={robot_with_a_broken_urdf}",
        f"config_directory:={ROOT / 'config' / 'icub'}",
    )
    code = wait_for_end(launch)
    assert code != 0, launch.output[-3000:]
    assert re.search(
        r"wbm: error: .*robot\.launch\.yaml: node \S+: would not start: .*broken\.urdf: XML: "
        r"expected well-formed XML",
        launch.output,
    ), launch.output[-3000:]
    assert "Traceback" not in launch.output, launch.output[-3000:]
    node_line = r"^\[(controller|state_publisher|robot_interface)\] "
    assert not re.search(node_line, launch.output, re.M), launch.output[-3000:]


def test_a_urdf_the_nodes_cannot_read_ends_the_launch(robot_with_a_broken_urdf):
    launch = wbm_launch(
        "robot.launch.yaml",
        f"robot:={robot_with_a_broken_urdf}",
        f"config_directory:={ROOT / 'config' / 'icub'}",
        "--no-check",
    )
    code = wait_for_end(launch)
    label, status = ending_node(launch)
    assert label in ("controller", "state_publisher")
    assert code == status != 0, launch.output[-3000:]
    assert "broken.urdf: XML: expected well-formed XML" in output_of(launch, label)
    for name in (label, "wbm launch"):  # see the next test about nodes still starting
        assert "Traceback" not in output_of(launch, name), launch.output[-3000:]
    assert_nothing_left(launch)


def test_a_node_refusing_its_parameters_at_start_ends_the_launch():
    # The case: the controller refused target_duration and the simulator ran on alone.
    launch = wbm_launch("sim.launch.yaml", "target_duration:=-1", "--no-check")
    code = wait_for_end(launch)
    assert ending_node(launch) == ("controller", code) and code != 0, launch.output[-3000:]
    assert re.search(r"\[controller\] .*'target_duration': expected", launch.output)
    # The node that failed says why in one line. (Nodes still starting when the launch stops
    # them may print a KeyboardInterrupt traceback until they run on the shared node runtime,
    # which catches Ctrl-C during construction: the robot interface does not yet.)
    for label in ("controller", "wbm launch"):
        assert "Traceback" not in output_of(launch, label), launch.output[-3000:]
    assert_nothing_left(launch)


def test_a_node_killed_while_running_ends_the_launch():
    launch = wbm_launch("sim.launch.yaml", "pacing:=realtime")
    try:
        launch.wait_for_output(r"\[state_publisher\] .*robot 'icub'", END_TIMEOUT)
        launch.wait_for_output(r"\[controller\] ", END_TIMEOUT)
        pid = launch.child_pids()["state_publisher"]
        time.sleep(1.0)
        launch.popen.poll()
        assert launch.popen.returncode is None, launch.output[-3000:]
        os.kill(pid, signal.SIGKILL)
        assert wait_for_end(launch) == 128 + signal.SIGKILL, launch.output[-3000:]
        assert "state_publisher was killed by SIGKILL" in launch.output
        assert_nothing_left(launch)
    finally:
        if launch.popen.poll() is None:
            launch.stop()
