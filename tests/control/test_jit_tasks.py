"""The task layer's compiled kernels compute what its numpy code computed (issue 11).

The numpy formulas the kernels replaced are kept here (``*_reference``) or stay the tasks'
numpy methods (:meth:`FrameTask.compute_acceleration_task`, :meth:`BaseOrientationTask.
compute_acceleration_task`, :meth:`ComTask.balance_reference`, :meth:`ComTask.
desired_acceleration_reference`); each kernel is compared with its reference on random inputs
and on every step of the controller regression sequence (``controller_regression.py``, mode
"torque": a CoM and a hand target, the right sole released, lifted and held again).

Tolerance: 1e-12 relative (``rtol=1e-12`` with ``atol=1e-12`` for entries near 0, the values
being up to ~1e3). The kernels do the numpy code's operations in the same order, except two
sums: the 3 x 3 product R* R^T (numpy's BLAS call rounds differently from the kernel's three
products and two sums: measured 1 in 40 random products identical) and the 6 x nv product J v.
Measured differences (relative to max(1, |value|)): log3 below 2.5 rad 8e-15, the frame and
base orientation rows 3e-14, the contact rows 4e-14 (J v: 35 products, random J), the
posture, CoM rows and the balance feedback bit-identical. Near pi, log3 reads the angle from
acos((tr - 1) / 2), whose slope 1 / sin(theta) grows the product's last-bit difference: up to
5e-11 rad between pi - 1e-1 and pi - 3.5e-3 (below that Pinocchio's near-pi branch takes over:
1e-15). There it is checked to the conditioning's bound, 5e-13 / sqrt(1 + cos theta) (measured
1.3e-13 over 2e4 rotations). A task error is far from pi.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from control_helpers import CONTROLLER_YAML
from controller_regression import contact_events, make_controller, readings_at

from wbm_control.contacts import ContactSet
from wbm_control.controller_settings import ControllerSettings, FrameTaskSettings
from wbm_control.exceptions import InputError
from wbm_control.jit import task_kernels
from wbm_control.tasks import (
    BaseOrientationTask,
    ComTask,
    ContactTask,
    FrameTask,
    PostureTask,
    pose_error,
)
from wbm_description.support_geometry import convex_hull_2d

RTOL = ATOL = 1e-12  # see the module docstring
NV = 35  # iCub's velocity dimension (any works)


def _close(new, reference, what: str) -> None:
    np.testing.assert_allclose(new, reference, rtol=RTOL, atol=ATOL, err_msg=what)


# ---------------------------------------------------------------- the numpy formulas (references)


def pose_error_reference(target: pin.SE3, current: pin.SE3) -> np.ndarray:
    """pose_error as it was before its kernel."""
    error = np.empty(6)
    np.subtract(target.translation, current.translation, out=error[:3])
    error[3:] = pin.log3(target.rotation.dot(current.rotation.T))
    return error


def posture_desired_reference(task: PostureTask, kinematics) -> np.ndarray:
    s = task.settings
    return s.kp * (task.reference - kinematics.q[7:]) - s.kd * kinematics.v[6:]


def contact_desired_reference(task: ContactTask, kinematics, contact) -> np.ndarray:
    frame_id = task.sole_frame_ids[contact.sole.name]
    velocity = kinematics.jacobians[frame_id].dot(kinematics.v)
    error = pose_error_reference(contact.placement, kinematics.placements[frame_id])
    return task.settings.kp * error - task.settings.kd * velocity


def frame_task_reference(task: FrameTask, kinematics, t: float):
    """The torque mode's frame task and position error as acceleration_tasks computed them."""
    reference = task.reference(t)
    error = pose_error_reference(reference[0], kinematics.placements[task.frame_id])
    return task.compute_acceleration_task(kinematics, reference, error), np.linalg.norm(error[:3])


def base_task_reference(task: BaseOrientationTask, kinematics):
    rotation = kinematics.placements[task.frame_id].rotation
    error = pin.log3(task.rotation_reference.dot(rotation.T))
    return task.compute_acceleration_task(kinematics, error), np.linalg.norm(error)


# ---------------------------------------------------------------- random inputs


def _rotation_near(rotation: np.ndarray, angle: float, rng) -> np.ndarray:
    axis = rng.normal(size=3)
    return np.asfortranarray(pin.exp3(angle * axis / np.linalg.norm(axis)) @ rotation)


def _random_kinematics(rng, frame_ids, angle: float = 1.0):
    """A stand-in RobotKinematics: random placements, twists, Jacobians, drifts, q, v."""
    return SimpleNamespace(
        q=rng.normal(size=NV + 1),
        v=rng.normal(size=NV),
        placements={f: pin.SE3.Random() for f in frame_ids},
        velocities={f: rng.normal(size=6) for f in frame_ids},
        drifts={f: rng.normal(size=6) for f in frame_ids},
        jacobians={f: rng.normal(size=(6, NV)) for f in frame_ids},
        com=rng.normal(0.0, 0.05, 3) + [0.0, 0.0, 0.5],
        com_velocity=rng.normal(0.0, 0.1, 3),
        com_jacobian=rng.normal(size=(3, NV)),
        com_drift=rng.normal(size=3),
    )


def test_log3_kernel_is_pinocchios_log3():
    rng = np.random.default_rng(0)
    out = np.empty(3)
    bins = {"identity": 0, "taylor": 0, "nominal": 0, "near pi": 0, "singular": 0}
    for i in range(3000):
        a = pin.SE3.Random().rotation
        kind = i % 5
        if kind == 0:
            b, what = a, "identity"
        elif kind == 1:
            b, what = _rotation_near(a, 10 ** rng.uniform(-9, -5), rng), "taylor"
        elif kind == 2:
            b, what = _rotation_near(a, rng.uniform(0.0, 2.5), rng), "nominal"
        elif kind == 3:
            b, what = _rotation_near(a, np.pi - rng.uniform(1e-6, 1e-1), rng), "near pi"
        else:
            b, what = _rotation_near(a, np.pi - 10 ** rng.uniform(-9, -3), rng), "singular"
        reference = pin.log3(a.dot(b.T))
        task_kernels.log3_of_product(a, b, out)
        if what in ("near pi", "singular"):  # the conditioning near pi (module docstring)
            cosine = (np.trace(a.dot(b.T)) - 1.0) / 2.0
            bound = 5e-13 / np.sqrt(max(1.0 + cosine, 1e-30))
            np.testing.assert_allclose(out, reference, rtol=0, atol=max(bound, ATOL))
        else:
            _close(out, reference, what)
        bins[what] += 1
    assert min(bins.values()) > 0


def test_pose_error_is_the_numpy_pose_error():
    rng = np.random.default_rng(1)
    for _ in range(500):
        current = pin.SE3.Random()
        target = pin.SE3(
            _rotation_near(current.rotation, rng.uniform(0, 2.0), rng), rng.normal(size=3)
        )
        _close(pose_error(target, current), pose_error_reference(target, current), "pose error")
    same = pin.SE3.Random()
    np.testing.assert_array_equal(pose_error(same, same)[:3], np.zeros(3))


def _settings() -> ControllerSettings:
    return ControllerSettings.from_yaml(CONTROLLER_YAML)


def test_frame_and_base_tasks_are_their_numpy_tasks():
    """FrameTask.torque_task and BaseOrientationTask.torque_task (one kernel each) against
    compute_error (numpy) + compute_acceleration_task + the norm, while the reference moves
    (random targets), after it ended (read-only end samples) and tracked (walking)."""
    rng = np.random.default_rng(2)
    settings = _settings()
    frame_settings: FrameTaskSettings = settings.frame_tasks["left_hand"]
    base = BaseOrientationTask(7, settings.base_orientation, pin.SE3.Random().rotation.copy())
    for trial in range(200):
        task = FrameTask("hand", 3, frame_settings)
        kinematics = _random_kinematics(rng, (3, 7))
        placement = kinematics.placements[3]
        task.start(placement, 0.0)
        goal = pin.SE3(_rotation_near(placement.rotation, 0.5, rng), placement.translation + 0.1)
        task.set_target(goal, 0.0, 1.0)
        if trial % 3 == 2:
            task.track((goal, rng.normal(size=6), rng.normal(size=6)))
        t = [0.3, 2.0, 0.7][trial % 3]  # moving, ended (read-only sample), tracked
        new, position_error = task.torque_task(kinematics, t)
        old, old_error = frame_task_reference(task, kinematics, t)
        _close(new.desired, old.desired, "frame task desired")
        _close(position_error, old_error, "frame task error")
        assert new.name == old.name and new.jacobian is old.jacobian and new.drift is old.drift
        assert new.weight is old.weight
        rotation = _rotation_near(base.rotation_reference, rng.uniform(0.0, 1.5), rng)
        kinematics.placements[7] = pin.SE3(rotation, np.zeros(3))
        new, error = base.torque_task(kinematics)
        old, old_error = base_task_reference(base, kinematics)
        _close(new.desired, old.desired, "base orientation desired")
        _close(error, old_error, "base orientation error")
        np.testing.assert_array_equal(new.jacobian, old.jacobian)
        np.testing.assert_array_equal(new.drift, old.drift)
        assert new.weight == old.weight


def test_posture_and_contact_rows_are_their_numpy_rows(icub):
    rng = np.random.default_rng(3)
    settings = _settings()
    ndof = NV - 6
    posture = PostureTask(rng.normal(size=ndof), NV, settings.posture)
    soles = icub.config.soles
    contact_task = ContactTask(
        {sole.name: 10 + i for i, sole in enumerate(soles)},
        settings.contact,
        friction_coefficient=settings.friction_coefficient,
        cop_margin=settings.cop_margin,
    )
    for _ in range(200):
        kinematics = _random_kinematics(rng, (10, 11))
        task = posture.compute_acceleration_task(kinematics)
        _close(task.desired, posture_desired_reference(posture, kinematics), "posture")
        contacts = ContactSet(soles)
        for i, sole in enumerate(soles):
            placement = kinematics.placements[10 + i]
            anchor = pin.SE3(_rotation_near(placement.rotation, 0.1, rng), placement.translation)
            contacts.activate(sole.name, anchor)
        for contact in contacts.active():
            constraint = contact_task.compute_constraint(kinematics, contact)
            _close(
                constraint.desired,
                contact_desired_reference(contact_task, kinematics, contact),
                "contact",
            )


class _Contacts:
    """A ContactSet stand-in: a support polygon (read-only, as ContactSet's) and a height."""

    def __init__(self, polygon: np.ndarray, ground: float):
        self.polygon = polygon
        self.polygon.flags.writeable = False
        self.ground = ground

    def support_polygon(self) -> np.ndarray:
        return self.polygon

    def ground_height(self) -> float:
        return self.ground


def _same_balance(new, old) -> None:
    for name in ("acceleration_xy", "zmp", "dcm"):
        _close(getattr(new, name), getattr(old, name), name)
    if old.static_margin is None:
        assert new.static_margin is None
    else:
        _close(new.static_margin, old.static_margin, "static margin")
    for value, reference in zip(new.reference, old.reference, strict=True):
        np.testing.assert_array_equal(value, reference)
    _close(new.error, float(np.linalg.norm(old.reference[0] - old.com)), "CoM error")


def test_balance_kernel_is_the_numpy_feedback():
    """ComTask.balance (one kernel) against balance_reference (numpy and floats): ZMP inside
    and outside the polygon (projected; onto the centroid of a polygon smaller than the
    margin), CoM inside and outside it, no polygon, read-only references (an ended
    trajectory), a NaN CoM coordinate; and the CoM task's rows."""
    rng = np.random.default_rng(4)
    settings = _settings()
    com_task = ComTask(settings.com, np.array([0.0, 0.0, -9.81]))
    cases = {"projected": 0, "inside": 0, "outside": 0, "none": 0}
    for trial in range(600):
        kinematics = _random_kinematics(rng, ())
        kinematics.com[:2] = rng.normal(0.0, 0.08, 2)
        if trial % 7 == 6:
            kinematics.com[0] = np.nan
        size = 0.004 if trial % 11 == 10 else 0.1  # smaller than the ZMP margin: its centroid
        corners = rng.uniform(-size, size, (8, 2))
        polygon = convex_hull_2d(corners) if trial % 5 else np.zeros((0, 2))
        contacts = _Contacts(polygon, rng.uniform(-0.02, 0.02))
        if trial % 2:
            com_task.track(*(rng.normal(0.0, 0.05, 3) for _ in range(3)))
        else:
            com_task.start(kinematics.com + [0, 0, 0.01], kinematics.com + 0.01, 0.0, 1.0)
        t = 0.5 if trial % 4 else 2.0  # moving, ended (read-only sample)
        new = com_task.balance(kinematics, t, contacts)
        old = com_task.balance_reference(kinematics, t, contacts)
        _same_balance(new, old)
        desired = com_task.compute_acceleration_task(kinematics, new).desired
        _close(desired, com_task.desired_acceleration_reference(kinematics, old), "CoM rows")
        if len(polygon):
            inside = new.static_margin >= 0.0
            cases["inside" if inside else "outside"] += 1
            cases["projected"] += not np.allclose(
                new.zmp[:2], _unprojected_zmp(com_task, kinematics, t, contacts)
            )
        else:
            cases["none"] += 1
    assert min(cases.values()) > 0, cases


def _unprojected_zmp(com_task: ComTask, kinematics, t: float, contacts) -> np.ndarray:
    omega = np.sqrt(9.81 / max(kinematics.com[2] - contacts.ground_height(), 0.05))
    return com_task.stabilizer.com_acceleration(
        kinematics.com, kinematics.com_velocity, *com_task.reference(t), omega
    )[1]


def test_balance_without_lip_frequency_raises_as_before():
    settings = _settings()
    com_task = ComTask(settings.com, np.array([0.0, 0.0, -9.81]))
    kinematics = _random_kinematics(np.random.default_rng(5), ())
    com_task.track(np.zeros(3), np.zeros(3), np.zeros(3))
    contacts = _Contacts(np.zeros((0, 2)), 0.0)
    kinematics.com[2] = np.nan
    with pytest.raises(InputError):
        com_task.balance_reference(kinematics, 0.0, contacts)
    with pytest.raises(InputError):
        com_task.balance(kinematics, 0.0, contacts)


_NO_COMPILATION_IN_THE_LOOP = """
import sys
sys.path.insert(0, sys.argv[1])
from controller_regression import run_sequence
from wbm_control.jit import balance_kernels, task_kernels
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel

kernels = [getattr(task_kernels, name) for name in task_kernels.__dict__ if name.endswith(
    ("_task", "_acceleration", "pose_error", "log3_of_product", "_singular"))]
kernels.append(balance_kernels.balance_feedback)
task_kernels.warm_up()
balance_kernels.warm_up()
compiled = [list(kernel.signatures) for kernel in kernels]
model = WholeBodyModel.from_config(load_robot("icub"))
for variant in ("torque", "torque_servo", "ik"):
    run_sequence(model, variant)
extra = [
    (kernel.__name__, signature)
    for kernel, before in zip(kernels, compiled)
    for signature in kernel.signatures
    if signature not in before
]
assert len(kernels) == 9 and not extra, extra
"""


def test_warm_up_compiles_what_the_steps_use():
    """In a fresh process: after warm_up, the regression sequence (every variant: moving and
    ended references, the ZMP projected, held and released soles) compiles nothing more (no
    compilation in a control cycle; numba compiles read-only arrays, such as an ended
    trajectory's sample and ContactSet's polygon, apart)."""
    here = str(Path(__file__).resolve().parent)
    subprocess.run([sys.executable, "-c", _NO_COMPILATION_IN_THE_LOOP, here], check=True)


def test_the_moving_sequence_steps_are_the_numpy_steps(icub, monkeypatch):
    """Every kernel against its reference at every step of the regression sequence (mode
    "torque")."""
    controller = make_controller(icub, "torque")
    compared = {"balance": 0, "frame": 0, "base": 0, "posture": 0, "contact": 0}

    balance, balance_reference = ComTask.balance, ComTask.balance_reference

    def compared_balance(task, kinematics, t, contacts):
        new = balance(task, kinematics, t, contacts)
        _same_balance(new, balance_reference(task, kinematics, t, contacts))
        compared["balance"] += 1
        return new

    # The torque step's fused build (wbm_control.torque_qp) calls the tasks' *_rows methods,
    # which write the desired accelerations the task objects carried.
    frame_rows = FrameTask.torque_rows

    def compared_frame(task, kinematics, t, desired):
        error = frame_rows(task, kinematics, t, desired)
        old = frame_task_reference(task, kinematics, t)
        _close(desired, old[0].desired, f"{task.name} desired")
        _close(error, old[1], f"{task.name} error")
        compared["frame"] += 1
        return error

    base_rows = BaseOrientationTask.torque_rows

    def compared_base(task, kinematics, desired):
        error = base_rows(task, kinematics, desired)
        old = base_task_reference(task, kinematics)
        _close(desired, old[0].desired, "base desired")
        _close(error, old[1], "base error")
        compared["base"] += 1
        return error

    posture_rows = PostureTask.torque_rows

    def compared_posture(task, kinematics, desired):
        posture_rows(task, kinematics, desired)
        _close(desired, posture_desired_reference(task, kinematics), "posture")
        compared["posture"] += 1

    contact_rows = ContactTask.contact_rows

    def compared_contact(task, kinematics, contact, desired):
        cone = contact_rows(task, kinematics, contact, desired)
        _close(desired, contact_desired_reference(task, kinematics, contact), "contact")
        compared["contact"] += 1
        return cone

    monkeypatch.setattr(ComTask, "balance", compared_balance)
    monkeypatch.setattr(FrameTask, "torque_rows", compared_frame)
    monkeypatch.setattr(BaseOrientationTask, "torque_rows", compared_base)
    monkeypatch.setattr(PostureTask, "torque_rows", compared_posture)
    monkeypatch.setattr(ContactTask, "contact_rows", compared_contact)
    steps = 70  # release at 25, lift at 26, hold again at 60
    for step in range(steps):
        controller.step(readings_at(icub, step))
        if step == 5:
            com = controller.com_reference()
            controller.set_com_target(com + np.array([0.01, -0.02, -0.01]))
        contact_events(controller, step)
    assert compared["balance"] == compared["base"] == compared["posture"] == steps, compared
    # Two hands every step, the right foot while released (steps 26-60), both soles held
    # outside that span and one within it.
    assert compared["frame"] == 2 * steps + 35 and compared["contact"] == 2 * steps - 35
