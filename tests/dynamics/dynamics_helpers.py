"""Helpers of the simulator tests: a free-flying cube model and its contact points.

Also a backend of a real robot that is never reached (for what the base class and the node
decide before any I/O).
"""

from __future__ import annotations

import itertools

import numpy as np
import pinocchio as pin

from wbm_description import WholeBodyModel
from wbm_dynamics.backends import RobotBackend
from wbm_dynamics.contact_points import ContactPointSpec

BOX_MASS = 10.0  # [kg]
BOX_SIZE = 0.2  # edge of the cube [m]
GRAVITY = 9.81  # [m/s^2]


def make_box_model(mass: float = BOX_MASS, size: float = BOX_SIZE) -> WholeBodyModel:
    """A free-flying cube: frame "box" at its centre, "box_bottom" at the centre of its base."""
    model = pin.Model()
    joint = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    model.appendBodyToJoint(joint, pin.Inertia.FromBox(mass, size, size, size), pin.SE3.Identity())
    body = model.addFrame(pin.Frame("box", joint, 0, pin.SE3.Identity(), pin.FrameType.BODY))
    model.addFrame(
        pin.Frame(
            "box_bottom",
            joint,
            body,
            pin.SE3(np.eye(3), np.array([0.0, 0.0, -size / 2])),
            pin.FrameType.OP_FRAME,
        )
    )
    return WholeBodyModel(model, floating_base=True)


def box_corners(size: float = BOX_SIZE) -> list[ContactPointSpec]:
    """The 8 corners of the cube as contact points (4 touch the ground when it rests)."""
    half = size / 2
    return [
        ContactPointSpec(f"corner/{k}", "box", (sx * half, sy * half, sz * half))
        for k, (sx, sy, sz) in enumerate(itertools.product((-1, 1), repeat=3))
    ]


def box_resting_configuration(height: float = BOX_SIZE / 2) -> np.ndarray:
    """The cube level with its centre at ``height`` [m]."""
    q = pin.neutral(make_box_model().model)
    q[2] = height
    return q


class UnreachedHardware(RobotBackend):
    """A real robot's backend (not steppable) that must not be called: only its defaults are."""

    description = None
    time = 0.0

    def read(self):
        raise AssertionError("read() called")

    def write(self, command):
        raise AssertionError("write() called")

    def advance(self, duration):
        raise AssertionError("advance() called")
