"""Mode "ik"'s compiled kernels compute what the numpy and Pinocchio code before them computed.

- ``ik_kernels``' ``log6`` and ``Jlog6`` against Pinocchio's on random placements, near the
  identity (the Taylor branches within eps^(1/4) and eps^(1/3)) and near a half turn (log3's
  singular branch): 1e-12 absolute on entries of order 1-10 (the same formulas, Eigen's
  products written as loops: rounding only; measured ~1e-15).
- :func:`~wbm_control.jit.ik_kernels.build_ik_qp` (the IK's QP) against the numpy build before
  it (``ik_reference.build_arrays_before``: pink's formulas through Pinocchio's log6, Jlog6 and
  getFrameJacobian) and the motion feed-forward's kernels (planned acceleration, net wrench,
  sole torques) against the formulas before them (``test_ik_step_speedups``), on every step of
  mode ik as shipped (motion feed-forward) on iCub and on the G1: standing, the right sole
  released, lifted along a moving target and held again, the joints following the commands.
  Tolerances: the QP's H, c and h to 1e-12 relative to their largest entry (H's diagonal is
  ~3e4 on iCub, contact weights 1000^2: the kernel's summation order moves its last bits;
  measured on H: 1.1e-14 relative on iCub, 2.2e-16 on the G1); the planned acceleration, the net
  wrench and the torques to 1e-9 (rad/s^2, N, N m; the issue's rule; measured 0.0, 0.0 and
  6e-14: the normal equations' H is numpy's syrk product in both, the same LAPACK solve; their
  condition number, ~3e10, would turn a reordered H's last bits into 1e-7 differences).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from ik_reference import build_arrays_before
from test_ik_step_speedups import net_wrench_before, planned_acceleration_before

from wbm_control import ik_mode, motion_feedforward
from wbm_control.benchmark import standing_readings
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.jit import feedforward_kernels, ik_kernels
from wbm_control.planned_acceleration import AccelerationTarget
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel

CONFIG = Path(__file__).resolve().parents[2] / "config"
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
STEPS = 60  # release at 15, lift target at 16, held again at 45


def _placements(rng: np.random.Generator) -> list[pin.SE3]:
    """Random placements, near the identity and near half turns (every log3 branch)."""
    eps = np.finfo(float).eps
    placements = [pin.SE3.Random() for _ in range(200)]
    for scale in (0.0, 1e-9, eps ** (1 / 4) / 2, eps ** (1 / 3) / 2, 1e-3):
        for _ in range(20):
            axis = rng.normal(size=3)
            rotation = pin.exp3(scale * axis / np.linalg.norm(axis))
            placements.append(pin.SE3(rotation, rng.normal(size=3)))
    for offset in (0.0, 1e-9, 1e-6, 1e-3):
        for _ in range(20):
            axis = rng.normal(size=3)
            rotation = pin.exp3((np.pi - offset) * axis / np.linalg.norm(axis))
            placements.append(pin.SE3(rotation, rng.normal(size=3)))
    return placements


def test_log6_and_jlog6_are_pinocchios(rng):
    scratch = np.empty((3, 4))
    log, jlog = np.empty(6), np.empty((6, 6))
    for placement in _placements(rng):
        rotation, translation = placement.rotation.copy(), placement.translation.copy()
        ik_kernels._log6(rotation, translation, log, scratch)
        np.testing.assert_allclose(log, pin.log6(placement).vector, rtol=0.0, atol=1e-12)
        ik_kernels._jlog6(rotation, translation, jlog, scratch)
        np.testing.assert_allclose(jlog, pin.Jlog6(placement), rtol=0.0, atol=1e-12)


def _ik_controller(model: WholeBodyModel, config: Path) -> WholeBodyController:
    settings = ControllerSettings.from_yaml(config).replace(mode="ik")
    return WholeBodyController(model, settings)


def _run(controller: WholeBodyController, model: WholeBodyModel) -> None:
    """The sequence (module docstring), the joints following the commands."""
    period = controller.settings.control_period
    sample = standing_readings(model)
    for step in range(STEPS):
        sample = replace(sample, time=(step + 1) * period)
        command = controller.step(sample)
        sample = replace(
            sample,
            joint_positions=np.array(command.position, dtype=float),
            joint_velocities=np.array(command.velocity, dtype=float),
        )
        if step == 15:
            controller.release_contact("right_foot")
        elif step == 16:
            foot = controller.frame_reference("right_foot")
            lift = pin.SE3(foot.rotation, foot.translation + np.array([0.0, 0.0, 0.02]))
            controller.set_frame_target("right_foot", lift, duration=0.05)
        elif step == 45:
            controller.activate_contact("right_foot")


@pytest.fixture(scope="module", params=["icub", "g1"])
def robot(request) -> tuple[WholeBodyModel, Path]:
    return WholeBodyModel.from_config(load_robot(request.param)), CONFIG / request.param


def test_the_kernels_compute_what_the_numpy_code_before_computed(robot, monkeypatch):
    model, config = robot
    controller = _ik_controller(model, config / "controller.yaml")
    ik = controller.mode.ik
    compared = {"qp": 0, "moving": 0, "acceleration": 0, "wrench": 0, "torques": 0}
    largest = dict.fromkeys(("H/scale", "acceleration", "wrench", "torques"), 0.0)

    def record(what, new, old, scale=1.0):
        largest[what] = max(largest[what], float(np.max(np.abs(new - old))) / scale)

    build = type(ik)._build_arrays

    def compared_build(self, q, dt):
        new = [array.copy() for array in build(self, q, dt)]
        for name, array, old in zip("Hch", new, build_arrays_before(self, q, dt), strict=True):
            scale = 1.0 + float(np.max(np.abs(old)))
            np.testing.assert_allclose(array, old, rtol=0.0, atol=1e-12 * scale, err_msg=name)
            if name == "H":
                record("H/scale", array, old, scale)
        compared["qp"] += 1
        compared["moving"] += bool(self._target_velocities.any())
        return build(self, q, dt)

    planned = ik_mode.solve_planned_acceleration

    def compared_planned(pin_model, data, q, v, frame_ids, workspace, **kwargs):
        frames = [
            AccelerationTarget(frame, workspace.frame_targets[k].copy(), workspace.frame_costs[k])
            for k, frame in enumerate(frame_ids)
        ]
        com_cost = workspace.costs[:3].copy()
        new = planned(pin_model, data, q, v, frame_ids, workspace, **kwargs).copy()
        kwargs.pop("jacobians"), kwargs.pop("com_jacobian")
        old = planned_acceleration_before(
            pin_model, pin_model.createData(), q, v, frames, com_cost=com_cost, **kwargs
        )
        np.testing.assert_allclose(new, old, rtol=0.0, atol=1e-9, err_msg="acceleration")
        record("acceleration", new, old)
        compared["acceleration"] += 1
        return new

    motion = motion_feedforward.motion_torques
    distribute = motion_feedforward.distribute_net_wrench
    state = {}

    def compared_motion(whole_body, data, q, v, a, contacts, **kwargs):
        state["qva"] = (q, v, a)
        joints, wrenches = motion(whole_body, data, q, v, a, contacts, **kwargs)
        own = whole_body.model.createData()
        expected = pin.rnea(whole_body.model, own, q, v, a)[6:].copy()
        pin.computeJointJacobians(whole_body.model, own, q)
        pin.updateFramePlacements(whole_body.model, own)
        for contact in contacts:
            if contact.sole.name not in kwargs.get("lifted", ()):
                frame = whole_body.frame_id(contact.sole.frame)
                jacobian = pin.getFrameJacobian(whole_body.model, own, frame, LWA)
                expected -= jacobian[:, 6:].T @ wrenches[contact.sole.name]
        np.testing.assert_allclose(joints, expected, rtol=0.0, atol=1e-9, err_msg="torques")
        record("torques", joints, expected)
        compared["torques"] += 1
        return joints, wrenches

    def compared_distribution(contacts, com, wrench, **kwargs):
        old_wrench, old_com = net_wrench_before(model.model, *state["qva"])
        np.testing.assert_allclose(wrench, old_wrench, rtol=0.0, atol=1e-9, err_msg="wrench")
        record("wrench", wrench, old_wrench)
        np.testing.assert_allclose(com, old_com, rtol=0.0, atol=1e-9, err_msg="CoM")
        compared["wrench"] += 1
        return distribute(contacts, com, wrench, **kwargs)

    monkeypatch.setattr(type(ik), "_build_arrays", compared_build)
    monkeypatch.setattr(ik_mode, "solve_planned_acceleration", compared_planned)
    monkeypatch.setattr(ik_mode, "motion_torques", compared_motion)
    monkeypatch.setattr(motion_feedforward, "distribute_net_wrench", compared_distribution)
    _run(controller, model)
    print(config.name, compared, largest)  # pytest -s: the measured differences
    assert all(compared[name] == STEPS for name in ("qp", "acceleration", "torques")), compared
    assert compared["wrench"] == STEPS, compared
    assert 0 < compared["moving"] < STEPS, compared  # the lifted foot's moving target


def test_base_wrench_and_sole_torques_are_the_numpy_formulas(icub, rng):
    """On random states, unnormalized quaternions included (XYZQUATToSE3 takes them as given);
    1e-9 N, N m (measured ~1e-13 on forces of ~1e3)."""
    model, data = icub.model, icub.model.createData()
    wrench = np.empty(6)
    for k in range(50):
        q = pin.randomConfiguration(model)
        q[:3] = rng.normal(size=3)
        q[3:7] = rng.normal(size=4) * (1.0 if k % 2 else 1.0 / np.linalg.norm(q[3:7]))
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        tau = pin.rnea(model, data, q, v, a).copy()
        com = pin.centerOfMass(model, data, pin.KinematicLevel.POSITION, False).copy()
        assert feedforward_kernels.base_wrench(tau, q, np.eye(4), com, wrench)
        base = model.jointPlacements[1] * pin.XYZQUATToSE3(q[:7])
        force = base.rotation @ tau[:3]
        moment = base.rotation @ tau[3:6] + np.cross(base.translation - com, force)
        np.testing.assert_allclose(wrench, np.concatenate([force, moment]), rtol=0, atol=1e-9)
        jacobian, sole = rng.normal(size=(6, model.nv)), rng.normal(size=6)
        joints = tau[6:].copy()
        feedforward_kernels.subtract_contact_torques(joints, jacobian, sole)
        np.testing.assert_allclose(joints, tau[6:] - jacobian[:, 6:].T @ sole, rtol=0, atol=1e-9)
        tau[3] = np.nan
        assert not feedforward_kernels.base_wrench(tau, q, np.eye(4), com, wrench)
