"""paddle's GPU memory statistics, over CuPy's default memory pool.

paddle's two figures are the pool's: "allocated" is the bytes of the pool's blocks that arrays use
(``used_bytes``), "reserved" the bytes the pool holds from the driver, used or cached
(``total_bytes``). Each is per GPU; CuPy answers for its current device.

CuPy keeps no peaks, so pycoll does. When a statistic is first asked for (any of these functions;
a script wanting exact peaks from its start calls ``reset_peak_memory_stats()`` there), pycoll
makes CuPy's allocator a thin wrapper of the pool's ``malloc`` that, after every allocation,
raises that GPU's peaks to the pool's figures. Neither figure grows but at an allocation (a free
lowers "allocated"; only ``empty_cache`` lowers "reserved"), so these peaks are exact from then
on; before it, the peak is the figure at the first query. The wrapper costs a Python call and two
counter reads per allocation, which is why it waits for a script that asks for memory figures
rather than slowing every GPU program's allocations; it is installed on CuPy 14 and later only, whose
pool counts its bytes (older ones sum their blocks in use at every read). On older CuPy, or where
CuPy's allocator is not the default pool's (the user set one of their own), pycoll leaves the
allocator alone and the peaks are the largest figures seen when a statistic is asked for.
``reset_max_memory_*`` start a peak again from the figure now.
"""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Tuple

from pycoll.device import gpu_count, gpu_index, import_cupy

__all__ = ["memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved",
           "reset_max_memory_allocated", "reset_max_memory_reserved", "reset_peak_memory_stats",
           "memory_summary", "empty_cache", "ipc_collect", "track_peaks"]

_ALLOCATED, _RESERVED = 0, 1
_peaks: Dict[int, List[int]] = {}  # GPU index -> [allocated peak, reserved peak], in bytes
_tracking = False  # whether track_peaks has run
_COUNTING_POOL = 14  # the first CuPy major version whose pool counts its used and total bytes


def track_peaks() -> None:
    """Start keeping the peaks (once per process): wrap the default pool's ``malloc`` as CuPy's
    allocator, unless the user's own allocator is in place."""
    global _tracking
    if _tracking:
        return
    _tracking = True
    cupy = import_cupy()
    pool = cupy.get_default_memory_pool()
    current = getattr(cupy.cuda, "get_allocator", None)  # absent from stand-ins with no allocator
    major = str(cupy.__version__).split(".")[0]
    if (not major.isdigit() or int(major) < _COUNTING_POOL or current is None
            or current() != getattr(pool, "malloc", None)):
        return  # peaks are sampled at each statistic instead

    def malloc(size: int) -> Any:
        memory = pool.malloc(size)  # on the current device, whose figures pool reports
        _raise_peaks(int(memory.device_id), pool.used_bytes(), pool.total_bytes())
        return memory

    cupy.cuda.set_allocator(malloc)


def _raise_peaks(index: int, allocated: int, reserved: int) -> None:
    peaks = _peaks.setdefault(index, [0, 0])
    peaks[_ALLOCATED] = max(peaks[_ALLOCATED], allocated)
    peaks[_RESERVED] = max(peaks[_RESERVED], reserved)


def _figures(device: Any, api: str) -> Tuple[int, int, List[int]]:
    """GPU ``device``'s allocated and reserved bytes now, and its peaks (raised to them)."""
    index = gpu_index(device, api)  # paddle's CPU build: ValueError
    track_peaks()
    cupy = import_cupy()
    with cupy.cuda.Device(index):
        pool = cupy.get_default_memory_pool()
        allocated, reserved = int(pool.used_bytes()), int(pool.total_bytes())
    _raise_peaks(index, allocated, reserved)
    return allocated, reserved, _peaks[index]


def memory_allocated(device: Any = None) -> int:
    """Bytes of GPU memory that arrays use now (CuPy's pool blocks in use; 512-byte granules)."""
    return _figures(device, "memory_allocated")[0]


def memory_reserved(device: Any = None) -> int:
    """Bytes of GPU memory CuPy's pool holds now, in use or cached for reuse."""
    return _figures(device, "memory_reserved")[1]


def max_memory_allocated(device: Any = None) -> int:
    """The most bytes arrays have used on the GPU at once (see the module docstring for since when)."""
    return _figures(device, "max_memory_allocated")[2][_ALLOCATED]


def max_memory_reserved(device: Any = None) -> int:
    """The most bytes CuPy's pool has held on the GPU at once."""
    return _figures(device, "max_memory_reserved")[2][_RESERVED]


def reset_max_memory_allocated(device: Any = None) -> None:
    """Start the allocated peak again from the bytes in use now."""
    allocated, _, peaks = _figures(device, "reset_max_memory_allocated")
    peaks[_ALLOCATED] = allocated


def reset_max_memory_reserved(device: Any = None) -> None:
    """Start the reserved peak again from the bytes held now."""
    _, reserved, peaks = _figures(device, "reset_max_memory_reserved")
    peaks[_RESERVED] = reserved


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start both peaks of the GPU again from the figures now."""
    allocated, reserved, peaks = _figures(device, "reset_peak_memory_stats")
    peaks[:] = [allocated, reserved]


def memory_summary(device: Any = None) -> None:
    """Print the GPU's memory figures (paddle's ``device.cuda.memory_summary`` prints too): the
    device's memory, and CuPy's pool in use, cached and at its peaks."""
    allocated, reserved, peaks = _figures(device, "memory_summary")
    index = gpu_index(device, "memory_summary")
    cupy = import_cupy()
    free, total = cupy.cuda.Device(index).mem_info
    mib = 1 << 20
    rows = [("device memory, total", total), ("device memory, free", free),
            ("allocated (in use by arrays)", allocated), ("max allocated", peaks[_ALLOCATED]),
            ("reserved (held by CuPy's pool)", reserved), ("max reserved", peaks[_RESERVED]),
            ("cached (reserved, not in use)", reserved - allocated)]
    lines = [f"pycoll memory summary, gpu:{index}"] + [f"  {name:<32}{value / mib:>12.1f} MiB" for name, value in rows]
    sys.stdout.write("\n".join(lines) + "\n")


def empty_cache() -> None:
    """Give the GPU memory CuPy's pools hold unused back to the driver (paddle's
    ``device.cuda.empty_cache``); nothing to do without a GPU."""
    if gpu_count():
        cupy = import_cupy()
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()


def ipc_collect() -> None:
    """paddle's ``device.ipc_collect``: nothing to collect on a GPU, since pycoll shares no GPU
    memory between processes through CUDA IPC (its ranks exchange data through NCCL); without a
    GPU it refuses, as paddle's CPU build does."""
    gpu_index(None, "ipc_collect", RuntimeError)
