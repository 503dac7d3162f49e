"""The nodes' ``check_parameters`` hooks: the shipped parameter files pass, each rule refuses.

The hooks take the parameters as the node receives them (here: the shipped parameters file read
the way rcl reads it, plus inline values) and raise ConfigError keyed by the parameter's name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wbm_bringup.launching.ros_parameters import parameters_file
from wbm_bringup.ros import recorder_node, scenario_node, viewer_node
from wbm_description.exceptions import ConfigError
from wbm_description.ros import state_publisher_node

ROOT = Path(__file__).resolve().parents[2]
STATE_PUBLISHER = parameters_file(ROOT / "config/icub/state_publisher.yaml", "/state_publisher")


def refused_key(check, parameters) -> str:
    with pytest.raises(ConfigError) as info:
        check(parameters)
    return info.value.key


VIEWER = parameters_file(ROOT / "config/icub/viewer.yaml", "/viewer")


def test_viewer():
    check = viewer_node.check_parameters
    check({**VIEWER, "use_sim_time": True})
    assert refused_key(check, {**VIEWER, "refresh_rate": -1.0}) == "refresh_rate"
    assert refused_key(check, {**VIEWER, "unknown": 1}) == "unknown"
    assert refused_key(check, {**VIEWER, "robot": "nonexistent"}) == "robot"
    assert refused_key(check, {**VIEWER, "target_frames": ["l_hand"]}) == "target_frames"


@pytest.mark.parametrize("module", [state_publisher_node])
def test_state_publisher(module):
    check = module.check_parameters
    check({**STATE_PUBLISHER, "use_sim_time": True})
    assert refused_key(check, {**STATE_PUBLISHER, "marker_rate": -1.0}) == "marker_rate"
    assert refused_key(check, {**STATE_PUBLISHER, "unknown": 1}) == "unknown"
    assert refused_key(check, {**STATE_PUBLISHER, "robot": "nonexistent"}) == "robot"
    assert refused_key(check, {**STATE_PUBLISHER, "base_pose_topic": "a b"}) == "base_pose_topic"
    assert refused_key(check, {**STATE_PUBLISHER, "ft_topic_prefix": "f t/"}) == "ft_topic_prefix"


def test_recorder(tmp_path):
    check = recorder_node.check_parameters
    check({"output": str(tmp_path / "new" / "bag"), "use_sim_time": True})
    check({"output": str(tmp_path / "bag"), "topics": ["/clock", "joint_states"]})
    assert refused_key(check, {}) == "output"  # required
    assert refused_key(check, {"output": str(tmp_path)}) == "output"  # exists
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert refused_key(check, {"output": str(blocker / "bag")}) == "output"  # under a file
    assert refused_key(check, {"output": str(tmp_path / "b"), "topics": ["a b"]}) == "topics[0]"
    assert refused_key(check, {"output": str(tmp_path / "b"), "discovery_period": 0.0}) == (
        "discovery_period"
    )


def test_scenario():
    check = scenario_node.check_parameters
    check({"robot": "icub", "scenario.end_time": 8.0, "use_sim_time": True})
    assert refused_key(check, {"scenario.hand_duration": -1.0}) == "scenario.hand_duration"
    assert refused_key(check, {"scenario.end_time": 3.0}) == "scenario.push_time"
    assert refused_key(check, {"scenario.hand_frame": "no_such_frame"}) == "scenario.hand_frame"
    assert refused_key(check, {"scenario.push_frame": "no_such_frame"}) == "scenario.push_frame"
    assert refused_key(check, {"scenario.hand_task": "left hand"}) == "scenario.hand_task"
    assert refused_key(check, {"robot": "nonexistent"}) == "robot"
