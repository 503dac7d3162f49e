"""The controller gives the numbers it gave before its refactor (issue 10), to 1e-9.

``tests/data/controller_regression.npz`` was written by ``controller_regression.py`` on the
commit before the controller core was split into modules; the same sequence of readings and API
calls (see that module) must give the same commands and status values.

Tolerance 1e-9 (absolute, in N m, rad, rad/s and m): repeated runs of the same code on the same
machine differ by up to 2e-11 in the torque mode (the order of floating-point sums in BLAS and
proxsuite is not fixed), so 1e-9 leaves room for that and for a reordered sum in the refactored
code, and is far below anything physical (a millionth of a newton metre).
"""

import numpy as np
import pytest
from controller_regression import FIELDS, RECORD, VARIANTS, run_sequence

TOLERANCE = 1e-9  # see the module docstring


@pytest.mark.parametrize("variant", VARIANTS)
def test_commands_match_the_record_from_before_the_refactor(icub, variant):
    record = np.load(RECORD)
    result = run_sequence(icub, variant)
    for name in FIELDS:
        expected = record[f"{variant}/{name}"]
        # The same commanded arrays (None where the record has NaN rows), the same numbers.
        np.testing.assert_array_equal(np.isnan(result[name]), np.isnan(expected), err_msg=name)
        np.testing.assert_allclose(
            result[name], expected, rtol=0.0, atol=TOLERANCE, err_msg=f"{variant}: {name}"
        )
    # The sequence exercises what it says: the hold at step 75 and a resumed step after it.
    assert record[f"{variant}/safe"][75] == 1.0 and record[f"{variant}/safe"][76] == 0.0
