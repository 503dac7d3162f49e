"""The ZMP estimate's kernels compute what its Python float code computed (issue 11).

The estimator before its kernels (wbm_control.zmp_estimation at commit 14540ec: the momentum,
its filtered rate, the wrench and the ZMP on Python floats) is kept below as
``ReferenceZmpEstimator`` (its code as it was, docstrings dropped). Compared, update by update,
to the bit (the same operations in the same order): the ZMP (or None), the contact wrench, the
CoM, the momentum and the filtered rate,

- on random states through the three paths (the step's kinematics with the base estimator's
  still base velocity: :func:`~wbm_control.jit.zmp_kernels.zmp_with_base_velocity`; the
  kinematics without it, and the estimator's own pass:
  :func:`~wbm_control.jit.zmp_kernels.zmp_from_momentum`), with and without the rate's filter,
  time steps of 0, negative and positive sizes, total normal forces below the threshold
  (no ZMP), resets;
- on the controller regression sequence (modes "torque" and "ik"), fed the controller's
  estimates and kinematics.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from controller_regression import contact_events, make_controller, readings_at

from wbm_control.exceptions import InputError
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.small_linalg import cross3, solve_3x3
from wbm_control.zmp_estimation import ZmpEstimate, ZmpEstimator
from wbm_description.whole_body_model import WholeBodyModel

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


# ---------------------------------------------------------------- the Python code (14540ec)


class ReferenceZmpEstimator:
    def __init__(
        self, model: WholeBodyModel, *, cutoff: float | None = 10.0, min_normal_force: float = 5.0
    ):
        if cutoff is not None and (not cutoff > 0.0):
            raise InputError("cutoff", "a positive frequency [Hz] or None", cutoff)
        self.model = model
        self.pin_model = model.model
        self.data = model.model.createData()
        self.cutoff = cutoff
        self.min_normal_force = float(min_normal_force)
        self.mass = float(model.total_mass)
        self.gravity = np.asarray(model.model.gravity.linear, dtype=float).copy()
        self.reset()

    def reset(self) -> None:
        self._momentum: np.ndarray | None = None
        self._time: float | None = None
        self._rate = np.zeros(6)

    def momentum_about_origin(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hg = pin.computeCentroidalMomentum(self.pin_model, self.data, q, v)
        com = self.data.com[0].copy()
        p = np.array(hg.linear)
        angular = np.array(hg.angular) + np.cross(com, p)
        return (np.concatenate([p, angular]), com)

    def contact_wrench(self, com: np.ndarray, momentum_rate: np.ndarray) -> np.ndarray:
        weight = self.mass * self.gravity
        wrench = np.empty(6)
        np.subtract(momentum_rate[:3], weight, out=wrench[:3])
        np.subtract(momentum_rate[3:], cross3(com, weight), out=wrench[3:])
        return wrench

    def base_velocity_holding(
        self, q: np.ndarray, v: np.ndarray, frames: Sequence[str]
    ) -> np.ndarray:
        v = np.array(v, dtype=float)
        pin.computeJointJacobians(self.pin_model, self.data, q)
        pin.updateFramePlacements(self.pin_model, self.data)
        rows, rhs = ([], [])
        for frame in frames:
            jacobian = pin.getFrameJacobian(
                self.pin_model, self.data, self.model.frame_id(frame), _LWA
            )[:3]
            rows.append(jacobian[:, :3])
            rhs.append(-(jacobian[:, 3:] @ v[3:]))
        v[:3] = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]
        return v

    def shared_momentum(
        self, kinematics: RobotKinematics, v: np.ndarray, still_frames: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        v = np.asarray(v, dtype=float)
        hg = kinematics.centroidal_momentum.copy()
        if still_frames:
            rows = np.concatenate(
                [kinematics.jacobians[self.model.frame_id(frame)][:3] for frame in still_frames]
            )
            base = rows[:, :3]
            normal_rhs = base.T @ (rows[:, 3:] @ v[3:])
            change = solve_3x3(base.T @ base, -normal_rhs) - v[:3]
            hg[:3] += self.mass * (kinematics.base_rotation @ change)
        com = kinematics.com
        hg[3:] += cross3(com, hg[:3])
        return (hg, com)

    def momentum_with_base_velocity(
        self, kinematics: RobotKinematics, v: np.ndarray, still_base_velocity: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        h0, h1, h2, k0, k1, k2 = kinematics.centroidal_momentum.tolist()
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = kinematics.base_rotation.tolist()
        s0, s1, s2 = still_base_velocity.tolist()
        v0, v1, v2 = v[:3].tolist()
        d0, d1, d2 = (s0 - v0, s1 - v1, s2 - v2)
        m = self.mass
        p0 = h0 + m * (r00 * d0 + r01 * d1 + r02 * d2)
        p1 = h1 + m * (r10 * d0 + r11 * d1 + r12 * d2)
        p2 = h2 + m * (r20 * d0 + r21 * d1 + r22 * d2)
        com = kinematics.com
        c0, c1, c2 = com.tolist()
        momentum = [p0, p1, p2, k0 + (c1 * p2 - c2 * p1), k1 + (c2 * p0 - c0 * p2)]
        momentum.append(k2 + (c0 * p1 - c1 * p0))
        return (np.array(momentum), com)

    def update(
        self,
        q: np.ndarray,
        v: np.ndarray,
        time: float,
        *,
        ground_height: float = 0.0,
        still_frames: Sequence[str] = (),
        kinematics: RobotKinematics | None = None,
        still_base_velocity: np.ndarray | None = None,
    ) -> ZmpEstimate:
        if kinematics is not None and still_frames and (still_base_velocity is not None):
            momentum, com = self.momentum_with_base_velocity(
                kinematics, np.asarray(v, dtype=float), still_base_velocity
            )
        elif kinematics is not None:
            momentum, com = self.shared_momentum(kinematics, v, still_frames)
        else:
            q = np.asarray(q, dtype=float)
            v = np.asarray(v, dtype=float)
            if still_frames:
                v = self.base_velocity_holding(q, v, still_frames)
            momentum, com = self.momentum_about_origin(q, v)
        if self._momentum is not None and self._time is not None and (time > self._time):
            self._rate = self._filtered_rate(momentum, time - self._time)
        self._momentum, self._time = (momentum, float(time))
        wrench = self._contact_wrench_floats(com, self._rate)
        return ZmpEstimate(self._center_of_pressure(wrench, ground_height), np.array(wrench), com)

    def _filtered_rate(self, momentum: np.ndarray, dt: float) -> np.ndarray:
        pairs = zip(momentum.tolist(), self._momentum.tolist(), strict=True)
        rate = [(a - b) / dt for a, b in pairs]
        if self.cutoff is None:
            return np.array(rate)
        alpha = dt / (dt + 1.0 / (2.0 * np.pi * self.cutoff))
        pairs = zip(self._rate.tolist(), rate, strict=True)
        return np.array([r + alpha * (x - r) for r, x in pairs])

    def _contact_wrench_floats(self, com: np.ndarray, momentum_rate: np.ndarray) -> list[float]:
        w0, w1, w2 = (self.mass * self.gravity).tolist()
        c0, c1, c2 = com.tolist()
        r0, r1, r2, r3, r4, r5 = momentum_rate.tolist()
        return [
            r0 - w0,
            r1 - w1,
            r2 - w2,
            r3 - (c1 * w2 - c2 * w1),
            r4 - (c2 * w0 - c0 * w2),
            r5 - (c0 * w1 - c1 * w0),
        ]

    def _center_of_pressure(self, wrench: list[float], ground_height: float) -> np.ndarray | None:
        f0, f1, f2, t0, t1, _ = wrench
        if f2 < self.min_normal_force:
            return None
        h = ground_height
        return np.array([(-t1 + h * f0) / f2, (t0 + h * f1) / f2, h])


# ---------------------------------------------------------------- comparisons


def _same(new: ZmpEstimate, old: ZmpEstimate, estimator, reference) -> None:
    assert (new.zmp is None) == (old.zmp is None)
    if old.zmp is not None:
        assert np.array_equal(new.zmp, old.zmp)
    assert np.array_equal(new.contact_wrench, old.contact_wrench)
    assert np.array_equal(new.com, old.com)
    assert np.array_equal(estimator._momentum, reference._momentum)
    assert np.array_equal(estimator._rate, reference._rate)


def _random_kinematics(rng: np.random.Generator) -> SimpleNamespace:
    rotation = pin.exp3(rng.normal(0.0, 0.5, 3))
    return SimpleNamespace(
        centroidal_momentum=rng.normal(0.0, 5.0, 6),
        base_rotation=np.ascontiguousarray(rotation),
        com=rng.normal(0.0, 0.3, 3) + np.array([0.0, 0.0, 0.5]),
    )


@pytest.mark.parametrize("cutoff", [10.0, None])
def test_random_states(icub, cutoff):
    rng = np.random.default_rng(7)
    estimator = ZmpEstimator(icub, cutoff=cutoff)
    reference = ReferenceZmpEstimator(icub, cutoff=cutoff)
    frames = ["l_sole", "r_sole"]
    undefined = defined = 0
    time = 0.0
    for sample in range(400):
        path = sample % 3
        v = rng.normal(0.0, 0.3, icub.nv)
        q = icub.initial_configuration()
        q[7:] += rng.normal(0.0, 0.1, icub.ndof)
        ground = float(rng.uniform(-0.1, 0.1))
        if path == 0:  # the controller's: kinematics and the still base velocity
            kinematics = _random_kinematics(rng)
            still = rng.normal(0.0, 0.3, 3)
            if rng.random() < 0.2:  # falling: the contacts pull
                kinematics.centroidal_momentum[2] += 200.0 * (rng.random() + 0.1)
            new = estimator.update(
                q, v, time, ground_height=ground, still_frames=frames,
                kinematics=kinematics, still_base_velocity=still,
            )  # fmt: skip
            old = reference.update(
                q, v, time, ground_height=ground, still_frames=frames,
                kinematics=kinematics, still_base_velocity=still,
            )  # fmt: skip
        elif path == 1:  # the step's kinematics, the base velocity solved here
            kinematics = RobotKinematics(
                icub.model, icub.model.createData(), q, v, [icub.frame_id(f) for f in frames]
            )
            new = estimator.update(
                q, v, time, ground_height=ground, still_frames=frames[: sample % 2 + 1],
                kinematics=kinematics,
            )  # fmt: skip
            old = reference.update(
                q, v, time, ground_height=ground, still_frames=frames[: sample % 2 + 1],
                kinematics=kinematics,
            )  # fmt: skip
        else:  # the estimator's own pass
            still_frames = frames[: sample % 3]
            new = estimator.update(q, v, time, ground_height=ground, still_frames=still_frames)
            old = reference.update(q, v, time, ground_height=ground, still_frames=still_frames)
        _same(new, old, estimator, reference)
        undefined += new.zmp is None
        defined += new.zmp is not None
        time += float(rng.choice([0.0, 0.002, -0.001, 0.004]))
        if sample % 97 == 96:
            estimator.reset()
            reference.reset()
    assert undefined > 10 and defined > 100, (undefined, defined)


@pytest.mark.parametrize("mode", ["torque", "ik"])
def test_controller_sequence(icub, mode):
    """The controller's ZMP estimate against the reference fed the same estimates."""
    controller = make_controller(icub, mode)
    reference = ReferenceZmpEstimator(icub)
    for step in range(70):
        controller.step(readings_at(icub, step))
        status = controller.status
        estimate = status.estimate
        kinematics = controller.mode.kinematics(estimate, controller.tasks)
        old = reference.update(
            estimate.q,
            estimate.v,
            status.time,
            ground_height=controller.contacts.ground_height(),
            still_frames=[controller.contacts.sole(s).frame for s in estimate.loaded_soles],
            kinematics=kinematics,
            still_base_velocity=estimate.still_base_velocity,
        )
        assert old.zmp is not None and np.array_equal(status.zmp_estimated, old.zmp), step
        assert np.array_equal(controller.zmp_estimator._rate, reference._rate)
        contact_events(controller, step)


def test_bad_cutoff_is_still_named(icub):
    with pytest.raises(InputError, match="cutoff"):
        ZmpEstimator(icub, cutoff=0.0)
