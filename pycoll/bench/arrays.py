"""Where pycoll-bench's buffers live: host memory (NumPy, the cpu backend) or the rank's GPU
(CuPy, the nccl backend). CuPy is imported only when a GPU memory is made.

NCCL collectives are stream-ordered: a call returns once it is queued on the current stream,
before it completes. ``sync()`` waits for that stream, so that a timed block ends when its
calls have finished and a result is read only once it is there.
"""
from __future__ import annotations

from typing import Any

import numpy as np


class HostMemory:
    """NumPy buffers; every call has finished when it returns."""

    xp = np

    def upload(self, dst: np.ndarray, src: np.ndarray) -> None:
        np.copyto(dst, src)

    def to_host(self, arr: np.ndarray) -> np.ndarray:
        return arr

    def sync(self) -> None:
        pass


class GpuMemory:
    """CuPy buffers on the current device; ``sync()`` waits for the current stream."""

    def __init__(self) -> None:
        import cupy

        self.xp = cupy

    def upload(self, dst: Any, src: np.ndarray) -> None:
        dst.set(np.ascontiguousarray(src))  # synchronous: done before the next call

    def to_host(self, arr: Any) -> np.ndarray:
        self.sync()
        return self.xp.asnumpy(arr)

    def sync(self) -> None:
        self.xp.cuda.get_current_stream().synchronize()


def memory(backend: str):
    """The memory of ``backend``'s buffers: the GPU for nccl, the host for cpu."""
    return GpuMemory() if backend == "nccl" else HostMemory()
