"""Every kernel of :mod:`wbm_control.jit` compiled, or loaded from numba's cache, at once."""

from __future__ import annotations

import time

from wbm_control.jit import (
    active_set_kernels,
    balance_kernels,
    command_kernels,
    estimator_kernels,
    feedforward_kernels,
    ik_kernels,
    kinematics_kernels,
    kkt_kernels,
    task_kernels,
    whole_body_qp_kernels,
    zmp_kernels,
)

#: The kernel modules, each with its ``warm_up()``: a module added to the package goes here
#: (``tests/control/test_jit_warm_up.py`` checks that none is missing).
MODULES = (
    active_set_kernels,
    balance_kernels,
    command_kernels,
    estimator_kernels,
    feedforward_kernels,
    ik_kernels,
    kinematics_kernels,
    kkt_kernels,
    task_kernels,
    whole_body_qp_kernels,
    zmp_kernels,
)


def warm_up_all() -> dict[str, float]:
    """Call every kernel module's ``warm_up`` (each compiles every signature the steps use).

    Returns:
        Module name (last part) to the wall time its ``warm_up`` took [s].
    """
    times = {}
    for module in MODULES:
        start = time.perf_counter()
        module.warm_up()
        times[module.__name__.rsplit(".", 1)[1]] = time.perf_counter() - start
    return times
