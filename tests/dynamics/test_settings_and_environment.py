"""Settings validation, the environment's geometry, and contact with an environment box."""

from __future__ import annotations

import numpy as np
import pytest
from dynamics_helpers import BOX_MASS, BOX_SIZE, GRAVITY, box_corners, box_resting_configuration

from wbm_description.exceptions import ConfigError
from wbm_dynamics.environment import Environment
from wbm_dynamics.settings import Box, SimulatorSettings
from wbm_dynamics.simulator import Simulator


def test_defaults_are_the_documented_ones():
    settings = SimulatorSettings()
    assert settings.dt == 1e-3
    assert settings.integrator == "semi_implicit_euler"
    assert settings.contact_model == "compliant"
    assert settings.boxes == {}


def test_from_mapping_reads_nested_sections_and_boxes():
    settings = SimulatorSettings.from_mapping(
        {
            "dt": 0.0005,
            "integrator": "rk4",
            "contact_model": "rigid",
            "compliant": {"stiffness": 2e6, "tangential_damping": 100.0},
            "rigid": {"solver": "pgs", "max_iterations": 50},
            "boxes": {"step": {"center": [0.5, 0, 0.05], "size": [0.4, 1, 0.1]}},
        },
        source="sim.yaml",
    )
    assert settings.dt == 0.0005 and settings.integrator == "rk4"
    assert settings.compliant.stiffness == 2e6
    assert settings.compliant.tangential_damping_value == 100.0
    assert settings.compliant.tangential_stiffness_value == 2e6  # defaults to the normal one
    assert settings.rigid.solver == "pgs" and settings.rigid.max_iterations == 50
    assert settings.boxes == {"step": Box("step", (0.5, 0.0, 0.05), (0.4, 1.0, 0.1))}
    # The ROS form of the named sections (parameters cannot hold a list of mappings), and the
    # ROS encoding of an unset tangential constant (0: the same as the normal one).
    ros = SimulatorSettings.from_mapping(
        {
            "boxes": {
                "names": ["step"],
                "step": {"center": [0.5, 0, 0.05], "size": [0.4, 1, 0.1]},
            },
            "compliant": {"tangential_stiffness": 0.0},
        }
    )
    assert ros.boxes == settings.boxes
    assert ros.compliant.tangential_stiffness is None
    assert ros.compliant.tangential_stiffness_value == ros.compliant.stiffness


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"dt": -1.0}, "dt"),
        ({"dt": "fast"}, "dt"),
        ({"integrator": "euler"}, "integrator"),
        ({"contact_model": "soft"}, "contact_model"),
        ({"compliant": {"stiffness": 0.0}}, "compliant.stiffness"),
        ({"compliant": {"stifness": 1e6}}, "compliant.stifness"),
        ({"rigid": {"solver": "lemke"}}, "rigid.solver"),
        ({"rigid": {"max_iterations": 2.5}}, "rigid.max_iterations"),
        ({"rigid": {"penetration_correction": 1.5}}, "rigid.penetration_correction"),
        ({"compliant": {"tangential_stiffness": -1.0}}, "compliant.tangential_stiffness"),
        ({"boxes": {"a": {"center": [0, 0], "size": [1, 1, 1]}}}, "boxes.a.center"),
        ({"boxes": {"a": {"center": [0, 0, 0], "size": [1, 0, 1]}}}, "boxes.a.size"),
        ({"boxes": {"a": {"size": [1, 1, 1]}}}, "boxes.a.center"),
        ({"boxes": {"a": {"center": [0, 0, 0]}}}, "boxes.a.size"),
        (
            {"boxes": {"a": {"center": [0, 0, 0], "size": [1, 1, 1], "friction": -1}}},
            "boxes.a.friction",
        ),
        ({"boxes": [{"name": "a", "center": [0, 0, 0], "size": [1, 1, 1]}]}, "boxes"),
        ({"boxes": {"names": ["a"]}}, "boxes.a"),
        ({"max_speed": 0.0}, "max_speed"),
        ({"gravity": [0, 0, -9.81]}, "gravity"),
    ],
)
def test_from_mapping_rejects_bad_values_naming_the_key(values, key):
    with pytest.raises(ConfigError) as error:
        SimulatorSettings.from_mapping(values, source="sim.yaml")
    assert error.value.key == key
    assert "sim.yaml" in str(error.value)


def test_boxes_built_in_code_are_checked_too():
    box = Box("step", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    assert SimulatorSettings(boxes={"step": box}).boxes["step"] is box
    with pytest.raises(ConfigError) as error:
        SimulatorSettings(boxes={"other": box})  # a box is named by its section
    assert error.value.key == "boxes.other.name"
    with pytest.raises(ConfigError) as error:
        SimulatorSettings(boxes=(box,))  # named sections, not a list
    assert error.value.key == "boxes"
    with pytest.raises(ConfigError) as error:
        Box("step", (0.0, 0.0, 0.0), (1.0, -1.0, 1.0))
    assert error.value.key == "size"


def test_signed_distance_and_normals_of_the_ground_and_a_box():
    box = Box("block", center=(1.0, 0.0, 0.5), size=(1.0, 1.0, 1.0), friction=0.3)
    environment = Environment(0.8, [box])
    points = np.array(
        [
            [-2.0, 0.0, 0.3],  # above the ground, far from the box
            [-2.0, 0.0, -0.1],  # 10 cm into the ground
            [1.0, 0.0, 1.2],  # 20 cm above the box top
            [1.0, 0.0, 0.95],  # 5 cm into the box top
            [1.45, 0.0, 0.5],  # 5 cm inside the +x face
            [1.7, 0.0, 1.4],  # off the top edge: nearest point (1.5, 0, 1)
        ]
    )
    query = environment.query(points)
    np.testing.assert_allclose(query.distance, [0.3, -0.1, 0.2, -0.05, -0.05, 0.2 * np.sqrt(5)])
    np.testing.assert_allclose(
        query.normal,
        [
            [0, 0, 1],
            [0, 0, 1],
            [0, 0, 1],
            [0, 0, 1],
            [1, 0, 0],
            [1 / np.sqrt(5), 0, 2 / np.sqrt(5)],
        ],
        atol=1e-12,
    )
    np.testing.assert_array_equal(query.surface, [0, 0, 1, 1, 1, 1])
    np.testing.assert_allclose(query.friction, [0.8, 0.8, 0.3, 0.3, 0.3, 0.3])


def test_rotated_box_normals_follow_its_orientation():
    box = Box("ramp", center=(0.0, 0.0, 0.0), size=(2.0, 2.0, 0.2), rpy=(0.0, 0.0, np.pi / 4))
    environment = Environment(0.8, [box])
    # A point just inside the +x face of the box (rotated 45 deg about z).
    direction = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0])
    query = environment.query((0.99 * direction)[np.newaxis, :] + [0.0, 0.0, 0.0])
    np.testing.assert_allclose(query.normal[0], direction, atol=1e-12)
    np.testing.assert_allclose(query.distance[0], -0.01, atol=1e-12)


@pytest.mark.parametrize("contact_model", ["compliant", "rigid"])
def test_cube_rests_on_an_environment_box(box_model, contact_model):
    platform = Box("platform", center=(0.0, 0.0, 0.15), size=(1.0, 1.0, 0.3), friction=0.5)
    settings = SimulatorSettings(contact_model=contact_model, boxes={"platform": platform})
    sim = Simulator(box_model, settings, contact_points=box_corners())
    sim.reset(box_resting_configuration(0.3 + BOX_SIZE / 2 + 0.02))  # 2 cm above the platform
    sim.step(1500)
    truth = sim.ground_truth()
    weight = BOX_MASS * GRAVITY
    np.testing.assert_allclose(truth.total_contact_force, [0, 0, weight], atol=1e-3 * weight)
    if contact_model == "compliant":
        depth = (weight / (4 * settings.compliant.stiffness)) ** (2.0 / 3.0)
    else:
        depth = 0.0  # rigid: resting on the surface (within the Baumgarte correction)
    np.testing.assert_allclose(truth.q[2], 0.3 + BOX_SIZE / 2 - depth, atol=2e-5)
