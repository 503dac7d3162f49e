"""Bytes the C heap (glibc's malloc) holds in use: a native memory leak shows in it exactly.

The resident set size hides a small leak for a while (leaked blocks fill the free space of pages
already touched) and Python's own allocator does not see allocations made in C++ (Pinocchio,
eigenpy, proxsuite, DDS). glibc's ``mallinfo2`` counts the bytes of every block allocated and
not freed, over all its arenas: a loop that leaks ``n`` bytes a pass grows it by ``n`` a pass.
"""

from __future__ import annotations

import ctypes
import ctypes.util


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
_mallinfo2 = getattr(_libc, "mallinfo2", None)
if _mallinfo2 is not None:
    _mallinfo2.restype = _MallInfo2


def malloc_in_use() -> int:
    """Bytes allocated by malloc and not freed, in this process, now [B].

    Raises:
        RuntimeError: The C library has no ``mallinfo2`` (not glibc 2.33 or later).
    """
    if _mallinfo2 is None:
        raise RuntimeError("malloc_in_use needs glibc's mallinfo2 (glibc 2.33 or later)")
    info = _mallinfo2()
    return int(info.uordblks) + int(info.hblkhd)
