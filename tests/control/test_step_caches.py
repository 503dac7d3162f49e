"""What the faster controller step computes once is recomputed when its inputs change.

The support polygon, the held soles' wrench cones and the polygon's half-planes are kept while
the held soles do not change (issue 11); each test changes the contacts and compares with a
fresh computation (exact: the same function on the same inputs, tolerance 0). The step's
breakdown (``timings``) names its parts and they fit in the step.
"""

import numpy as np
import pinocchio as pin
import pytest
from control_helpers import CONTROLLER_YAML, readings_from_state

from wbm_control.balance import project_into_polygon, static_equilibrium_margin
from wbm_control.contact_wrench_cone import contact_wrench_cone_world
from wbm_control.contacts import ContactSet
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_description.support_geometry import convex_hull_2d, polygon_margin


def _placement(x: float, y: float, yaw: float) -> pin.SE3:
    return pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, yaw), np.array([x, y, 0.0]))


def test_polygon_and_cones_follow_the_contacts(icub):
    contacts = ContactSet(icub.config.soles)
    left, right = (sole.name for sole in icub.config.soles)
    contacts.activate(left, _placement(0.0, 0.07, 0.0))
    contacts.activate(right, _placement(0.0, -0.07, 0.0))
    first = contacts.support_polygon()
    assert contacts.support_polygon() is first and not first.flags.writeable
    contacts.release(right)
    contacts.activate(right, _placement(0.2, -0.1, 0.3))
    polygon = contacts.support_polygon()
    corners = [c for contact in contacts.active() for c in contact.corners_in_world()]
    np.testing.assert_array_equal(polygon, convex_hull_2d(corners))
    assert contacts.ground_height() == 0.0
    contacts.release(left)
    np.testing.assert_array_equal(
        contacts.support_polygon(), convex_hull_2d(contacts.active()[0].corners_in_world())
    )
    # The cone of a sole activated again is the one of its new placement, per (mu, margin).
    contact = contacts.active()[0]
    sole = contact.sole
    for mu, margin in ((0.5, 0.0), (0.5, 0.01), (0.3, 0.01)):
        expected = contact_wrench_cone_world(
            contact.placement.rotation,
            length=sole.length - 2 * margin,
            width=sole.width - 2 * margin,
            center=sole.center,
            mu=mu,
        )
        np.testing.assert_array_equal(contact.cone(mu, cop_margin=margin), expected)
        assert contact.cone(mu, cop_margin=margin) is contact.cone(mu, cop_margin=margin)


def test_polygon_functions_agree_with_the_uncached_geometry():
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    shifted = square + [2.0, 0.0]
    for hull in (square, shifted):
        hull.flags.writeable = False  # the cached path (ContactSet's polygon is read-only)
        for point in ([0.3, 0.4], [1.5, 0.5], [2.2, 0.9], [-1.0, -1.0]):
            assert static_equilibrium_margin(np.array(point), hull) == pytest.approx(
                polygon_margin(point, hull), abs=1e-15
            )
        # Projected with a 0.1 margin: inside the shrunk square, on its edge when outside.
        lower, upper = hull.min(axis=0) + 0.1, hull.max(axis=0) - 0.1
        projected = project_into_polygon(np.array([5.0, 0.5, 0.7]), hull, 0.1)
        np.testing.assert_allclose(projected, [min(5.0, upper[0]), 0.5, 0.7], atol=1e-12)
        assert np.all(projected[:2] >= lower - 1e-12)


@pytest.mark.parametrize("mode", ["torque", "ik"])
def test_step_breakdown_names_its_parts(icub, mode):
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML).replace(mode=mode)
    controller = WholeBodyController(icub, settings)
    q = icub.initial_configuration()
    _, wrenches = icub.static_contact_torques(q, ["l_sole", "r_sole"])
    readings = readings_from_state(
        icub,
        q,
        np.zeros(icub.nv),
        {"left_foot": wrenches["l_sole"], "right_foot": wrenches["r_sole"]},
    )
    controller.step(readings)
    parts = {
        "torque": [
            "estimator",
            "kinematics",
            "ZMP estimation",
            "QP build",
            "solve",
            "polish",
            "command",
        ],
        "ik": [
            "estimator",
            "kinematics",
            "ZMP estimation",
            "targets",
            "IK (build + solve)",
            "feed-forward",
            "command",
        ],
    }[mode]
    assert list(controller.timings) == parts
    assert all(value >= 0.0 for value in controller.timings.values())
    # The parts are disjoint intervals of the step.
    assert sum(controller.timings.values()) <= controller.status.step_time


def test_references_after_the_trajectory_ends_are_its_samples(icub):
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML)
    controller = WholeBodyController(icub, settings)
    task, com = controller.tasks.frames["left_hand"], controller.tasks.com
    start = pin.SE3(np.eye(3), np.array([0.1, 0.2, 0.5]))
    task.start(start, 0.0)
    com.start(np.array([0.0, 0.0, 0.5]), np.array([0.01, 0.0, 0.5]), 0.0, 1.0)
    for t in (0.5, 1.0, 2.0, 3.0):  # during the motion, at its end, after it (cached)
        pose, velocity, acceleration = task.reference(t)
        expected = task._trajectory.sample(t)
        np.testing.assert_array_equal(pose.homogeneous, expected[0].homogeneous)
        np.testing.assert_array_equal(velocity, expected[1])
        np.testing.assert_array_equal(acceleration, expected[2])
        for value, reference in zip(com.reference(t), com._trajectory.sample(t), strict=True):
            np.testing.assert_array_equal(value, reference)
    # A new target starts a new trajectory: its end sample replaces the cached one.
    goal = pin.SE3(np.eye(3), np.array([0.15, 0.2, 0.5]))
    task.set_target(goal, 3.0, 0.5)
    np.testing.assert_allclose(task.reference(4.0)[0].translation, goal.translation, atol=1e-15)
    com.set_target(np.array([0.0, 0.01, 0.5]), 3.0, 0.5, np.zeros((0, 2)))
    np.testing.assert_allclose(com.reference(4.0)[0], [0.0, 0.01, 0.5], atol=1e-15)
