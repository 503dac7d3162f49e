"""A malformed URDF, robot config or parameter stops the nodes at start with a clear message."""

from __future__ import annotations

import pytest

from wbm_description.registry import load_robot

pytestmark = pytest.mark.process

MODULE = "wbm_description.ros.state_publisher_node"


def write_config(tmp_path, urdf_text: str) -> str:
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(urdf_text)
    icub = load_robot("icub").config_path.read_text()
    text = icub.replace(
        "urdf:\n  package: example-robot-data\n"
        "  path: robots/icub_description/robots/icub_reduced.urdf",
        f"urdf: {urdf}",
    )
    assert text != icub
    config = tmp_path / "robot.yaml"
    config.write_text(text)
    return str(config)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("malformed_urdf", ["robot.urdf", "well-formed XML"]),
        ("missing_config", ["no_such_config.yaml", "an existing robot config file"]),
        ("bad_parameter", ["marker_rate", "a number >= 0 and <= 1000", "-1.0"]),
        ("bad_parameter_type", ["force_scale", "a number"]),
    ],
)
def test_node_refuses_to_start(start_node, tmp_path, case, expected):
    if case == "malformed_urdf":
        config = write_config(tmp_path, '<robot name="x"><link name=')
        args = ["-p", f"robot:={config}"]
    elif case == "missing_config":
        args = ["-p", f"robot:={tmp_path / 'no_such_config.yaml'}"]
    elif case == "bad_parameter":
        args = ["-p", "marker_rate:=-1.0"]
    else:
        args = ["-p", "force_scale:=big"]
    process = start_node(MODULE, args)
    assert process.wait_exit(timeout=60.0) == 2
    message = process.stderr()
    # One error line from the shared node runtime (beside its FATAL log line), no traceback.
    lines = [
        line for line in message.splitlines() if line.startswith("wbm_state_publisher: error:")
    ]
    assert len(lines) == 1, message
    assert "Traceback" not in message, message
    for fragment in expected:
        assert fragment in lines[0], message
