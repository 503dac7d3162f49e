"""Ctrl-C at random moments: no traceback from any node, exit code 0, nothing left running.

SIGINT is sent at random times (seeded, printed on failure) during the start-up and the running
of ``wbm launch launch/sim.launch.yaml`` (as from a terminal: to the launcher, which forwards it
to every node), and of each node started alone with its parameter file (the robot interface, the
controller with a robot interface beside it, the state publisher). Every output must hold no
traceback, no ``Exception in '...' callback`` and no FATAL line, and every process must exit 0.

Moments are counted from the first sign of life of the program under test (the launcher's
"started" lines: its nodes are then still importing and constructing; a node's first log line),
so that a loaded machine's slow imports do not shift them out of the phase they aim at. A Ctrl-C
that lands while the Python interpreter of a program started alone is still importing its
modules (before any wbm code runs) ends in Python's own ``KeyboardInterrupt``: not covered here;
under ``wbm launch`` the nodes start with SIGINT ignored until rclpy handles it.
"""

from __future__ import annotations

import random
import sys
import time

import pytest
from reliability_helpers import CONFIG, Process, assert_no_traceback, wbm_launch

pytestmark = [pytest.mark.process, pytest.mark.slow]

SEED = 15
NODES = {
    "robot_interface": ("wbm_dynamics.ros.robot_interface_node", "robot_interface.yaml"),
    "controller": ("wbm_control.ros.controller_node", "controller.yaml"),
    "state_publisher": ("wbm_description.ros.state_publisher_node", "state_publisher.yaml"),
}


def node(name: str, *parameters: str) -> Process:
    module, params = NODES[name]
    command = [sys.executable, "-m", module, "--ros-args", "--params-file", str(CONFIG / params)]
    for parameter in parameters:
        command += ["-p", parameter]
    return Process(command)


def interrupt(process: Process, after: float, *, ready: str | None = None) -> str:
    """SIGINT ``after`` seconds past the output ``ready`` (or past the start); checks the exit."""
    try:
        if ready is not None:
            process.wait_for_output(ready, 120.0)
        time.sleep(after)
        code = process.stop(timeout=40.0)
    except AssertionError:
        process.kill()
        raise
    assert code == 0, f"exit code {code} after SIGINT at {after:.2f} s:\n{process.output[-4000:]}"
    assert_no_traceback(process.output)
    return process.output


READY = {
    "robot_interface": r"on the simulator backend",
    "controller": r"wbm_controller: robot icub",
    "state_publisher": r"static and \d+ moving transforms",
}


@pytest.mark.parametrize("moment", range(3))
def test_ctrl_c_of_the_simulation_bringup(moment):
    # One while the nodes start (importing, declaring, connecting), two while running.
    rng = random.Random(SEED + moment)
    after = rng.uniform(0.0, 2.0) if moment == 0 else rng.uniform(4.0, 10.0)
    started = r"\[wbm launch\] started state_publisher"
    interrupt(wbm_launch("sim.launch.yaml"), after, ready=started)


@pytest.mark.parametrize("name", sorted(NODES))
def test_ctrl_c_of_each_node_alone(name):
    rng = random.Random(f"{SEED}-{name}")
    for after in (rng.uniform(0.0, 1.0), rng.uniform(3.0, 6.0)):
        if name == "controller":
            # With a robot side beside it, so that Ctrl-C can land inside a control step.
            side = node("robot_interface", "pacing:=realtime")
            try:
                controller = node("controller", "use_sim_time:=true", "trigger:=inputs")
                interrupt(controller, after, ready=READY["controller"])
            finally:
                interrupt(side, 0.0)
        else:
            interrupt(node(name), after, ready=READY[name])
