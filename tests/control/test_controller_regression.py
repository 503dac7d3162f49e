"""The controller gives the numbers it gave before its refactor (issue 10), to 1e-9.

``tests/data/controller_regression.npz`` was written by ``controller_regression.py`` on the
commit before the controller core was split into modules; the same sequence of readings and API
calls (see that module) must give the same commands and status values.

Tolerance 1e-9 (absolute, in N m, rad, rad/s and m) for every value but one: repeated runs of the
same code in the same process differ by up to 2e-11 in the torque mode and 2e-10 in the IK
mode's efforts (floating-point sums in BLAS, Eigen and proxsuite are vectorized differently
depending on the memory alignment of the arrays), so 1e-9 leaves room for that and for a
reordered sum in the refactored code. The exception is the IK mode's velocity reference: it is
pink's QP solution (a displacement, solved by proxqp to its tolerance) divided by the 2 ms
period, and the same code gives it to 3.6e-9 rad/s only (measured over 30 runs with different
allocations in between); it is checked to 1e-8 rad/s. Its integral, the position reference,
is held to 1e-9 rad.

One row differs from the record by design: step 75 is the safe hold, whose command had no
effort when the record was written (a position-only hold); since the hold carries the robot's
weight on its soles (the contact-consistent static torques, checked against static equilibrium
and in closed loop in test_safe_hold_stands.py) it has one. That row's effort is checked to be
there, finite and within the torque limits; its position and velocity, and every other row,
are compared with the record as before.
"""

import numpy as np
import pytest
from controller_regression import FIELDS, RECORD, VARIANTS, run_sequence

TOLERANCE = 1e-9  # see the module docstring
IK_VELOCITY_TOLERANCE = 1e-8  # [rad/s] the IK's velocity references (module docstring)
HOLD_STEP = 75  # the sequence's safe hold (controller_regression.run_sequence)


@pytest.mark.parametrize("variant", VARIANTS)
def test_commands_match_the_record_from_before_the_refactor(icub, variant):
    record = np.load(RECORD)
    result = run_sequence(icub, variant)
    for name in FIELDS:
        expected = record[f"{variant}/{name}"]
        if name == "effort":
            hold = result[name][HOLD_STEP].copy()
            assert np.all(np.isnan(expected[HOLD_STEP]))  # the record's position-only hold
            assert np.all(np.isfinite(hold)) and np.all(np.abs(hold) <= icub.torque_limits)
            expected = expected.copy()
            expected[HOLD_STEP] = hold  # compared above (module docstring)
        # The same commanded arrays (None where the record has NaN rows), the same numbers.
        np.testing.assert_array_equal(np.isnan(result[name]), np.isnan(expected), err_msg=name)
        tolerance = IK_VELOCITY_TOLERANCE if (variant, name) == ("ik", "velocity") else TOLERANCE
        np.testing.assert_allclose(
            result[name], expected, rtol=0.0, atol=tolerance, err_msg=f"{variant}: {name}"
        )
    # The sequence exercises what it says: the hold at step 75 and a resumed step after it.
    safe = record[f"{variant}/safe"]
    assert safe[HOLD_STEP] == 1.0 and safe[HOLD_STEP + 1] == 0.0
