"""A fixed sequence of readings and calls for the controller's regression test.

The whole-body controller is driven, without a simulator, through ``STEPS`` control periods of
synthetic sensor readings of iCub crouching slowly while waving its arms (exact sensor values of
that motion, :func:`control_helpers.readings_from_state`), with every call of its public API on
the way: a CoM and a hand target (one with a duration), the right sole released, given a swing
target and held again, the right foot's F/T load dropping below the unload threshold and coming
back (the estimator's hysteresis, the IK mode's lifted soles), and a safe hold in the middle
followed by a resumed step. The commands (and a few status values) of each step are the record.

``python tests/control/controller_regression.py`` writes ``tests/data/controller_regression.npz``;
it was run once on the commit before the controller's refactor (issue 10), and
``test_controller_regression.py`` checks that the controller still gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
from control_helpers import CONTROLLER_YAML, readings_from_state

from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_description.whole_body_model import WholeBodyModel

RECORD = Path(__file__).resolve().parents[1] / "data" / "controller_regression.npz"
RATE = 500.0  # control rate [Hz] (the shipped file's)
STEPS = 100  # control steps per variant (0.2 s)
#: Controller variants: mode "torque", mode "ik", and torque with servo references.
VARIANTS = ("torque", "ik", "torque_servo")
#: What is recorded per step (NaN rows where a command array is None).
FIELDS = ("effort", "position", "velocity", "com_reference", "zmp_command", "dcm", "safe")


def make_controller(model: WholeBodyModel, variant: str) -> WholeBodyController:
    """The controller of a variant, from the shipped parameters file."""
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML).replace(control_rate=RATE)
    # The record holds proxsuite's own solutions (eps_abs 1e-7): the polished solution on its
    # active set (torque.polish, reproducible to the bit, tests/control/test_qp_polish.py) is
    # the exact optimum, which differs from proxsuite's by up to 0.25 N m along the directions
    # only the 1e-5 wrench regularization makes unique. Compared with the solver it was
    # recorded with.
    settings = settings.replace(torque=settings.torque.replace(polish=False))
    if variant == "torque":
        settings = settings.replace(mode="torque")
    elif variant == "ik":
        # The record was written with the quasi-static feed-forward and a 3 rad/s IK velocity
        # limit; the shipped file now has the motion feed-forward (issue 12, tested against the
        # equations of motion in test_motion_feedforward.py) and 6 rad/s. The recorded path is
        # compared with the settings it was recorded with.
        ik = settings.ik.replace(motion_feedforward=False, velocity_limit=3.0)
        settings = settings.replace(mode="ik", ik=ik)
    elif variant == "torque_servo":
        torque = settings.torque.replace(servo_references=True)
        settings = settings.replace(mode="torque", torque=torque)
    else:
        raise ValueError(variant)
    controller = WholeBodyController(model, settings)
    if variant == "ik":
        # The record was written with ProxQP at qpsolvers' default tolerances; issue 15 made
        # the IK's default an exact solver (quadprog, see differential_ik, tested against closed
        # forms in tests/reliability/test_model_and_ik_defaults.py). The same problem is
        # compared with the solver and tolerance it was recorded with.
        controller.mode.ik.solver = "proxqp"
        controller.mode.ik.solver_options = {}
    # The record was written with the base velocity's first-order low-pass; mode "torque" now
    # fuses the accelerometer (wbm_control.base_estimator, tested in test_base_estimator.py),
    # and readings_from_state's accelerometer reads gravity only, not the sequence's motion.
    controller.estimator.accelerometer = False
    return controller


def _joints(model: WholeBodyModel, t: float) -> np.ndarray:
    """Joint positions at t [s]: a slow crouch (soles flat and level) and waving arms, torso."""
    joints = model.initial_posture.copy()
    crouch = 0.05 * np.sin(2.0 * np.pi * 1.5 * t)  # [rad]
    for side in ("l", "r"):
        joints[model.joint_index(f"{side}_hip_pitch")] += crouch
        joints[model.joint_index(f"{side}_knee")] -= 2.0 * crouch
        joints[model.joint_index(f"{side}_ankle_pitch")] += crouch
    for i, name in enumerate(model.joint_names):
        if name.startswith(("l_shoulder", "r_shoulder", "l_elbow", "r_elbow", "torso")):
            joints[i] += 0.1 * np.sin(2.0 * np.pi * 2.0 * t + 0.3 * i)
    return joints


def _configuration(model: WholeBodyModel, t: float) -> np.ndarray:
    joints = _joints(model, t)
    base = model.base_placement_for_reference_frame(joints, "l_sole")
    return model.configuration(base, joints)


def readings_at(model: WholeBodyModel, step: int):
    """The sensor readings of step ``step`` (t = step / RATE)."""
    t = step / RATE
    h = 1e-6  # central difference of the configuration [s]
    q = _configuration(model, t)
    v = pin.difference(model.model, _configuration(model, t - h), _configuration(model, t + h))
    v /= 2.0 * h
    _, wrenches = model.static_contact_torques(q, ["l_sole", "r_sole"])
    left, right = wrenches["l_sole"].copy(), wrenches["r_sole"].copy()
    if 45 <= step < 65:  # the right foot's load drops to 5 % (below the unload threshold)
        left, right = left + 0.95 * right, 0.05 * right
    return readings_from_state(model, q, v, {"left_foot": left, "right_foot": right}, time=t)


def run_sequence(model: WholeBodyModel, variant: str) -> dict[str, np.ndarray]:
    """Drive one controller variant through the sequence; the arrays of :data:`FIELDS`."""
    controller = make_controller(model, variant)
    ndof = model.ndof
    record = {name: np.full((STEPS, ndof), np.nan) for name in FIELDS[:3]}
    record.update({name: np.full((STEPS, 3), np.nan) for name in FIELDS[3:6]})
    record["safe"] = np.zeros(STEPS)
    for step in range(STEPS):
        readings = readings_at(model, step)
        if step == 75:
            command = controller.hold_command("regression: hold", readings.joint_positions)
        else:
            command = controller.step(readings)
        for name in FIELDS[:3]:
            value = getattr(command, name)
            if value is not None:
                record[name][step] = value
        status = controller.status
        for name in FIELDS[3:6]:
            value = getattr(status, name)
            if value is not None:
                record[name][step] = value
        record["safe"][step] = float(status.safe)
        if step == 5:
            com = controller.com_reference()
            controller.set_com_target(com + np.array([0.01, -0.02, -0.01]))
            hand = controller.frame_reference("left_hand")
            goal = pin.SE3(hand.rotation, hand.translation + np.array([0.05, 0.0, 0.05]))
            controller.set_frame_target("left_hand", goal, duration=0.1)
        contact_events(controller, step)
    return record


def contact_events(controller: WholeBodyController, step: int) -> None:
    """The sequence's contact switches: the right sole released at step 25, lifted 1 cm, held
    again at step 60."""
    if step == 25:
        controller.release_contact("right_foot")
    elif step == 26:
        foot = controller.frame_reference("right_foot")
        lift = pin.SE3(foot.rotation, foot.translation + np.array([0.0, 0.0, 0.01]))
        controller.set_frame_target("right_foot", lift, duration=0.05)
    elif step == 60:
        controller.activate_contact("right_foot")


def record_all(model: WholeBodyModel) -> dict[str, np.ndarray]:
    """Every variant's arrays, keyed ``<variant>/<field>``."""
    return {
        f"{variant}/{name}": values
        for variant in VARIANTS
        for name, values in run_sequence(model, variant).items()
    }


def main() -> None:
    """Write :data:`RECORD`."""
    from wbm_description.registry import load_robot

    model = WholeBodyModel.from_config(load_robot("icub"))
    np.savez_compressed(RECORD, **record_all(model))
    print(f"wrote {RECORD} ({RECORD.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
