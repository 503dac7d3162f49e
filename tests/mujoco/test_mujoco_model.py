"""The MuJoCo model is the same robot as the Pinocchio model: masses, kinematics, dynamics.

MuJoCo builds its model from the URDF with its own compiler; Pinocchio builds its own. Agreement
of the mass matrix and the bias forces at random states is the main proof that the two are the
same multibody system (same inertias, same joint axes and placements, same locked joints).
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from wbm_description.exceptions import ConfigError
from wbm_dynamics.mujoco import build_mujoco_robot
from wbm_dynamics.mujoco.model_builder import POINT_MASS_INERTIA, ft_site_name, sole_geom_name

ROBOTS = ["icub", "panda"]


@pytest.fixture(scope="module", params=ROBOTS)
def pair(request):
    model = request.getfixturevalue(request.param)
    return request.param, model, build_mujoco_robot(model)


def _forward(built, q, v):
    data = mujoco.MjData(built.model)
    data.qpos[:] = built.state_map.qpos_from_q(q)
    data.qvel[:] = built.state_map.qvel_from_v(q, v)
    mujoco.mj_forward(built.model, data)
    return data


# Mass matrix tolerance [kg, kg m, kg m^2]. iCub: MuJoCo gives the links that the URDF makes
# point masses POINT_MASS_INERTIA per axis (Pinocchio keeps 0); each entry of M sums at most a
# few tens of such bodies: 100 * 1e-9 (measured 1.4e-8; largest entry 28 kg). Panda: round-off.
MASS_MATRIX_TOLERANCE = {"icub": 100 * POINT_MASS_INERTIA, "panda": 1e-12}
# Bias forces [N, N m]: the same inertia difference times |v|^2 ~ 10 (random v ~ N(0, 1)), and
# gravity terms carry no rotational inertia: 10x the mass matrix tolerance (measured 3e-8).
BIAS_TOLERANCE = {"icub": 1000 * POINT_MASS_INERTIA, "panda": 1e-10}


def test_total_mass_is_the_same(pair):
    _, model, built = pair
    np.testing.assert_allclose(built.model.body_mass.sum(), model.total_mass, rtol=0, atol=1e-9)


def test_mass_matrix_and_bias_forces_match_pinocchio(pair, random_state):
    """M_wbm = T^T M_mj T and h_wbm = T^T (h_mj + M_mj dT/dt v), qvel = T v."""
    name, model, built = pair
    for _ in range(5):
        q, v = random_state(model)
        data = _forward(built, q, v)
        mass_mujoco = np.zeros((built.model.nv, built.model.nv))
        mujoco.mj_fullM(built.model, data, mass_mujoco)
        T = built.state_map.velocity_map(q)
        drift = built.state_map.velocity_map_rate_times_v(q, v)
        np.testing.assert_allclose(
            T.T @ mass_mujoco @ T, model.mass_matrix(q), rtol=0, atol=MASS_MATRIX_TOLERANCE[name]
        )
        np.testing.assert_allclose(
            T.T @ (data.qfrc_bias + mass_mujoco @ drift),
            model.bias_forces(q, v),
            rtol=0,
            atol=BIAS_TOLERANCE[name],
        )


def test_every_link_and_config_frame_is_placed_as_in_pinocchio(pair, random_state):
    """Bodies (URDF links) and config sites at random configurations, to 1e-9 m / rad."""
    _, model, built = pair
    m = built.model
    for _ in range(3):
        q, _ = random_state(model)
        data = _forward(built, q, np.zeros(model.nv))
        compared = 0
        for body in range(1, m.nbody):
            name = m.body(body).name
            if name.startswith("payload/") or name not in model.frame_names:
                continue
            expected = model.frame_placement(q, name)
            np.testing.assert_allclose(data.xpos[body], expected.translation, atol=1e-9)
            np.testing.assert_allclose(data.xmat[body].reshape(3, 3), expected.rotation, atol=1e-9)
            compared += 1
        assert compared >= model.ndof
        for frame, anchor in built.anchors.items():
            body = built.body_id(anchor.body)
            world_T_body = pin.SE3(data.xmat[body].reshape(3, 3).copy(), data.xpos[body].copy())
            placement = world_T_body * anchor.placement
            expected = model.frame_placement(q, frame)
            np.testing.assert_allclose(placement.translation, expected.translation, atol=1e-9)
            np.testing.assert_allclose(placement.rotation, expected.rotation, atol=1e-9)


def test_joint_limits_friction_and_torque_limits_come_from_the_config(pair):
    _, model, built = pair
    m = built.model
    joints = [m.joint(name).id for name in model.joint_names]
    lower, upper = model.joint_position_limits
    np.testing.assert_allclose(m.jnt_range[joints, 0], lower, atol=1e-12)
    np.testing.assert_allclose(m.jnt_range[joints, 1], upper, atol=1e-12)
    assert np.all(m.jnt_limited[joints])
    dofs = built.state_map.dof_index
    np.testing.assert_array_equal(m.dof_damping[dofs], model.viscous_friction)
    np.testing.assert_array_equal(m.dof_frictionloss[dofs], model.coulomb_friction)
    np.testing.assert_array_equal(m.dof_armature, np.zeros(m.nv))
    np.testing.assert_array_equal(m.actuator_forcerange[:, 1], model.torque_limits)
    np.testing.assert_array_equal(m.actuator_forcerange[:, 0], -model.torque_limits)
    # Locked joints are gone: only the config's joints (and the free joint) remain.
    assert m.njnt == model.ndof + (1 if model.floating_base else 0)
    assert m.nv == model.nv and m.nq == model.nq


def test_sole_boxes_bottom_faces_are_the_config_sole_rectangles(icub):
    built = build_mujoco_robot(icub)
    q = icub.initial_configuration()
    data = _forward(built, q, np.zeros(icub.nv))
    for sole in icub.config.soles:
        geom = built.model.geom(sole_geom_name(sole.name)).id
        half = built.model.geom_size[geom]
        rotation = data.geom_xmat[geom].reshape(3, 3)
        bottom = [
            data.geom_xpos[geom] + rotation @ np.array([sx * half[0], sy * half[1], -half[2]])
            for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))
        ]
        expected = [icub.frame_placement(q, sole.frame).act(c) for c in sole.corners()]
        np.testing.assert_allclose(np.array(bottom), np.array(expected), atol=1e-9)
        # In the initial posture both soles lie on the ground plane z = 0 (to 1e-5 m: the
        # URDF's right sole is tilted by ~2e-5 rad relative to the left one in this posture).
        np.testing.assert_allclose(np.array(bottom)[:, 2], 0.0, atol=1e-5)
    assert built.model.geom(sole_geom_name("left_foot")).id in built.sole_geoms.values()
    assert built.model.site(ft_site_name("left_foot")).id >= 0


def test_a_config_frame_missing_from_the_urdf_is_named(icub):
    config = dataclasses.replace(icub.config, imu_frame="no_such_frame")
    model = type(icub)(
        icub.model,
        floating_base=True,
        config=config,
        urdf_path=icub.urdf_path,
        urdf_text=icub.urdf_text,
        torque_limits=icub.torque_limits,
        viscous_friction=icub.viscous_friction,
        coulomb_friction=icub.coulomb_friction,
        initial_posture=icub.initial_posture,
    )
    with pytest.raises(ConfigError, match=r"imu\.frame.*no_such_frame"):
        build_mujoco_robot(model)


def test_a_model_without_config_is_refused(icub):
    bare = type(icub).from_urdf(icub.urdf_path)
    with pytest.raises(ConfigError, match="from_config"):
        build_mujoco_robot(bare)
