"""The browser viewer's cores without a browser: push force, real-time factor, mesh loading."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from wbm_bringup.viewer.camera import framing_camera
from wbm_bringup.viewer.foxglove_layout import layout_uses
from wbm_bringup.viewer.push import push_force
from wbm_bringup.viewer.status import RealTimeFactor, controller_status
from wbm_bringup.viewer.urdf_visuals import load_visuals
from wbm_description.exceptions import ConfigError, InputError

FOXGLOVE_LAYOUT = (
    Path(__file__).resolve().parents[2] / "src" / "wbm_bringup" / "foxglove" / "wbm_layout.json"
)


def test_push_force_times_duration_is_the_impulse():
    force = push_force(7.25, 90.0, 30.0, 0.1)
    # Closed form: |F| t = J, direction (cos e cos a, cos e sin a, sin e); 1e-12 relative.
    assert abs(np.linalg.norm(force) * 0.1 - 7.25) <= 1e-12 * 7.25
    np.testing.assert_allclose(force / 72.5, [0.0, math.cos(math.radians(30)), 0.5], atol=1e-12)
    with pytest.raises(InputError):
        push_force(1.0, 0.0, 0.0, 0.0)


def test_real_time_factor_from_clock_samples():
    rtf = RealTimeFactor(window=1.0)
    for i in range(50):  # sim advances 0.5 s per wall second: a factor of 0.5 exactly
        rtf.add(0.5 * 0.05 * i, 100.0 + 0.05 * i)
    assert rtf.value() == pytest.approx(0.5, rel=1e-9)
    assert rtf.value(wall_time=200.0) == 0.0  # the clock stopped: paused


def test_controller_status_from_the_controller_keys():
    status = controller_status(
        {"mode": "torque", "safe": "true", "task_error/com": "0.01", "com": "0.1 0.2 0.5"},
        "stale inputs",
    )
    assert status.mode == "torque" and status.safe_hold and status.reason == "stale inputs"
    assert status.task_errors == {"com": 0.01}
    np.testing.assert_array_equal(status.com, [0.1, 0.2, 0.5])


def test_framing_camera_sees_the_whole_box():
    lower, upper = np.array([-0.1, -0.3, 0.0]), np.array([0.3, 0.2, 1.0])
    camera = framing_camera(
        lower, upper, azimuth=0.5, elevation=0.2, fov=math.radians(45), aspect=1.6, margin=1.1
    )
    corners = np.array(
        [
            [x, y, z]
            for x in (lower[0], upper[0])
            for y in (lower[1], upper[1])
            for z in (lower[2], upper[2])
        ]
    )
    forward = (camera.look_at - camera.position) / np.linalg.norm(camera.look_at - camera.position)
    for corner in corners:  # every corner within the vertical half field of view of the axis
        ray = (corner - camera.position) / np.linalg.norm(corner - camera.position)
        assert math.acos(np.clip(ray @ forward, -1, 1)) < math.radians(22.5)


def test_collada_up_axis_puts_icub_feet_along_the_sole(icub):
    visuals = load_visuals(icub.urdf_text, icub.urdf_path, links={"l_foot"})
    assert not visuals.problems
    q = icub.initial_configuration()
    placement = icub.frame_placement(q, "l_foot")
    sole = icub.frame_placement(q, "l_sole")
    points = visuals.visuals[0].vertices @ placement.rotation.T + placement.translation
    local = (points - sole.translation) @ sole.rotation
    # The foot is long along the sole's x (0.14 m sole, the mesh 0.155 m), narrow along y,
    # and rests on it (z from 0); without the Y_UP turn it would lie across (0.06 m along x).
    extent = local.max(axis=0) - local.min(axis=0)
    assert extent[0] > 0.12 and extent[1] < 0.08, extent
    assert abs(local[:, 2].min()) < 2e-3


def test_a_missing_mesh_is_named_and_the_rest_loads(icub):
    text = icub.urdf_text.replace("icub_head.dae", "no_such_head.dae")
    visuals = load_visuals(text, icub.urdf_path)
    assert len(visuals.problems) == 1 and "no_such_head.dae" in visuals.problems[0]
    assert "head" in visuals.problems[0]
    assert len(visuals.visuals) == len(load_visuals(icub.urdf_text, icub.urdf_path).visuals) - 1


def test_layout_uses_reads_every_panel():
    layout = json.loads(FOXGLOVE_LAYOUT.read_text())
    uses = layout_uses(layout)
    panels = {use.panel for use in uses}
    assert panels == set(layout["configById"]), (panels, set(layout["configById"]))
    plotted = {(use.topic, use.fields) for use in uses if use.panel.startswith("Plot!")}
    assert ("/ground_truth/odom", ("pose", "pose", "position", "z")) in plotted
    assert ("/apply_wrench", ("wrench", "force", "x")) in plotted


def test_layout_uses_refuses_what_it_cannot_check():
    layout = {"configById": {"Plot!x": {"paths": [{"value": "/odom.pose.covariance[0]"}]}}}
    with pytest.raises(ConfigError, match="configById.Plot!x"):
        layout_uses(layout)
    with pytest.raises(ConfigError, match="a 3D, Plot or RawMessages panel"):
        layout_uses({"configById": {"Map!m": {}}})
