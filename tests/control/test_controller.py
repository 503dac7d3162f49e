"""The controller core without a simulator: targets, contacts, safe command, architecture."""

import ast
from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from control_helpers import CONTROLLER_YAML, readings_from_state

from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.exceptions import TargetRejected

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "wbm_control" / "wbm_control"


@pytest.fixture()
def standing(icub):
    q = icub.initial_configuration()
    _, wrenches = icub.static_contact_torques(q, ["l_sole", "r_sole"])
    return q, readings_from_state(
        icub,
        q,
        np.zeros(icub.nv),
        {"left_foot": wrenches["l_sole"], "right_foot": wrenches["r_sole"]},
    )


@pytest.fixture(params=["torque", "ik"])
def controller(request, icub):
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML).replace(mode=request.param)
    return WholeBodyController(icub, settings)


def test_targets_are_rejected_or_clamped(controller, standing):
    q, readings = standing
    with pytest.raises(TargetRejected, match="not started"):
        controller.set_com_target(np.zeros(3))
    controller.step(readings)
    with pytest.raises(TargetRejected, match="NaN"):
        controller.set_frame_target("left_hand", pin.SE3(np.eye(3), np.array([np.nan, 0, 0])))
    with pytest.raises(TargetRejected, match="unknown task"):
        controller.set_frame_target("third_hand", pin.SE3.Identity())
    with pytest.raises(TargetRejected, match="finite"):
        controller.set_com_target(np.array([0.0, np.inf, 0.5]))
    # Out of reach: clamped onto the max_reach sphere (0.3 m) around the initial hand position.
    # Out of reach: clamped into the max_reach ball (0.3 m) around the initial hand position
    # and the arm's reach around the shoulder: the closest such point, which a brute-force
    # search over 200000 points of the max_reach ball confirms to 2 mm (the grid's spacing).
    home = controller.frame_reference("left_hand").translation
    far = pin.SE3(np.eye(3), home + np.array([2.0, 0.0, 0.0]))
    accepted = controller.set_frame_target("left_hand", far).translation
    limit = controller.tasks.frames["left_hand"].reach_limit
    assert np.linalg.norm(accepted - home) <= 0.3 + 1e-6
    assert np.linalg.norm(accepted - limit.limb_root) <= limit.limb_reach + 1e-6
    samples = np.random.default_rng(0).uniform(-0.3, 0.3, (200000, 3)) + home
    inside = samples[
        (np.linalg.norm(samples - home, axis=1) <= 0.3)
        & (np.linalg.norm(samples - limit.limb_root, axis=1) <= limit.limb_reach)
    ]
    best = np.min(np.linalg.norm(inside - far.translation, axis=1))
    assert np.linalg.norm(accepted - far.translation) <= best + 1e-9
    assert np.linalg.norm(accepted - far.translation) >= best - 2e-3
    assert "limb's reach" in controller.target_note("left_hand")
    # A sole held in contact takes no target (it would break the contact).
    with pytest.raises(TargetRejected, match="held in contact"):
        controller.set_frame_target("left_foot", pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.1])))
    # A CoM target off the support polygon is brought back inside it (by the CoM target
    # margin of the com: section, 3 cm in the file).
    margin = controller.settings.com.target_margin
    assert margin == 0.03
    accepted = controller.set_com_target(np.array([0.5, -0.068, 0.48]))
    # Toes at x = 0.09; the right sole sits 8 um ahead of the left in the
    # config's posture, which tilts the front edge: 2e-5 m.
    assert accepted[0] == pytest.approx(0.09 - margin, abs=2e-5)
    assert "support polygon shrunk by 0.03 m" in controller.target_note("com")


def test_contacts_are_activated_and_released_through_the_api(controller, standing, icub):
    q, readings = standing
    controller.step(readings)
    assert controller.contacts.active_names() == ["left_foot", "right_foot"]
    controller.release_contact("right_foot")
    assert controller.contacts.active_names() == ["left_foot"]
    # The released sole becomes a frame task whose reference is where it is.
    np.testing.assert_allclose(
        controller.frame_reference("right_foot").homogeneous,
        icub.frame_placement(q, "r_sole").homogeneous,
        atol=1e-9,
    )
    controller.step(readings)
    assert controller.status.active_contacts == ("left_foot",)
    controller.activate_contact("right_foot")
    assert controller.contacts.active_names() == ["left_foot", "right_foot"]


@pytest.mark.parametrize("fallback", [False, True])
def test_failed_solve_gives_the_safe_hold_command_and_control_resumes(icub, standing, fallback):
    """Without the fallback chain a failed solve holds the joints; with it (the default), the
    relaxed problem (no minimum normal force, contact slack) is solved instead."""
    q, readings = standing
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML)
    settings = settings.replace(fallback=settings.fallback.replace(enabled=fallback))
    controller = WholeBodyController(icub, settings)
    assert controller.step(readings).effort is not None
    limits = icub.torque_limits.copy()
    # Make the QP infeasible: each sole must press 5 kN while the joints are limited to 0.01 N m.
    controller.model.torque_limits = np.full(icub.ndof, 0.01)  # the shared model: restored below
    controller.settings = settings.replace(torque=settings.torque.replace(min_normal_force=5000.0))
    try:
        command = controller.step(replace(readings, time=0.002))
    finally:
        controller.model.torque_limits = limits
    if fallback:
        assert not controller.status.safe and controller.status.fallback == "relaxed"
        assert "no solution" in controller.status.fallback_reason
        # The relaxed solution's torques respect the 0.01 N m limits (friction compensation
        # is added after the solve and clipped to the restored limits).
        solution = controller.mode.fallback.last_result.solution
        assert np.all(np.abs(solution.torques) <= 0.01 + 1e-6)
        return
    assert controller.status.safe and "no solution" in controller.status.reason
    np.testing.assert_allclose(command.position, q[7:], atol=1e-12)
    np.testing.assert_allclose(command.velocity, 0.0)
    # The hold carries the static torques (it used to be position-only: effort None), clipped to
    # the torque limits in force when it began (0.01 N m here): standing needs tens of N m at
    # the hips and knees, so some joints are at the limit. Static equilibrium of the hold's
    # torques is checked in test_safe_hold_stands.py.
    assert command.effort is not None
    assert np.all(np.abs(command.effort) <= 0.01 + 1e-12)
    assert np.any(np.isclose(np.abs(command.effort), 0.01, rtol=0.0, atol=1e-12))
    controller.settings = settings
    command = controller.step(replace(readings, time=0.004))
    assert not controller.status.safe
    assert command.effort is not None and command.position is None


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_cores_import_no_ros_and_nothing_imports_the_simulator():
    ros_packages = {"rclpy", "sensor_msgs", "geometry_msgs", "nav_msgs", "diagnostic_msgs"}
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 10
    for path in modules:
        imported = imported_modules(path)
        assert "wbm_dynamics" not in imported, path
        if "ros" not in path.relative_to(PACKAGE).parts:
            assert not imported & ros_packages, (path, imported & ros_packages)
