"""iCub standing still on MuJoCo: contact force, centre of pressure, F/T and IMU readings.

The robot holds its initial posture (:mod:`wbm_dynamics.mujoco.scenarios`) for 0.8 s, then the
readings are averaged over 0.2 s (200 steps). Standing still, the ground carries the weight and
the centre of pressure lies under the centre of mass (quasi-static: the offset is
-(z_com / g) * a_com,xy plus the rate of centroidal angular momentum over m g, both ~0 at rest).
MuJoCo's soft contacts and the servos leave a small oscillation (measured CoP spread ~2.4 mm
over the window, horizontal force spread ~0.9 N), which sets the tolerances below.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.support_geometry import center_of_pressure
from wbm_dynamics.mujoco import MujocoEngine
from wbm_dynamics.mujoco.scenarios import standing_command, standing_servo_gains
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

SETTLE_STEPS = 800
WINDOW_STEPS = 200


def _stand(engine, model) -> dict[str, np.ndarray]:
    """Averages over the window of what a standing robot reports."""
    sensors = FootForceSensors(model)
    engine.set_command(standing_command(model))
    engine.step(SETTLE_STEPS)
    samples: dict[str, list] = {}
    for _ in range(WINDOW_STEPS):
        engine.step(1)
        readings = engine.readings()
        truth = engine.ground_truth()
        ground = sensors.ground_reactions(truth.q, readings.wrenches)
        imu_rotation = model.frame_placement(truth.q, model.config.imu_frame).rotation
        x, y, z, w = readings.imu.orientation_xyzw
        values = {
            "ft_ground_wrench": sum(ground.values()),
            "ft_cop": center_of_pressure(ground.values()),
            "com": model.com_position(truth.q),
            "contact_force": truth.total_contact_force,
            "ft_left": readings.wrenches["left_foot"],
            "ft_right": readings.wrenches["right_foot"],
            "imu_acceleration_world": imu_rotation @ readings.imu.linear_acceleration,
            "imu_gyro": readings.imu.angular_velocity,
            "imu_orientation_error": np.array(
                [np.linalg.norm(pin.log3(pin.Quaternion(w, x, y, z).matrix().T @ imu_rotation))]
            ),
        }
        for key, value in values.items():
            samples.setdefault(key, []).append(np.asarray(value, dtype=float))
    return {key: np.mean(value, axis=0) for key, value in samples.items()}


@pytest.fixture(scope="module")
def mujoco_standing(icub):
    kp, kd = standing_servo_gains(icub)
    return _stand(MujocoEngine(icub, servo_kp=kp, servo_kd=kd), icub)


def test_mujoco_contact_force_carries_the_weight(icub, mujoco_standing):
    weight = icub.total_mass * 9.81
    force = mujoco_standing["contact_force"]
    # 0.5 N on 278 N: the window mean of m * a_com,z, with |a_com| << 0.02 m/s^2 at rest
    # (measured error 0.006 N); horizontal: the mean friction of the oscillation (measured 0.25 N).
    assert abs(force[2] - weight) < 0.5
    assert np.linalg.norm(force[:2]) < 1.4


def test_ft_readings_give_the_contact_wrench_and_the_cop_under_the_com(icub, mujoco_standing):
    """F/T sign convention and sensor placement, judged by MuJoCo's own contact forces."""
    weight = icub.total_mass * 9.81
    from_ft = mujoco_standing["ft_ground_wrench"]
    # The F/T-based estimate neglects the feet's accelerations (quasi-static): 0.5 N.
    np.testing.assert_allclose(from_ft[:3], mujoco_standing["contact_force"], atol=0.5)
    assert abs(from_ft[2] - weight) < 0.5
    # Each ankle sensor carries about half the weight above it, pushed up (sensor z points
    # down on iCub, hence the negative z force in sensor axes).
    for side in ("ft_left", "ft_right"):
        assert 0.4 * weight < -mujoco_standing[side][2] < 0.6 * weight
    # CoP under the CoM: 2 mm (measured 0.6 mm; the CoP oscillates by +-1.2 mm).
    np.testing.assert_allclose(
        mujoco_standing["ft_cop"][:2], mujoco_standing["com"][:2], atol=2e-3
    )


def test_imu_at_rest_reads_gravity_and_no_rotation(mujoco_standing):
    # Proper acceleration: +9.81 m/s^2 up in the world (0.05 m/s^2: the window mean of the
    # oscillation, measured 0.035 m/s^2 horizontally); gyro ~0 (measured 4e-3 rad/s).
    np.testing.assert_allclose(mujoco_standing["imu_acceleration_world"], [0, 0, 9.81], atol=0.05)
    assert np.linalg.norm(mujoco_standing["imu_gyro"]) < 0.01
    # Orientation = Pinocchio's IMU frame at the true configuration (same state, round-off).
    assert mujoco_standing["imu_orientation_error"][0] < 1e-9


@pytest.mark.parametrize("contact_model", ["compliant", "rigid"])
def test_mujoco_and_our_simulator_stand_alike(icub, mujoco_standing, contact_model):
    kp, kd = standing_servo_gains(icub)
    settings = SimulatorSettings(contact_model=contact_model)
    ours = _stand(Simulator(icub, settings, servo_kp=kp, servo_kd=kd), icub)
    weight = icub.total_mass * 9.81
    assert abs(ours["contact_force"][2] - weight) < 0.5
    assert abs(ours["ft_ground_wrench"][2] - mujoco_standing["ft_ground_wrench"][2]) < 0.5
    # Each engine's CoP under its own CoM (2 mm), and the CoPs within 3 mm of each other: the
    # servos sag differently on the soft (MuJoCo, compliant) and rigid contacts, which moves the
    # CoM by ~1 mm (measured CoP x: MuJoCo 35.2, compliant 36.5, rigid 34.0 mm).
    np.testing.assert_allclose(ours["ft_cop"][:2], ours["com"][:2], atol=2e-3)
    np.testing.assert_allclose(ours["ft_cop"][:2], mujoco_standing["ft_cop"][:2], atol=3e-3)
    # The split of the weight between two flat feet depends on the contact compliance (the
    # problem is statically indeterminate): per sensor 1 % of m g (measured 0.9 N); the ankle
    # torques set each foot's own CoP: 0.5 N m ~ 4 mm on 133 N (measured 0.35 N m).
    for side in ("ft_left", "ft_right"):
        np.testing.assert_allclose(ours[side][:3], mujoco_standing[side][:3], atol=0.01 * weight)
        np.testing.assert_allclose(ours[side][3:], mujoco_standing[side][3:], atol=0.5)
