"""The swing reference's ground: where the estimate puts the stance sole (walking_behaviour).

References: a rigid motion of the base moves the sole by exactly that motion (a base raised by
dz raises the stance sole by dz, to rounding: 1e-12 m); a rolled base puts the two soles at
different heights, and the stance sole's is the one read; mode "ik" keeps the planned ground.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from wbm_control.base_estimator import BaseEstimate
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.walking_behaviour import WalkingBehaviour

YAML = Path(__file__).resolve().parents[2] / "config" / "icub" / "controller.yaml"


def _estimate(q: np.ndarray, nv: int) -> BaseEstimate:
    return BaseEstimate(q, np.zeros(nv), ("right_foot",), {}, {})


@pytest.fixture(scope="module")
def settings() -> ControllerSettings:
    return ControllerSettings.from_yaml(YAML)


def test_the_ground_is_the_stance_sole_where_the_estimate_puts_it(icub, settings):
    controller = WholeBodyController(icub, replace(settings, mode="torque"))
    behaviour = WalkingBehaviour(controller, settings.walking)
    q = icub.initial_configuration()
    dz = 0.012  # [m] an estimate risen this much above the truth
    raised = q.copy()
    raised[2] += dz
    ground = behaviour.ground_height(controller, _estimate(q, icub.nv), "left_foot")
    risen = behaviour.ground_height(controller, _estimate(raised, icub.nv), "left_foot")
    assert risen - ground == pytest.approx(dz, abs=1e-12)
    # A base rolled by 0.1 rad: the soles at different heights; the swing of the left foot
    # reads the right (stance) sole, and the other way round.
    rolled = q.copy()
    rolled[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.1, 0.0, 0.0)).coeffs()
    right = icub.frame_placement(rolled, icub.config.sole("right_foot").frame).translation[2]
    left = icub.frame_placement(rolled, icub.config.sole("left_foot").frame).translation[2]
    assert abs(left - right) > 0.01  # about 0.1 rad times the 0.14 m between the soles
    estimate = _estimate(rolled, icub.nv)
    assert behaviour.ground_height(controller, estimate, "left_foot") == pytest.approx(right)
    assert behaviour.ground_height(controller, estimate, "right_foot") == pytest.approx(left)


def test_mode_ik_keeps_the_planned_ground(icub, settings):
    controller = WholeBodyController(icub, replace(settings, mode="ik"))
    behaviour = WalkingBehaviour(controller, settings.walking)
    q = icub.initial_configuration()
    q[2] += 0.05
    assert behaviour.ground_height(controller, _estimate(q, icub.nv), "left_foot") == 0.0
