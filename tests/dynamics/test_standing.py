"""iCub standing on the ground, held by its joint servos, with both contact models."""

from __future__ import annotations

import numpy as np
import pytest

from wbm_description.robot_io import JointCommand
from wbm_description.support_geometry import center_of_pressure, wrench_in_world
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

FEET = {"left_foot": "l_foot_ft_sensor", "right_foot": "r_foot_ft_sensor"}


def sensor_child_mass(sim: Simulator, name: str) -> float:
    return next(s.child_inertia.mass for s in sim.ft_sensors if s.name == name)


@pytest.mark.slow
@pytest.mark.parametrize("contact_model", ["compliant", "rigid"])
def test_icub_stands_for_5_s_and_the_sensors_carry_the_weight(icub_stiff, contact_model):
    model = icub_stiff
    sim = Simulator(model, SimulatorSettings(contact_model=contact_model))
    q0 = model.initial_configuration()
    # Servo PD on the initial posture, with the static torques of both soles as feed-forward.
    feed_forward, _ = model.static_contact_torques(q0, ["l_sole", "r_sole"])
    sim.set_command(JointCommand(position=model.joint_positions(q0), effort=feed_forward))
    weight = model.total_mass * 9.81
    for _ in range(5):
        sim.step(1000)
        truth = sim.ground_truth()
        # Still standing: the base has not dropped by more than 2 cm.
        assert truth.q[2] > q0[2] - 0.02
    # Vertical contact forces carry the weight: within 1 % (the tolerance; measured
    # 1.6e-5 compliant, 1e-7 rigid, the compliant stance still sways a little).
    np.testing.assert_allclose(truth.total_contact_force[2], weight, rtol=1e-2)

    readings = sim.readings()
    q = truth.q
    world_wrenches = []
    for name, frame in FEET.items():
        wrench_world = wrench_in_world(model.frame_placement(q, frame), readings.wrenches[name])
        world_wrenches.append(wrench_world)
        # Newton on the foot below the sensor (quasi-static): what the foot pushes up into the
        # leg is what the ground pushes on the foot minus the foot's weight. 1 %, as above.
        ground = sum(
            force[2] for point, force in truth.contact_forces.items() if point.startswith(name)
        )
        foot_weight = sensor_child_mass(sim, name) * 9.81
        np.testing.assert_allclose(wrench_world[2], ground - foot_weight, rtol=1e-2)
    # Together the ankle sensors carry everything above them (everything but the feet).
    above = weight - sum(sensor_child_mass(sim, name) for name in FEET) * 9.81
    np.testing.assert_allclose(sum(w[2] for w in world_wrenches), above, rtol=1e-2)

    # Centre of pressure from the F/T sensors (seed 004 eqs 8.5-8.8, on the ground plane)
    # lies under the centre of mass: in static balance the upper body's weight line passes
    # through it; the feet's 1.2 kg move the whole-body CoM by < 1 mm. Measured 0.13 mm
    # (compliant) and 0.36 mm (rigid); 5 mm tolerance.
    cop = center_of_pressure(world_wrenches, ground_height=0.0)
    com = model.com_position(q)
    np.testing.assert_allclose(cop[:2], com[:2], atol=5e-3)
    # The guard: with nothing loaded there is no CoP.
    assert center_of_pressure([np.zeros(6), np.zeros(6)]) is None
