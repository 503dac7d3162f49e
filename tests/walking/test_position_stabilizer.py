"""The ZMP-CoM controller of position-controlled walking against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wbm_control.walking.position_stabilizer import ZmpComController
from wbm_description.exceptions import InputError

DT = 0.002  # [s]


def test_perfect_tracking_integrates_the_planned_velocity():
    """c = c_ref and z = z_d: the command is the plan, exactly (to rounding, 1e-12 m)."""
    controller = ZmpComController(zmp_gain=1.0, com_gain=3.0, max_offset=0.05)
    start, velocity = np.array([0.1, -0.05]), np.array([0.2, 0.03])
    command = None
    for k in range(500):
        c_ref = start + velocity * k * DT
        command = controller.update(
            com_ref=c_ref,
            com_velocity_ref=velocity,
            com=c_ref,
            zmp_desired=np.array([0.3, 0.0, 0.0]),
            zmp_measured=np.array([0.3, 0.0, 0.0]),
            dt=DT,
        )
    np.testing.assert_allclose(command.position, start + velocity * 500 * DT, atol=1e-12)
    np.testing.assert_allclose(command.velocity, velocity, atol=1e-12)
    assert not command.saturated


def test_a_compliance_offset_is_removed_at_the_com_gain_rate():
    """A plant whose CoM stays d behind the command: e_k = (1 - k_com dt)^k e_0 exactly.

    The command then sits d ahead of the plan and the measured CoM on the plan; the discrete
    decay agrees with exp(-k_com t) to first order in dt: relative difference about
    n (k_com dt)^2 / 2 = 1.8 % after n = 1000 steps of k_com dt = 0.006 (tolerance 2.5 %).
    """
    k_com = 3.0
    controller = ZmpComController(zmp_gain=1.0, com_gain=k_com, max_offset=0.05)
    c_ref, d = np.array([0.02, 0.01]), np.array([0.01, -0.004])
    controller.reset(c_ref)
    steps = 1000
    for _ in range(steps):
        command = controller.update(
            com_ref=c_ref,
            com_velocity_ref=np.zeros(2),
            com=controller.position - d,
            zmp_desired=np.zeros(2),
            zmp_measured=None,
            dt=DT,
        )
    error = command.position - (c_ref + d)
    np.testing.assert_allclose(error, -d * (1.0 - k_com * DT) ** steps, atol=1e-15)
    np.testing.assert_allclose(error, -d * math.exp(-k_com * steps * DT), rtol=2.5e-2)


def test_the_zmp_error_moves_the_command_against_it_until_the_offset_limit():
    """cd_cmd = -k_zmp (z_d - z): a ZMP behind its desired place slows the CoM command."""
    controller = ZmpComController(zmp_gain=2.0, com_gain=0.0, max_offset=0.01)
    c_ref = np.array([0.0, 0.0])
    controller.reset(c_ref)
    args = dict(com_ref=c_ref, com_velocity_ref=np.zeros(2), com=c_ref, dt=DT)
    command = controller.update(
        **args, zmp_desired=np.array([0.05, 0.0]), zmp_measured=np.array([0.04, 0.0])
    )
    np.testing.assert_allclose(command.velocity, [-0.02, 0.0], atol=1e-15)
    np.testing.assert_allclose(command.position, [-0.02 * DT, 0.0], atol=1e-15)
    np.testing.assert_allclose(command.zmp_error, [0.01, 0.0], atol=1e-15)
    for _ in range(400):  # 0.02 m/s for 0.8 s would be 16 mm: held at 10 mm
        command = controller.update(
            **args, zmp_desired=np.array([0.05, 0.0]), zmp_measured=np.array([0.04, 0.0])
        )
    assert command.saturated
    np.testing.assert_allclose(command.position, [-0.01, 0.0], atol=1e-15)
    # No loaded foot: no ZMP term (the command stays where it is).
    command = controller.update(**args, zmp_desired=np.array([0.05, 0.0]), zmp_measured=None)
    np.testing.assert_allclose(command.velocity, [0.0, 0.0], atol=1e-15)


def test_bad_gains_and_inputs_are_refused_with_their_name():
    with pytest.raises(InputError, match="zmp_gain"):
        ZmpComController(zmp_gain=-1.0, com_gain=1.0, max_offset=0.05)
    with pytest.raises(InputError, match="max_offset"):
        ZmpComController(zmp_gain=1.0, com_gain=1.0, max_offset=0.0)
    controller = ZmpComController(zmp_gain=1.0, com_gain=1.0, max_offset=0.05)
    good = dict(
        com_ref=np.zeros(2),
        com_velocity_ref=np.zeros(2),
        com=np.zeros(2),
        zmp_desired=np.zeros(2),
        zmp_measured=np.zeros(2),
    )
    with pytest.raises(InputError, match="finite"):
        controller.update(**{**good, "com": np.array([math.nan, 0.0])}, dt=DT)
    with pytest.raises(InputError, match="dt"):
        controller.update(**good, dt=0.0)
    assert controller.position is None  # a refused update changes nothing
