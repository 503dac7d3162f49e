"""MuJoCo <-> wbm state converters: round trips, and MuJoCo's own kinematics as the referee.

The round trips show the converters are inverse to each other; the kinematic checks show they
use the right conventions: quaternion order (MuJoCo w first, wbm w last) and the free joint's
velocity frames (MuJoCo: linear velocity in world axes, angular velocity in the body frame;
wbm/Pinocchio: both in the base frame).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from wbm_dynamics.mujoco import build_mujoco_robot

ROBOTS = ["icub", "panda"]


@pytest.fixture(scope="module", params=ROBOTS)
def pair(request):
    model = request.getfixturevalue(request.param)
    return model, build_mujoco_robot(model)


def test_round_trips(pair, random_state):
    model, built = pair
    state_map = built.state_map
    for _ in range(10):
        q, v = random_state(model)
        qpos = state_map.qpos_from_q(q)
        qvel = state_map.qvel_from_v(q, v)
        np.testing.assert_allclose(state_map.q_from_qpos(qpos), q, rtol=0, atol=1e-15)
        np.testing.assert_allclose(state_map.v_from_qvel(qpos, qvel), v, rtol=0, atol=1e-12)
        # And starting from MuJoCo's side.
        np.testing.assert_allclose(
            state_map.qvel_from_v(q, state_map.v_from_qvel(qpos, qvel)), qvel, atol=1e-12
        )
        np.testing.assert_allclose(state_map.velocity_map(q) @ v, qvel, rtol=0, atol=1e-12)


def test_quaternion_order_and_joint_order_follow_mujoco_kinematics(pair, random_state):
    """MuJoCo places every body of a converted q where Pinocchio places its link."""
    model, built = pair
    data = mujoco.MjData(built.model)
    for _ in range(5):
        q, _ = random_state(model)
        data.qpos[:] = built.state_map.qpos_from_q(q)
        mujoco.mj_kinematics(built.model, data)
        for name in model.joint_names:
            child = built.model.body(built.model.joint(name).bodyid[0]).name
            placement = model.frame_placement(q, child)
            body = built.model.body(child).id
            np.testing.assert_allclose(data.xpos[body], placement.translation, atol=1e-9)
            np.testing.assert_allclose(
                data.xmat[body].reshape(3, 3), placement.rotation, atol=1e-9
            )
        if model.floating_base:
            base = built.model.body(model.config.base_link).id
            np.testing.assert_allclose(data.xquat[base], data.qpos[3:7], atol=1e-15)
            np.testing.assert_allclose(
                data.xmat[base].reshape(3, 3), model.base_rotation(q), atol=1e-12
            )


def test_velocity_frames_follow_mujoco_kinematics(pair, random_state):
    """MuJoCo's velocity of each body (world axes) equals Pinocchio's mixed frame velocity."""
    model, built = pair
    data = mujoco.MjData(built.model)
    velocity = np.empty(6)
    for _ in range(5):
        q, v = random_state(model)
        data.qpos[:] = built.state_map.qpos_from_q(q)
        data.qvel[:] = built.state_map.qvel_from_v(q, v)
        mujoco.mj_forward(built.model, data)
        names = [model.config.base_link] if model.floating_base else []
        names += [built.model.body(built.model.joint(n).bodyid[0]).name for n in model.joint_names]
        for name in names:
            body = built.model.body(name).id
            # (angular, linear) of the body frame origin (XBODY), world axes (flg_local = 0).
            mujoco.mj_objectVelocity(
                built.model, data, mujoco.mjtObj.mjOBJ_XBODY, body, velocity, 0
            )
            expected = model.frame_velocity(q, v, name, representation="mixed")
            np.testing.assert_allclose(velocity[3:], expected[:3], atol=1e-10)
            np.testing.assert_allclose(velocity[:3], expected[3:], atol=1e-10)


def test_free_joint_velocity_frames_explicitly(icub):
    """qvel[0:3] is the base origin's velocity in world axes, qvel[3:6] omega in base axes."""
    built = build_mujoco_robot(icub)
    q = icub.initial_configuration()
    q[3:7] = [0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]  # base yawed by +90 degrees
    v = np.zeros(icub.nv)
    v[0] = 1.0  # 1 m/s along the base x axis = world +y
    v[5] = 2.0  # 2 rad/s about the base z axis = world z
    qvel = built.state_map.qvel_from_v(q, v)
    np.testing.assert_allclose(qvel[0:3], [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(qvel[3:6], [0.0, 0.0, 2.0], atol=1e-15)
    qpos = built.state_map.qpos_from_q(q)
    np.testing.assert_allclose(qpos[3:7], [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])
