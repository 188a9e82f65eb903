"""The strict CuPy stand-in (tests/strict_cupy.py) in CuPy's place for a rank worker, and what the
strict GPU rank scripts share: import this module first, before pycoll touches CuPy.

The stand-in's NCCL communicator moves the bytes over MPI (tests/host_cuda.py), so a job started
with ``PYCOLL_BACKEND=nccl`` runs pycoll's NCCL engine on 'GPU' tensors that are no NumPy arrays.
Its device memory is host memory, so pycoll's CUDA kernels (when this build has them) cannot run
on it: the fused flatten/unflatten and the Adam step take their CuPy fallbacks, as on a build
without them (strict_cupy.installed sees to it).
"""
import contextlib
import os
import sys
from typing import Any, Iterator

sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: strict_cupy

import strict_cupy  # noqa: E402

_INSTALLED = contextlib.ExitStack()
cupy = _INSTALLED.enter_context(strict_cupy.installed())  # for the life of the process

import numpy as np  # noqa: E402

import pycoll  # noqa: E402

TOL = dict(rtol=1e-6, atol=1e-6)


@contextlib.contextmanager
def on(place: str) -> Iterator[None]:
    """``place`` ('cpu' or 'gpu') as the current device inside the block, the GPU after."""
    pycoll.set_device(place)
    try:
        yield
    finally:
        pycoll.set_device("gpu")


def held_on_device(tensor: Any, what: str) -> None:
    """``tensor`` is a GPU tensor holding a device array (no host memory)."""
    assert tensor.place == "gpu:0", f"{what}: on {tensor.place}"
    assert isinstance(tensor.array, cupy.ndarray), f"{what}: holds {type(tensor.array).__name__}"


def same(gpu: Any, cpu: Any, what: str, tol: dict = TOL) -> None:
    """A GPU tensor (held on the device) equal to a CPU tensor or NumPy array."""
    held_on_device(gpu, what)
    want = cpu.numpy() if isinstance(cpu, pycoll.Tensor) else np.asarray(cpu)
    np.testing.assert_allclose(gpu.numpy(), want, err_msg=what, **tol)
