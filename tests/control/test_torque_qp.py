"""The torque mode's fused QP build (wbm_control.torque_qp) gives the QP of the objects' build.

The step builds its QP straight from the kinematics (:meth:`TorqueMode.build_fused`); the
build it replaced made one AccelerationTask per task (:meth:`TorqueMode.acceleration_tasks`)
and one ContactConstraint per held sole (:meth:`ContactTask.compute_constraint`) and stacked
them (:func:`build_whole_body_qp`), which stays as the reference here and as the fallback's
inputs. Every step of a sequence is compared: H, g, A, b, C, l, u, the torque matrix and
offset, the contact order, the tasks' errors, and the torques of the two QPs solved alike.

Sequences: iCub's regression sequence (tests/control/controller_regression.py: targets, the
right sole released, swung and held again, a safe hold), torque mode with and without servo
references, and a G1 sequence (the G1's shipped settings: hands moving, the right sole released
and held again).

Tolerance: 1e-9 absolute (the regression test's), on arrays of magnitude up to about 1e5
(H's products of weights 1e3-1e4 and Jacobians): the two builds feed the same kernel
(:func:`~wbm_control.jit.whole_body_qp_kernels.fill_whole_body_qp`) the same rows in the same
order, so they agree to the bit except where BLAS's product could round differently with the
arrays' memory alignment (the regression test's docstring); the test also counts the steps
whose QP is bit-identical, and all are expected to be (asserted: at least 90 %; measured all).
The torques of the two QPs are compared within the tolerance only: where the polish is not
kept (61 of the 100 regression steps) they are proxsuite's own solutions, whose last digits
depend on the heap's state (wbm_control.qp's docstring: measured on main and on this branch,
the same QP solved twice with other allocations in between differs in 17 to 33 of 100 steps,
all of them unpolished), which the other tests of a pytest worker change.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from control_helpers import REPO, readings_from_state
from controller_regression import STEPS, contact_events, make_controller, readings_at
from torque_qp_helpers import patch_fused_build

from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.qp import DenseQPSolver
from wbm_control.whole_body_qp import build_whole_body_qp, read_solution
from wbm_description import WholeBodyModel, load_robot

TOLERANCE = 1e-9  # see the module docstring
FIELDS = ("H", "g", "A", "b", "C", "l", "u")


def _close(new: np.ndarray, old: np.ndarray, what: str) -> bool:
    """Within TOLERANCE (asserted); whether bit-identical."""
    assert new.shape == old.shape, what
    np.testing.assert_allclose(new, old, rtol=0.0, atol=TOLERANCE, err_msg=what)
    return bool(np.array_equal(new, old))


def compare_with_objects_build(monkeypatch) -> dict[str, int]:
    """Compare each fused build of the torque step with the objects' build.

    Returns the counts (filled as the steps run): steps, steps of bit-identical QPs, contact
    counts.
    Each step's fused QP against :func:`build_whole_body_qp` of the step's task and contact
    objects (torque_qp_helpers.py).
    """
    counts = {"steps": 0, "identical": 0, "one sole": 0, "two soles": 0}

    def compare(qp, args, kwargs, task_errors, status):
        reference = build_whole_body_qp(*args, **kwargs)
        same = True
        for name in FIELDS:
            same &= _close(getattr(qp.problem, name), getattr(reference.problem, name), name)
        same &= _close(qp.torque_matrix, reference.torque_matrix, "torque matrix")
        same &= _close(qp.torque_offset, reference.torque_offset, "torque offset")
        assert qp.contact_names == reference.contact_names
        assert qp.nv == reference.nv
        assert task_errors == {k: status.task_errors[k] for k in task_errors}
        # The torques of the two QPs, each solved by a solver of its own as the step's.
        x_new = DenseQPSolver(name="new", polish=True).solve(qp.problem.copy())
        x_old = DenseQPSolver(name="old", polish=True).solve(reference.problem.copy())
        torques_new = read_solution(qp, x_new).torques
        _close(torques_new, read_solution(reference, x_old).torques, "torques")  # (docstring)
        counts["steps"] += 1
        counts["identical"] += same
        counts["one sole" if len(qp.contact_names) == 1 else "two soles"] += 1

    patch_fused_build(monkeypatch, compare)
    return counts


@pytest.mark.parametrize("variant", ["torque", "torque_servo"])
def test_icub_regression_sequence(icub, variant, monkeypatch):
    counts = compare_with_objects_build(monkeypatch)
    controller = make_controller(icub, variant)
    for step in range(STEPS):
        readings = readings_at(icub, step)
        if step == 75:
            controller.hold_command("regression: hold", readings.joint_positions)
        else:
            controller.step(readings)
        if step == 5:
            com = controller.com_reference()
            controller.set_com_target(com + np.array([0.01, -0.02, -0.01]))
            hand = controller.frame_reference("left_hand")
            goal = pin.SE3(hand.rotation, hand.translation + np.array([0.05, 0.0, 0.05]))
            controller.set_frame_target("left_hand", goal, duration=0.1)
        contact_events(controller, step)
    assert counts["steps"] == STEPS - 1, counts  # every step but the safe hold
    assert counts["one sole"] > 0 and counts["two soles"] > 0, counts
    assert counts["identical"] >= 0.9 * counts["steps"], counts


G1_RATE = 500.0  # [Hz]


def _g1_readings(g1: WholeBodyModel, step: int):
    """G1 standing on both soles, arms waving, the torso leaning: exact sensor readings."""
    t = step / G1_RATE

    def configuration(time: float) -> np.ndarray:
        joints = g1.initial_posture.copy()
        for i, name in enumerate(g1.joint_names):
            if name.startswith(("left_shoulder", "right_shoulder", "left_elbow", "waist")):
                joints[i] += 0.1 * np.sin(2.0 * np.pi * 2.0 * time + 0.3 * i)
        base = g1.base_placement_for_reference_frame(joints, "left_sole")
        return g1.configuration(base, joints)

    h = 1e-6
    q = configuration(t)
    v = pin.difference(g1.model, configuration(t - h), configuration(t + h)) / (2.0 * h)
    soles = [sole.frame for sole in g1.config.soles]
    tau, wrenches = g1.static_contact_torques(q, soles)
    ground = {sole.name: wrenches[sole.frame] for sole in g1.config.soles}
    readings = readings_from_state(g1, q, v, ground, time=t)
    return dataclasses.replace(readings, joint_efforts=np.asarray(tau, dtype=float))


def test_g1_sequence(monkeypatch):
    g1 = WholeBodyModel.from_config(load_robot("g1"))
    counts = compare_with_objects_build(monkeypatch)
    settings = ControllerSettings.from_yaml(REPO / "config" / "g1" / "controller.yaml")
    settings = settings.replace(mode="torque", control_rate=G1_RATE)
    controller = WholeBodyController(g1, settings)
    right = g1.config.soles[1].name
    steps = 60
    for step in range(steps):
        controller.step(_g1_readings(g1, step))
        if step == 5:
            hand = controller.frame_reference("left_hand")
            goal = pin.SE3(hand.rotation, hand.translation + np.array([0.03, 0.0, 0.03]))
            controller.set_frame_target("left_hand", goal, duration=0.05)
        elif step == 20:
            controller.release_contact(right)
        elif step == 40:
            controller.activate_contact(right)
    assert counts["steps"] == steps, counts
    assert counts["one sole"] > 0 and counts["two soles"] > 0, counts
    assert counts["identical"] >= 0.9 * counts["steps"], counts
