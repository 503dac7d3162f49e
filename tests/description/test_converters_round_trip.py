"""Every converter between conventions, tested by a round trip (and against a known value)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_description import InputError, WbmState, WholeBodyModel
from wbm_description.conventions import (
    base_velocity_body_to_mixed,
    base_velocity_mixed_to_body,
    mixed_to_body_velocity_matrix,
    quaternion_wxyz_to_xyzw,
    quaternion_xyzw_from_rotation,
    quaternion_xyzw_to_wxyz,
    rotation_from_quaternion_xyzw,
    spatial_angular_first_to_linear_first,
    spatial_linear_first_to_angular_first,
)
from wbm_description.ros import messages


def random_quaternion_xyzw(rng) -> np.ndarray:
    quaternion = rng.normal(size=4)
    return quaternion / np.linalg.norm(quaternion)


def test_quaternion_orders(rng):
    assert quaternion_xyzw_to_wxyz([0.1, 0.2, 0.3, 0.9]).tolist() == [0.9, 0.1, 0.2, 0.3]
    for _ in range(10):
        quaternion = random_quaternion_xyzw(rng)
        np.testing.assert_array_equal(
            quaternion_wxyz_to_xyzw(quaternion_xyzw_to_wxyz(quaternion)), quaternion
        )


def test_quaternion_rotation_round_trip_matches_pinocchio(rng):
    for _ in range(20):
        quaternion = random_quaternion_xyzw(rng)
        rotation = rotation_from_quaternion_xyzw(quaternion)
        # Independent reference: Pinocchio's (Eigen's) quaternion, coefficients (x, y, z, w).
        np.testing.assert_allclose(
            rotation, pin.Quaternion(quaternion).toRotationMatrix(), atol=1e-14
        )
        back = quaternion_xyzw_from_rotation(rotation)
        # q and -q are the same rotation; the converter returns w >= 0.
        expected = quaternion if quaternion[3] >= 0 else -quaternion
        np.testing.assert_allclose(back, expected, atol=1e-12)


def test_spatial_vector_orders():
    linear_first = np.arange(6.0)
    angular_first = spatial_linear_first_to_angular_first(linear_first)
    assert angular_first.tolist() == [3, 4, 5, 0, 1, 2]
    np.testing.assert_array_equal(
        spatial_angular_first_to_linear_first(angular_first), linear_first
    )
    matrix = np.arange(12.0).reshape(6, 2)
    np.testing.assert_array_equal(
        spatial_angular_first_to_linear_first(spatial_linear_first_to_angular_first(matrix)),
        matrix,
    )


def test_base_velocity_representations(rng):
    rotation = pin.rpy.rpyToMatrix(rng.uniform(-3, 3, 3))
    twist_body = rng.normal(size=6)
    mixed = base_velocity_body_to_mixed(rotation, twist_body)
    np.testing.assert_allclose(mixed[:3], rotation @ twist_body[:3], atol=1e-15)
    np.testing.assert_allclose(
        base_velocity_mixed_to_body(rotation, mixed), twist_body, atol=1e-14
    )
    T = mixed_to_body_velocity_matrix(rotation, 3)
    nu = np.concatenate([mixed, rng.normal(size=3)])
    np.testing.assert_allclose((T @ nu)[:6], twist_body, atol=1e-14)


def test_generalized_velocity_and_acceleration_round_trips(
    icub: WholeBodyModel, random_state, rng
):
    q, v = random_state(icub)
    np.testing.assert_allclose(
        icub.velocity_from_mixed(q, icub.velocity_to_mixed(q, v)), v, atol=1e-13
    )
    a = rng.normal(size=icub.nv)
    np.testing.assert_allclose(
        icub.acceleration_from_mixed(q, v, icub.acceleration_to_mixed(q, v, a)), a, atol=1e-13
    )
    # The mixed base linear velocity is the time derivative of the base position.
    q_next = pin.integrate(icub.model, q, 1e-7 * v)
    np.testing.assert_allclose(
        (q_next[:3] - q[:3]) / 1e-7, icub.velocity_to_mixed(q, v)[:3], atol=1e-6
    )


def test_state_vector_round_trips(icub: WholeBodyModel, random_state):
    q, v = random_state(icub)
    state = icub.state_from_pinocchio(q, v)
    chi = state.to_vector()
    assert chi.shape == (2 * icub.ndof + 13,)
    # Scalar-first quaternion in chi[3:7].
    np.testing.assert_allclose(chi[3:7], quaternion_xyzw_to_wxyz(q[3:7]), atol=1e-15)
    back = WbmState.from_vector(chi, icub.ndof)
    np.testing.assert_array_equal(back.to_vector(), chi)
    q_back, v_back = icub.state_to_pinocchio(back)
    np.testing.assert_allclose(q_back, q, atol=1e-15)
    np.testing.assert_allclose(v_back, v, atol=1e-13)


def test_fixed_base_state(panda: WholeBodyModel, random_state):
    q, v = random_state(panda)
    state = panda.state_from_pinocchio(q, v)
    assert state.to_vector().shape == (2 * 7 + 13,)
    q_back, v_back = panda.state_to_pinocchio(state)
    np.testing.assert_array_equal(q_back, q)
    np.testing.assert_array_equal(v_back, v)


def test_state_rejects_bad_values(icub: WholeBodyModel):
    chi = icub.state_from_pinocchio(icub.initial_configuration(), np.zeros(icub.nv)).to_vector()
    with pytest.raises(InputError, match="chi"):
        WbmState.from_vector(chi[:-1], icub.ndof)
    bad = chi.copy()
    bad[10] = np.nan
    with pytest.raises(InputError, match="non-finite"):
        WbmState.from_vector(bad, icub.ndof)
    bad = chi.copy()
    bad[3:7] = [2.0, 0, 0, 0]
    with pytest.raises(InputError, match="unit quaternion"):
        WbmState.from_vector(bad, icub.ndof)


def test_joint_state_message_round_trip(icub: WholeBodyModel, rng):
    position, velocity = rng.normal(size=icub.ndof), rng.normal(size=icub.ndof)
    message = messages.joint_state_message(
        icub.joint_names, position, velocity, None, stamp_seconds=12.345678901
    )
    assert message.header.stamp.sec == 12 and message.header.stamp.nanosec == 345678901
    assert messages.seconds_from_time(message.header.stamp) == pytest.approx(
        12.345678901, abs=1e-9
    )
    # Shuffle the names: the converter reorders to the model's order.
    order = rng.permutation(icub.ndof)
    message.name = [icub.joint_names[i] for i in order]
    message.position = position[order].tolist()
    message.velocity = velocity[order].tolist()
    arrays = messages.joint_arrays_from_message(message, icub.joint_indices, require_all=True)
    back = np.empty(icub.ndof)
    back[arrays.indices] = arrays.position
    np.testing.assert_array_equal(back, position)
    assert arrays.effort is None


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda m: m.name.__setitem__(0, "no_such_joint"), "no_such_joint"),
        (lambda m: setattr(m, "position", m.position[:-1]), "one per name"),
        (lambda m: m.position.__setitem__(2, float("nan")), "finite"),
        (lambda m: (m.name.pop(), m.position.pop()), "missing"),
    ],
)
def test_joint_state_message_rejections(icub: WholeBodyModel, mutate, match):
    message = messages.joint_state_message(icub.joint_names, np.zeros(icub.ndof))
    message.name = list(message.name)
    message.position = list(message.position)
    mutate(message)
    with pytest.raises(InputError, match=match):
        messages.joint_arrays_from_message(message, icub.joint_indices, require_all=True)


def test_odometry_round_trip(icub: WholeBodyModel, random_state):
    q, v = random_state(icub)
    message = messages.odometry_message(
        q[:7], v[:6], world_frame="world", base_frame="base_link", stamp_seconds=3.5
    )
    assert (message.header.frame_id, message.child_frame_id) == ("world", "base_link")
    configuration, velocity = messages.base_from_odometry(message)
    np.testing.assert_allclose(configuration, q[:7], atol=1e-15)
    np.testing.assert_array_equal(velocity, v[:6])
    message.pose.pose.orientation.w = float("inf")
    with pytest.raises(InputError):
        messages.base_from_odometry(message)


def test_odometry_filled_in_place_is_the_converters_message(icub: WholeBodyModel, random_state):
    """OdometryMessage.fill (the controller's odom, allocated once) against odometry_message:
    the same message, field by field (exact: the same floats are copied), the second fill
    overwriting the first, and the stamp exact integer nanoseconds."""
    filler = messages.OdometryMessage(world_frame="world", base_frame="base_link")
    for stamp_ns in (3_500_000_000, 1_234_567_891_011):
        q, v = random_state(icub)
        filled = filler.fill(q[:7], v[:6], stamp_ns)
        seconds = stamp_ns * 1e-9
        built = messages.odometry_message(
            q[:7], v[:6], world_frame="world", base_frame="base_link", stamp_seconds=seconds
        )
        assert filled == built
        assert filled.header.stamp.sec * 1_000_000_000 + filled.header.stamp.nanosec == stamp_ns
        configuration, velocity = messages.base_from_odometry(filled)
        np.testing.assert_allclose(configuration, q[:7], atol=1e-15)
        np.testing.assert_array_equal(velocity, v[:6])


def test_wrench_and_transform_messages(rng):
    wrench = rng.normal(size=6)
    np.testing.assert_array_equal(
        messages.wrench_from_message(messages.wrench_message(wrench)), wrench
    )
    np.testing.assert_array_equal(messages.wrench_from_values(tuple(wrench.tolist())), wrench)
    # Rejected: any NaN/inf; accepted: finite values whose sum overflows.
    for bad in (np.nan, np.inf, -np.inf):
        values = [1.0, 2.0, bad, 4.0, 5.0, 6.0]
        with pytest.raises(InputError, match="finite"):
            messages.wrench_from_values(values)
        with pytest.raises(InputError, match="finite"):
            messages.wrench_from_message(messages.wrench_message(np.array(values)))
    huge = [1e308, 1e308, 0.0, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(messages.wrench_from_values(huge), huge)
    transform = messages.transform_message([1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 1.0])
    assert (transform.translation.z, transform.rotation.w) == (3.0, 1.0)
