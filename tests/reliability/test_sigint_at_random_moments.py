"""Ctrl-C at random moments: no traceback from any node, exit code 0, nothing left running.

SIGINT is sent at random times (seeded, printed on failure) during the start-up and the running
of ``wbm launch launch/sim.launch.yaml`` (every node gets it, as from a terminal), and of each
node started alone with its parameter file (the robot interface, the controller with the robot
interface beside it, the state publisher). Every node's output must hold no traceback, no
``Exception in '...' callback`` and no FATAL line, and every process must exit with 0.
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


def interrupt(process: Process, after: float) -> str:
    time.sleep(after)
    try:
        code = process.stop(timeout=40.0)
    except AssertionError:
        process.kill()
        raise
    assert code == 0, f"exit code {code} after SIGINT at {after:.2f} s:\n{process.output[-4000:]}"
    assert_no_traceback(process.output)
    return process.output


@pytest.mark.parametrize("moment", range(3))
def test_ctrl_c_of_the_simulation_bringup(moment):
    # One during the start-up (the nodes importing, declaring, connecting), two while running.
    after = random.Random(SEED + moment).uniform(*((0.3, 3.0) if moment == 0 else (6.0, 14.0)))
    interrupt(wbm_launch("sim.launch.yaml"), after)


@pytest.mark.parametrize("name", sorted(NODES))
def test_ctrl_c_of_each_node_alone(name):
    rng = random.Random(f"{SEED}-{name}")
    for after in (rng.uniform(0.2, 2.0), rng.uniform(4.0, 8.0)):
        if name == "controller":
            # With a robot side beside it, so that Ctrl-C can land inside a control step.
            side = node("robot_interface", "pacing:=realtime")
            try:
                output = interrupt(
                    node("controller", "use_sim_time:=true", "trigger:=inputs"), after
                )
            finally:
                interrupt(side, 0.0)
        else:
            output = interrupt(node(name), after)
        assert "Traceback" not in output
