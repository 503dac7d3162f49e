"""Speed work left the physics unchanged: recorded trajectories replay to round-off.

The reference (``data/trajectory_reference.npz``, see ``trajectory_reference.py``) was recorded
with the simulator before the speed work of issue 11. The same runs with the current code must
match it to round-off: the faster code evaluates the same formulas in another order, so the
states differ by floating-point rounding, which the stiff contact (K = 5e6 N/m^1.5) and the
contact solver (tolerance 1e-8) may amplify a little over 500 steps, never to a visible motion.

Tolerances (absolute, stated per quantity): q 1e-9 [m, rad and quaternion], v 1e-7 [m/s, rad/s],
contact forces, joint torques and F/T wrenches 1e-5 [N, N m] (on forces of ~10-300 N), IMU
1e-6 (quaternion, rad/s, m/s^2). Measured with the code of issue 11: q, v, contact forces,
torques and IMU replay bit for bit, the F/T wrenches to 6e-14 N (their sums are taken in another
order). A change of the physics moves these by orders of magnitude more: measured, a 0.1 %
change of the normal contact stiffness moves q by 2.8e-6, v by 6.4e-4, the contact forces by
0.028 N and the F/T wrenches by 0.1 N within the 0.5 s of standing.
"""

from __future__ import annotations

import numpy as np
import pytest
from trajectory_reference import REFERENCE_FILE, record, run_names, standing_model

TOLERANCE = {
    "q": 1e-9,
    "v": 1e-7,
    "forces": 1e-5,
    "torques": 1e-5,
    "ft": 1e-5,
    "imu": 1e-6,
}


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE_FILE) as data:
        return {key: data[key] for key in data.files}


@pytest.fixture(scope="module")
def model():
    return standing_model()


@pytest.mark.parametrize("name", run_names())
def test_trajectory_matches_the_recorded_reference(reference, model, name):
    recorded = record(model, name)
    for key, tolerance in TOLERANCE.items():
        expected = reference[f"{name}/{key}"]
        error = float(np.abs(recorded[key] - expected).max())
        assert error <= tolerance, f"{name} {key}: max deviation {error:.3g} > {tolerance:g}"
