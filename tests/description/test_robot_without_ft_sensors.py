"""A robot config without force/torque sensors (G1): the description side works without them.

The F/T-based parts (ground reactions below each sensor, the measured CoP, the support polygon
of the loaded feet, the contact force arrows) have nothing to measure; the rest of the markers
(CoM and its ground projection) come from the model alone. References: the model's CoM
(Pinocchio) and the empty set of sensors.
"""

from __future__ import annotations

import numpy as np

from wbm_description import WholeBodyModel
from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.markers import MarkerOptions, marker_scene


def test_config_declares_no_sensors_and_the_model_has_no_sensor_frames(g1: WholeBodyModel):
    assert g1.config.ft_sensors == ()
    sensors = FootForceSensors(g1)
    assert sensors.sensors == ()
    q = g1.initial_configuration()
    assert sensors.ground_reactions(q, {}) == {}


def test_markers_show_the_com_and_nothing_measured(g1: WholeBodyModel, random_state):
    sensors = FootForceSensors(g1)
    options = MarkerOptions(ground_height=0.0)
    for q in (g1.initial_configuration(), random_state(g1)[0]):
        scene = marker_scene(sensors, q, {}, options)
        com = g1.com_position(q)
        np.testing.assert_allclose(scene.com, com, atol=1e-15)
        shapes = {(m.namespace, m.marker_id): m for m in scene.markers}
        np.testing.assert_allclose(shapes[("com", 0)].points[0], com, atol=1e-15)
        np.testing.assert_allclose(
            shapes[("com_ground", 0)].points[0], [com[0], com[1], 0.0], atol=1e-15
        )
        assert shapes[("com", 0)].visible and shapes[("com_ground", 0)].visible
        # Nothing measured: the CoP is the quasi-static estimate, the CoM's ground projection
        # (1e-15: the same numbers), under its own namespace; no measured CoP, no force arrows.
        assert scene.cop_estimated and ("cop", 0) not in shapes
        np.testing.assert_allclose(scene.cop, [com[0], com[1], 0.0], atol=1e-15)
        assert shapes[("cop_estimated", 0)].visible
        assert scene.ground_reactions == {}
        assert not any(m.namespace == "contact_force" for m in scene.markers)
