"""A Pinocchio quaternion from a rotation matrix, without eigenpy's leak.

``pin.Quaternion(R)`` with ``R`` a C-ordered (row-major) 3 x 3 numpy array, as numpy's products
and transposes give, leaks 80 bytes per call in eigenpy 3.13 (Pinocchio 4.1): the column-major
copy its converter makes of the array is never freed (measured with heaptrack on the controller
node: about one such allocation per control cycle, the base estimator's orientation; 2.3 MB a
minute at 500 Hz, ``wbm_benchmark_soak``). A Fortran-ordered (column-major) array, as
Pinocchio's own matrices are, is read in place and leaks nothing. :func:`quaternion_of_rotation`
hands it one.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin


def quaternion_of_rotation(rotation: np.ndarray) -> pin.Quaternion:
    """The quaternion of a 3 x 3 rotation matrix (any memory order), as ``pin.Quaternion(R)``.

    Args:
        rotation: The rotation matrix [-] (not checked for orthonormality, as Pinocchio's).

    Returns:
        Pinocchio's quaternion of it (not normalized beyond what the conversion gives).
    """
    return pin.Quaternion(np.asfortranarray(rotation, dtype=float))
