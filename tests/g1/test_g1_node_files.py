"""G1's node parameter files (config/g1) name G1 and frames that its model has.

Read as plain YAML here: the nodes' settings classes check keys and ranges when the nodes start
(their own tests); what only a robot's files can get wrong is the robot and its frame names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wbm_description import WholeBodyModel

CONFIG = Path(__file__).resolve().parents[2] / "config" / "g1"


def parameters(name: str) -> dict:
    return yaml.safe_load((CONFIG / name).read_text())["/**"]["ros__parameters"]


@pytest.mark.parametrize(
    "name", ["controller.yaml", "robot_interface.yaml", "state_publisher.yaml"]
)
def test_every_node_file_is_for_g1(name):
    assert parameters(name)["robot"] == "g1"


def test_controller_frames_and_contacts_exist(g1: WholeBodyModel):
    controller = parameters("controller.yaml")
    g1.frame_id(controller["base_orientation"]["frame"])
    tasks = controller["frame_tasks"]
    assert sorted(tasks["names"]) == sorted(["left_hand", "right_hand", "left_foot", "right_foot"])
    for task in tasks["names"]:
        g1.frame_id(tasks[task]["frame"])
    soles = {sole.name: sole.frame for sole in g1.config.soles}
    assert set(controller["initial_contacts"]) <= set(soles)
    # The foot tasks move the config's sole frames.
    assert tasks["left_foot"]["frame"] == soles["left_foot"]
    assert tasks["right_foot"]["frame"] == soles["right_foot"]


def test_robot_interface_file_has_one_section_per_engine():
    values = parameters("robot_interface.yaml")
    assert values["backend"] == "simulator"
    assert {"simulator", "mujoco", "noise"} <= set(values)
    # One control period per command in lockstep: the rate, not a period.
    assert "control_period" not in values and values["control_rate"] > 0.0
