import numpy as np
import pinocchio as pin
import pytest

from wbm_control.balance import (
    DcmStabilizer,
    divergent_component_of_motion,
    ft_wrenches_in_world,
    is_statically_stable,
    lip_natural_frequency,
    project_into_polygon,
    zmp_from_ft,
)

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


def test_zmp_from_two_ft_sensors_matches_the_force_weighted_cops():
    """Seed 004 eqs 8.5-8.8 against a closed form: two feet with known CoPs and loads."""
    # Sensors 1.43 cm below a sole, z down (like iCub's), at two places, one yawed.
    flip = pin.rpy.rpyToMatrix(np.pi, 0.0, 0.0)
    sensors = {
        "left": pin.SE3(flip, np.array([0.03, 0.0, -0.0143])),
        "right": pin.SE3(pin.rpy.rpyToMatrix(0, 0, 0.3) @ flip, np.array([0.03, -0.14, -0.0143])),
    }
    cops = {"left": np.array([0.05, 0.01, 0.0]), "right": np.array([0.0, -0.15, 0.0])}
    loads = {"left": 100.0, "right": 180.0}
    readings = {}
    for name, placement in sensors.items():
        force_world = np.array([0.0, 0.0, loads[name]])
        at_origin = np.concatenate([force_world, np.cross(cops[name], force_world)])
        readings[name] = placement.actInv(pin.Force(at_origin)).vector  # in sensor frame
    wrenches = ft_wrenches_in_world(sensors, readings)
    zmp = zmp_from_ft(wrenches)
    expected = (loads["left"] * cops["left"] + loads["right"] * cops["right"]) / 280.0
    np.testing.assert_allclose(zmp, expected, atol=1e-12)  # exact algebra: rounding only


def test_zmp_is_guarded_when_no_foot_is_loaded():
    sensors = {"left": pin.SE3.Identity()}
    assert (
        zmp_from_ft(ft_wrenches_in_world(sensors, {"left": np.array([0, 0, 1.0, 0.1, 0, 0])}))
        is None
    )


def test_dcm_feedback_converges_at_the_gain_rate_on_the_lip():
    """LIP cdd = omega^2 (c - z) with z from the DCM feedback: xi error decays as exp(-k t)."""
    h, k = 0.48, 3.0
    omega = lip_natural_frequency(h)
    stabilizer = DcmStabilizer(gain=k, zmp_margin=0.0)
    c, cd = np.array([0.02, -0.01, h]), np.array([0.1, 0.05, 0.0])
    ref = np.array([0.0, 0.0, h])
    xi0 = divergent_component_of_motion(c, cd, omega)[:2] - ref[:2]
    dt = 1e-4
    for _ in range(10000):  # 1 s, semi-implicit Euler at 0.1 ms
        acc, _ = stabilizer.com_acceleration(c, cd, ref, np.zeros(3), np.zeros(3), omega)
        cd = cd + dt * np.append(acc, 0.0)
        c = c + dt * cd
    xi = divergent_component_of_motion(c, cd, omega)[:2] - ref[:2]
    # Closed form xi(1) = xi0 exp(-k) (5 % of xi0 left). Semi-implicit Euler at 0.1 ms has a
    # global error ~ (k + omega) dt |xi0| ~ 1e-3 |xi0|: tolerance 1e-3 |xi0|.
    np.testing.assert_allclose(xi, xi0 * np.exp(-k), rtol=0, atol=1e-3 * np.linalg.norm(xi0))
    assert np.linalg.norm(xi) < 0.06 * np.linalg.norm(xi0)


def test_project_into_polygon_closed_forms():
    np.testing.assert_allclose(project_into_polygon([0.5, 0.5], SQUARE), [0.5, 0.5])
    np.testing.assert_allclose(project_into_polygon([1.5, 0.5], SQUARE), [1.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(project_into_polygon([1.5, 2.0], SQUARE), [1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(
        project_into_polygon([1.5, 0.5], SQUARE, 0.1), [0.9, 0.5], atol=1e-12
    )
    np.testing.assert_allclose(
        project_into_polygon([-1.0, -3.0, 7.0], SQUARE, 0.1), [0.1, 0.1, 7.0], atol=1e-12
    )


@pytest.mark.parametrize("point, expected", [((0.5, 0.5), True), ((1.01, 0.5), False)])
def test_static_equilibrium(point, expected):
    assert is_statically_stable(np.array([*point, 0.5]), SQUARE) is expected
