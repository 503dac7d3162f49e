"""The simulator's public contract: reset, commands, pushes, outputs, divergence, bad input."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from dynamics_helpers import BOX_MASS, box_corners

from wbm_description.exceptions import InputError, NameNotFound
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_dynamics.exceptions import SimulationDiverged
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import GroundTruth, Simulator


def test_reset_defaults_to_the_initial_configuration_on_the_ground(icub):
    sim = Simulator(icub)
    assert sim.time == 0.0
    np.testing.assert_allclose(sim.q, icub.initial_configuration(), atol=1e-15)  # renormalized
    np.testing.assert_array_equal(sim.v, np.zeros(icub.nv))
    for sole in ("l_sole", "r_sole"):
        # Both soles on z = 0 (the URDF puts the right one 1.4 um lower than the left).
        np.testing.assert_allclose(
            icub.frame_placement(sim.q, sole).translation[2], 0.0, atol=1e-5
        )
    sim.step(10)
    np.testing.assert_allclose(sim.time, 0.01, rtol=0, atol=1e-15)
    sim.reset()
    assert sim.time == 0.0 and sim.steps == 0


def test_outputs_have_the_robot_contract_shapes(icub):
    sim = Simulator(icub)
    sim.step(5)
    readings = sim.readings()
    assert isinstance(readings, RobotReadings)
    assert readings.joint_positions.shape == (icub.ndof,)
    assert readings.joint_velocities.shape == (icub.ndof,)
    assert readings.joint_efforts.shape == (icub.ndof,)
    assert set(readings.wrenches) == {"left_foot", "right_foot"}
    np.testing.assert_allclose(np.linalg.norm(readings.imu.orientation_xyzw), 1.0)
    truth = sim.ground_truth()
    assert isinstance(truth, GroundTruth)
    assert truth.q.shape == (icub.nq,) and truth.v.shape == (icub.nv,)
    # Contact points: 4 corners per sole plus the config's hands.
    assert len(truth.contact_forces) == 10
    assert {"left_foot/0", "right_foot/3", "left_hand", "right_hand"} <= set(truth.contact_forces)


def test_uncommanded_joints_get_no_servo_torque(icub):
    sim = Simulator(icub)
    command = np.full(icub.ndof, np.nan)
    command[0] = 1.5
    sim.set_command(JointCommand(effort=command))
    sim.step(3)
    efforts = sim.readings().joint_efforts
    assert efforts[0] == 1.5
    np.testing.assert_array_equal(efforts[1:], 0.0)
    sim.set_command(JointCommand())  # None everywhere: nothing commanded
    sim.step(1)
    np.testing.assert_array_equal(sim.readings().joint_efforts, 0.0)


def test_push_acts_for_its_duration_rounded_up_to_whole_steps(box_model):
    sim = Simulator(box_model, SimulatorSettings(), contact_points=box_corners())
    q = pin.neutral(box_model.model)
    q[2] = 5.0  # in the air
    sim.reset(q)
    force = 20.0
    sim.apply_wrench("box", [force, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0105)  # 10.5 steps -> 11
    sim.step(30)
    # Momentum theorem along x: m dv = F * 11 dt (round-off only).
    np.testing.assert_allclose(sim.v[0], force * 0.011 / BOX_MASS, rtol=1e-12)


def test_push_with_a_torque_spins_the_box(box_model):
    sim = Simulator(box_model, SimulatorSettings(), contact_points=box_corners())
    q = pin.neutral(box_model.model)
    q[2] = 5.0
    sim.reset(q)
    sim.apply_wrench("box", [0.0, 0.0, 0.0, 0.0, 0.0, 1.0], 0.01)
    sim.step(10)
    inertia = BOX_MASS * 0.2**2 / 6.0  # cube about a face axis [kg m^2]
    np.testing.assert_allclose(sim.v[5], 0.01 / inertia, rtol=1e-9)
    np.testing.assert_allclose(sim.v[[0, 1, 3, 4]], 0.0, atol=1e-12)
    np.testing.assert_allclose(sim.v[2], -9.81 * 0.01, rtol=1e-12)  # falling meanwhile


def test_bad_inputs_name_what_is_wrong(icub):
    sim = Simulator(icub)
    with pytest.raises(InputError, match="command.effort"):
        sim.set_command(JointCommand(effort=np.zeros(3)))
    with pytest.raises(NameNotFound, match="no_such_link"):
        sim.apply_wrench("no_such_link", np.zeros(6), 0.1)
    with pytest.raises(InputError, match="wrench"):
        sim.apply_wrench("root_link", [np.nan, 0, 0, 0, 0, 0], 0.1)
    with pytest.raises(InputError, match="duration"):
        sim.apply_wrench("root_link", np.zeros(6), 0.0)
    with pytest.raises(InputError, match="q"):
        sim.reset(np.zeros(3))
    with pytest.raises(InputError, match="quaternion"):
        q = icub.initial_configuration()
        q[3:7] = [0.0, 0.0, 0.0, 2.0]
        sim.reset(q)
    with pytest.raises(InputError, match="steps"):
        sim.step(-1)


@pytest.mark.parametrize("contact_model", ["compliant", "rigid"])
def test_divergence_stops_the_simulation_and_says_why(box_model, contact_model):
    settings = SimulatorSettings(contact_model=contact_model, max_speed=100.0)
    sim = Simulator(box_model, settings, contact_points=box_corners())
    q = pin.neutral(box_model.model)
    q[2] = 5.0
    sim.reset(q)
    sim.apply_wrench("box", [1e6, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)  # 1e5 m/s^2
    with pytest.raises(SimulationDiverged, match="max_speed") as error:
        sim.step(100)
    stopped_at = sim.time
    assert error.value.time == stopped_at
    assert "max_speed" in sim.diverged
    last = sim.q
    assert np.all(np.isfinite(last)) and np.abs(sim.v).max() <= 100.0
    with pytest.raises(SimulationDiverged):  # stays stopped
        sim.step(1)
    np.testing.assert_array_equal(sim.q, last)
    sim.reset(q)  # reset clears it
    assert sim.diverged is None
    sim.step(1)


def test_nan_state_is_caught(box_model):
    sim = Simulator(box_model, SimulatorSettings(), contact_points=box_corners())
    q = pin.neutral(box_model.model)
    q[2] = 5.0
    sim.reset(q)
    sim.model.gravity.linear = np.array([0.0, 0.0, np.nan])  # poison the dynamics
    with pytest.raises(SimulationDiverged, match="non-finite"):
        sim.step(1)
    assert np.all(np.isfinite(sim.q))
