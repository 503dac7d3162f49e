"""``python -m wbm_control.jit``: compile the controller's kernels into their cache.

``tools/setup.sh`` runs it, so that no test and no node compiles a kernel while it runs (a
cold compile takes seconds; loading a cached kernel, milliseconds).
"""

from __future__ import annotations

import time

from wbm_control.jit.warm_up import warm_up_all

if __name__ == "__main__":
    start = time.perf_counter()
    times = warm_up_all()
    listed = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in times.items())
    print(f"wbm_control kernels ready in {time.perf_counter() - start:.2f} s ({listed})")
