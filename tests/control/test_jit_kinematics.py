"""The step's frame kinematics kernel against Pinocchio's getters and the code it replaced.

:class:`~wbm_control.robot_kinematics.RobotKinematics` (mode torque) computes the frames'
Jacobians, twists and drifts (LOCAL_WORLD_ALIGNED) and the mirrored mass matrix in one kernel
(:mod:`wbm_control.jit.kinematics_kernels`) over Pinocchio's arrays read in place
(:mod:`wbm_control.pinocchio_views`), or copied where the layout does not allow it.

- Against Pinocchio's own ``getFrameJacobian`` / ``getFrameVelocity`` /
  ``getFrameClassicalAcceleration`` (the code replaced, kept here as :func:`reference`) at
  random states of iCub and the G1, every frame of the models, both the in-place and the
  copying paths: the same formulas, evaluated by Eigen possibly in another order (and with
  FMA), so equal to rounding: 1e-12 relative to the largest entry of the quantity (about
  1e4 times double precision: the sums have 3 terms, values of order 1-10).
- The mass matrix and every other attribute: bit-identical to the old code.
- A Jacobian against central finite differences of the frame's placement (translation, and
  rotation through log3) along each velocity direction: an independent check of the frame
  convention; step 1e-6, truncation error O(h^2 |d^3 x|) ~1e-10 plus rounding ~1e-10: 1e-6.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_control.pinocchio_views import EIGEN_ARRAYS, DataViews, motions_view, placements_view
from wbm_control.robot_kinematics import RobotKinematics
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@pytest.fixture(scope="module")
def g1() -> WholeBodyModel:
    return WholeBodyModel.from_config(load_robot("g1"))


def reference(model: pin.Model, data: pin.Data, q, v, frame_ids):
    """The replaced code (RobotKinematics before the kernel, dynamics on)."""
    pin.computeAllTerms(model, data, q, v)
    pin.centerOfMass(model, data, pin.KinematicLevel.ACCELERATION, False)
    pin.updateFramePlacements(model, data)
    drifts, velocities, jacobians = {}, {}, {}
    for fid in frame_ids:
        drifts[fid] = pin.getFrameClassicalAcceleration(model, data, fid, LWA).vector.copy()
        velocities[fid] = pin.getFrameVelocity(model, data, fid, LWA).vector.copy()
        jacobians[fid] = pin.getFrameJacobian(model, data, fid, LWA)
    M = data.M.copy()
    np.copyto(M, M.T, where=np.tri(model.nv, k=-1, dtype=bool))
    return {
        "drifts": drifts,
        "velocities": velocities,
        "jacobians": jacobians,
        "mass_matrix": M,
        "bias_forces": data.nle.copy(),
        "com_jacobian": data.Jcom.copy(),
        "com": data.com[0].copy(),
        "com_velocity": data.vcom[0].copy(),
        "com_drift": data.acom[0].copy(),
        "centroidal_momentum": data.hg.vector.copy(),
        "base_rotation": data.oMi[1].rotation.copy(),
        "placements": {fid: data.oMf[fid].copy() for fid in frame_ids},
    }


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    scale = max(1.0, float(np.max(np.abs(expected))))
    assert actual.shape == expected.shape
    assert np.max(np.abs(actual - expected)) <= 1e-12 * scale


@pytest.mark.parametrize("robot", ["icub", "g1"])
@pytest.mark.parametrize("in_place", [True, False])
def test_kernel_matches_pinocchio(robot, in_place, request, random_state):
    wbm = request.getfixturevalue(robot)
    model = wbm.model
    data, reference_data = model.createData(), model.createData()
    frame_ids = list(range(model.nframes))
    for _ in range(4):
        q, v = random_state(wbm)
        kinematics = RobotKinematics(model, data, q, v, frame_ids, in_place=in_place)
        expected = reference(model, reference_data, q, v, frame_ids)
        for fid in frame_ids:
            _close(kinematics.jacobians[fid], expected["jacobians"][fid])
            _close(kinematics.velocities[fid], expected["velocities"][fid])
            _close(kinematics.drifts[fid], expected["drifts"][fid])
            assert kinematics.placements[fid] == expected["placements"][fid]
        for name in (
            "mass_matrix",
            "bias_forces",
            "com_jacobian",
            "com",
            "com_velocity",
            "com_drift",
            "centroidal_momentum",
            "base_rotation",
        ):
            assert np.array_equal(getattr(kinematics, name), expected[name]), name


def test_arrays_are_the_kinematics_own(icub, random_state):
    """A later pass on the same data changes none of an earlier kinematics' arrays."""
    model, data = icub.model, icub.model.createData()
    frame_ids = [icub.frame_id(sole.frame) for sole in icub.config.soles]
    kinematics = RobotKinematics(model, data, *random_state(icub), frame_ids)
    names = ("mass_matrix", "bias_forces", "com_jacobian", "com", "com_velocity", "com_drift")
    names += ("centroidal_momentum", "base_rotation")
    kept = {name: getattr(kinematics, name).copy() for name in names}
    kept_frames = {
        (attribute, fid): getattr(kinematics, attribute)[fid].copy()
        for attribute in ("jacobians", "velocities", "drifts")
        for fid in frame_ids
    }
    RobotKinematics(model, data, *random_state(icub), frame_ids)
    for name in names:
        assert np.array_equal(getattr(kinematics, name), kept[name]), name
        assert getattr(kinematics, name).flags.c_contiguous, name
    for (attribute, fid), value in kept_frames.items():
        assert np.array_equal(getattr(kinematics, attribute)[fid], value)
        assert getattr(kinematics, attribute)[fid].flags.c_contiguous


def test_views_are_pinocchio_memory(icub, random_state):
    """In place on this build (the layout check passes), and each pass shows in the views."""
    model, data = icub.model, icub.model.createData()
    views = DataViews(model, data)
    assert views.copied == ()
    copied = DataViews(model, data, in_place=False)
    assert set(copied.copied) == {
        "joint_placements",
        "frame_placements",
        "joint_velocities",
        "joint_accelerations",
        "momentum",
        *(name for name, *_ in EIGEN_ARRAYS),
    }
    for _ in range(2):
        q, v = random_state(icub)
        pin.computeAllTerms(model, data, q, v)
        pin.centerOfMass(model, data, pin.KinematicLevel.ACCELERATION, False)
        pin.updateFramePlacements(model, data)
        copied.refresh()
        assert np.array_equal(views.joint_jacobians, data.J)
        assert np.array_equal(views.mass_upper, data.M)
        assert np.array_equal(views.com_jacobian, data.Jcom)
        assert np.array_equal(views.bias_forces, data.nle)
        assert np.array_equal(views.com, data.com[0])
        assert np.array_equal(views.com_velocity, data.vcom[0])
        assert np.array_equal(views.com_acceleration, data.acom[0])
        assert np.array_equal(views.momentum, data.hg.vector)
        for j in range(model.njoints):
            expected = data.oMi[j]
            assert np.array_equal(views.joint_placements[j, :9], expected.rotation.ravel("F"))
            assert np.array_equal(views.joint_placements[j, 9:], expected.translation)
            assert np.array_equal(views.joint_velocities[j], data.v[j].vector)
            assert np.array_equal(views.joint_accelerations[j], data.a[j].vector)
        for f in range(model.nframes):
            assert np.array_equal(views.frame_placements[f, 9:], data.oMf[f].translation)
        for name in copied.copied:
            assert np.array_equal(getattr(copied, name), getattr(views, name)), name
            assert (
                getattr(copied, name).flags.f_contiguous == getattr(views, name).flags.f_contiguous
            )


def test_views_refuse_another_layout(icub):
    """Elements that are not one contiguous vector: no view (the caller copies)."""
    placements = [pin.SE3.Random() for _ in range(3)]  # separate objects
    motions = [pin.Motion.Random() for _ in range(3)]
    assert placements_view(placements, 3) is None
    assert motions_view(motions, 3) is None


def test_jacobian_against_finite_differences(icub, random_state):
    model, data = icub.model, icub.model.createData()
    fd_data = model.createData()
    frame_ids = [icub.frame_id(sole.frame) for sole in icub.config.soles]
    q, v = random_state(icub)
    kinematics = RobotKinematics(model, data, q, v, frame_ids)
    h = 1e-6
    for fid in frame_ids:
        numeric = np.empty((6, model.nv))
        for k in range(model.nv):
            step = np.zeros(model.nv)
            step[k] = h
            plus = pin.integrate(model, q, step)
            minus = pin.integrate(model, q, -step)
            pin.framesForwardKinematics(model, fd_data, plus)
            placement_plus = fd_data.oMf[fid].copy()
            pin.framesForwardKinematics(model, fd_data, minus)
            placement_minus = fd_data.oMf[fid].copy()
            numeric[:3, k] = (placement_plus.translation - placement_minus.translation) / (2 * h)
            # World-axes angular velocity: log3(R+ R-^T) / 2h.
            rotation = placement_plus.rotation @ placement_minus.rotation.T
            numeric[3:, k] = pin.log3(rotation) / (2 * h)
        assert np.max(np.abs(kinematics.jacobians[fid] - numeric)) < 1e-6
