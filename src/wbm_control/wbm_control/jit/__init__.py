"""Compiled kernels of the controller's step (numba).

The torque step's arithmetic between Pinocchio's and proxsuite's calls is hundreds of small
numpy operations of about 1 us of interpreter and dispatch each (issue 11): the kernels here do
such a sequence in one compiled call. Each kernel has a numpy reference beside it (the code it
replaces, kept in its module or its test) and a test checking the two against each other.

Kernels are compiled on their first call and cached beside their sources (``__pycache__``;
numba falls back to a user cache directory where that is not writable): a node compiles what it
uses while it starts (:func:`wbm_control.jit.warm_up.warm_up_all`: each module's
``warm_up``), never in a control cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numba

F = TypeVar("F", bound=Callable[..., Any])


def kernel(function: F) -> F:
    """``numba.njit`` as the controller's kernels use it: cached, without the GIL.

    ``nogil``: the node's other threads (its executor: services, parameters) run during a
    kernel. No ``fastmath``: the kernels keep IEEE arithmetic (same results for the same
    operations in the same order as numpy's element-wise code).
    """
    return numba.njit(cache=True, nogil=True)(function)
