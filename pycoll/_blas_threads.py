"""How many threads NumPy's BLAS (OpenBLAS) computes with: paddle's one, unless the user chose.

Paddle computes on the CPU with one math thread unless told otherwise (its flag
``paddle_num_threads``, default 1); NumPy's OpenBLAS starts one thread per core. On a machine
whose cores are busy with other work, OpenBLAS's threads then wait on each other, spinning: small
products took 50-100x their time (three probes on a 2-core VM with one core busy; a matmul of
[8, 256] by [256, 256] 5-13 ms against paddle's 44 us), where one thread kept pace with paddle.

So at import, where the user has set none of the threading variables (``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``: pycoll's launcher sets them for its ranks), pycoll
gives NumPy's BLAS paddle's one thread, through OpenBLAS's own call, found among the libraries the
process has loaded (Linux); ``set_flags({'FLAGS_paddle_num_threads': n})`` sets n threads, as paddle
sets its math library's. Where no OpenBLAS is found (another BLAS, another system) nothing changes.
"""
from __future__ import annotations

import ctypes
import os
from typing import Callable, List

CHOSEN_BY = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# OpenBLAS's setter under the names its builds export (NumPy's and SciPy's scipy-openblas, with
# 64-bit integers or not; a system OpenBLAS)
_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
            "openblas_set_num_threads")


def _setters() -> List[Callable[[int], None]]:
    """OpenBLAS's set_num_threads of each OpenBLAS this process has loaded (NumPy and SciPy bring
    one each)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line}
    except OSError:
        return []
    found = []
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        function = next((getattr(library, name) for name in _SETTERS if hasattr(library, name)), None)
        if function is not None:
            function.argtypes, function.restype = [ctypes.c_int], None
            found.append(function)
    return found


def set_threads(count: int) -> bool:
    """Give every OpenBLAS loaded ``count`` threads; whether one was found to take them."""
    setters = _setters()
    for setter in setters:
        setter(max(int(count), 1))
    return bool(setters)


def paddles_default() -> None:
    """At import (once pycoll has loaded NumPy and SciPy, and so their BLAS): paddle's one math
    thread, unless a threading variable says otherwise."""
    if not any(os.environ.get(name) for name in CHOSEN_BY):
        set_threads(1)
