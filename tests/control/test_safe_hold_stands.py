"""The controller's safe hold keeps iCub standing (in process, on our simulator, both modes).

The node holds (:meth:`WholeBodyController.hold_command`) when its inputs go stale, the robot
side goes silent or a step fails; while it holds, no step runs and the estimate is the last one.
Here: 1.2 s of normal control from the initial posture (the start-up CoM motion, over the
soles' centre in target_duration = 1 s, is over), then 1.5 s of holds, every control period the
hold command of a node whose inputs went stale (the joints of the last joint state), on the
simulator (compliant contacts, 1 ms step, 500 Hz control). One run per mode, many assertions.
Measured: before the hold carried static torques the base moved 104 mm (torque) and 112 mm (IK)
in the 1.5 s (the robot fell); with them 0.06 mm and 1.5 mm. A hold entered while the robot
moves (0.4 s into the start-up motion, the CoM at about 14 mm/s) keeps that motion: the joint
servos' stiffness (100 N m/rad at the legs) barely exceeds gravity's at the ankles, and the base
drifts 22 mm in 1.5 s; the hold is open loop (its inputs are stale), so only the servos act.

References, independent of the hold's code:
- the base's true position (ground truth) when the hold began: during the hold it must stay
  within 3 mm (a robot that carries its weight on its soles and whose servos only correct
  deviations moves by the servos' tracking error of the small residual torques, well under a
  millimetre here; with servo stiffness alone the base sags by the gravity torques over kp:
  several millimetres, measured below before the fix);
- the equations of static equilibrium: g(q) - S^T tau must be produced by the soles' wrenches
  (J_c^T f), whose vertical forces add up to the weight m g (tolerance 1e-3 N m / N: the wrench
  distribution is solved to proxsuite's default precision, about 1e-6 relative; the torque limits
  are far above iCub's standing torques, so no clipping).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from closed_loop_scenarios import make_rig

pytestmark = [pytest.mark.slow]

CONTROL = 1.2  # normal control before the hold [s] (the start-up CoM motion ends at 1 s)
HOLD = 1.5  # duration of the hold [s]
BASE_TOLERANCE = 3e-3  # [m], see the module docstring
EQUILIBRIUM_TOLERANCE = 1e-3  # [N m] and [N]


@pytest.mark.parametrize("mode", ["torque", "ik"])
def test_the_safe_hold_keeps_the_robot_standing(icub, mode):
    rig = make_rig(icub, mode, "compliant")
    rig.run(CONTROL)
    controller, sim = rig.controller, rig.sim
    assert not controller.status.safe
    start = sim.ground_truth().q.copy()
    held_q = controller.status.estimate.q.copy()  # the last estimate: what the hold holds
    worst = 0.0
    command = None
    while sim.time < CONTROL + HOLD - 1e-9:
        joints = sim.readings().joint_positions
        if command is None:
            held_joints = joints.copy()
        command = controller.hold_command("stale inputs: imu", joints)
        sim.set_command(command)
        sim.step(rig.steps_per_control)
        q = sim.ground_truth().q
        worst = max(worst, float(np.linalg.norm(q[:3] - start[:3])))
    assert controller.status.safe and controller.status.reason == "stale inputs: imu"
    # The robot stood through the hold: the base within 3 mm of where it was.
    assert worst < BASE_TOLERANCE, f"base moved {1e3 * worst:.2f} mm during the hold"
    # The hold holds the joints where they were when it began, at zero velocity...
    np.testing.assert_allclose(command.position, held_joints, atol=1e-12)
    np.testing.assert_allclose(command.velocity, 0.0)
    # ...with torques that carry the weight on the soles (static equilibrium at the held q).
    assert command.effort is not None
    q = held_q.copy()
    q[7:] = held_joints
    model, data = icub.model, icub.model.createData()
    gravity = pin.computeGeneralizedGravity(model, data, q).copy()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    jacobians = [
        pin.getFrameJacobian(model, data, icub.frame_id(f), pin.LOCAL_WORLD_ALIGNED)
        for f in ("l_sole", "r_sole")
    ]
    contact_jacobian = np.vstack(jacobians)
    rest = gravity - np.concatenate([np.zeros(6), command.effort])
    f, *_ = np.linalg.lstsq(contact_jacobian.T, rest, rcond=None)
    np.testing.assert_allclose(contact_jacobian.T @ f, rest, atol=EQUILIBRIUM_TOLERANCE)
    assert f[2] + f[8] == pytest.approx(icub.total_mass * 9.81, abs=EQUILIBRIUM_TOLERANCE)
    assert f[2] > 0 and f[8] > 0
    # Control resumes from the hold.
    rig.run(0.1)
    assert not controller.status.safe
    assert np.linalg.norm(sim.ground_truth().q[:3] - start[:3]) < BASE_TOLERANCE
