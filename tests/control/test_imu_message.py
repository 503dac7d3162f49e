"""The controller's sensor_msgs/Imu reader (`imu_from_message`), against numpy's formulas.

The reader checks and normalizes on Python floats (issue 11: numpy's per-call cost was most of
its work). It is compared with the numpy form it replaced (q / np.linalg.norm(q)) on messages
read as the node reads them (serialized, then decoded by `wbm_description.ros.cdr`), and on
rclpy's own message objects. Tolerance: 2 ulp of the unit quaternion's components (4.4e-16):
the two forms sum the squares in a different order, nothing else differs.
"""

from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Imu

from wbm_control.ros.messages import imu_from_message, imu_from_values
from wbm_description.exceptions import InputError
from wbm_description.ros import cdr

ULP_TOLERANCE = 4.5e-16  # two ulp at 1.0 (module docstring)


def imu(quaternion_xyzw, gyro, accel) -> Imu:
    message = Imu()
    message.header.frame_id = "imu_frame"
    o, w, a = message.orientation, message.angular_velocity, message.linear_acceleration
    o.x, o.y, o.z, o.w = (float(v) for v in quaternion_xyzw)
    w.x, w.y, w.z = (float(v) for v in gyro)
    a.x, a.y, a.z = (float(v) for v in accel)
    return message


def test_matches_the_numpy_normalization_on_decoded_and_rclpy_messages(rng):
    decode = cdr.decoder(Imu)
    for _ in range(200):
        quaternion = rng.normal(size=4)
        # Up to 0.9e-3 off unit norm: accepted and normalized.
        quaternion *= (1.0 + rng.uniform(-9e-4, 9e-4)) / np.linalg.norm(quaternion)
        gyro, accel = rng.normal(size=3), rng.normal(scale=9.81, size=3)
        message = imu(quaternion, gyro, accel)
        _, _, v = cdr.values_decoder(Imu)(serialize_message(message))  # the node's path
        for reading in (
            imu_from_message(message),
            imu_from_message(decode(serialize_message(message))),
            imu_from_values(v[0:4], v[13:16], v[25:28]),
        ):
            expected = quaternion / np.linalg.norm(quaternion)
            np.testing.assert_allclose(
                reading.orientation_xyzw, expected, rtol=0.0, atol=ULP_TOLERANCE
            )
            np.testing.assert_array_equal(reading.angular_velocity, gyro)
            np.testing.assert_array_equal(reading.linear_acceleration, accel)
            assert abs(np.linalg.norm(reading.orientation_xyzw) - 1.0) < ULP_TOLERANCE


@pytest.mark.parametrize(
    ("quaternion", "gyro", "match"),
    [
        ((0.0, 0.0, np.nan, 1.0), (0.0, 0.0, 0.0), "finite orientation"),
        ((0.0, 0.0, 0.0, 1.0), (0.0, np.inf, 0.0), "finite orientation"),
        ((0.0, 0.0, 0.0, 1.01), (0.0, 0.0, 0.0), "unit quaternion"),
        ((0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), "unit quaternion"),
    ],
)
def test_rejects_non_finite_or_non_unit_orientations(quaternion, gyro, match):
    with pytest.raises(InputError, match=match):
        imu_from_message(imu(quaternion, gyro, (0.0, 0.0, 9.81)))
    with pytest.raises(InputError, match=match):
        imu_from_values(quaternion, gyro, (0.0, 0.0, 9.81))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_acceleration_reads_as_no_accelerometer(bad):
    reading = imu_from_message(imu((0.0, 0.0, 0.0, 1.0), (0.1, 0.2, 0.3), (0.5, bad, 9.8)))
    from_values = imu_from_values((0.0, 0.0, 0.0, 1.0), (0.1, 0.2, 0.3), (0.5, bad, 9.8))
    for field in ("orientation_xyzw", "angular_velocity", "linear_acceleration"):
        np.testing.assert_array_equal(getattr(from_values, field), getattr(reading, field))
    # All zeros: the base estimator fuses only finite, non-zero accelerometer readings.
    np.testing.assert_array_equal(reading.linear_acceleration, np.zeros(3))
    np.testing.assert_array_equal(reading.angular_velocity, [0.1, 0.2, 0.3])
