"""The one door to the compiled kernels (``pycoll._C``), imported on first use so that
``import pycoll`` works without them."""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Optional


def ext() -> ModuleType:
    """pycoll._C; ImportError saying how to build it when it is missing or does not load."""
    try:
        from pycoll import _C
    except ImportError as exc:
        raise ImportError(
            "pycoll.kernels: the compiled kernels (pycoll._C) are not built or do not load "
            f"({exc}); build them with `pip install -e .` in the source tree"
        ) from exc
    return _C


@functools.lru_cache(maxsize=None)
def having(name: str) -> Optional[ModuleType]:
    """pycoll._C if it is built and has ``name`` (the newest of a family of kernels, which an
    older build lacks), else None: the kernel modules' test before they serve an array."""
    try:
        module = ext()
    except ImportError:
        return None
    return module if hasattr(module, name) else None


def build_info() -> dict:
    """What this build of the compiled kernels contains, e.g.
    ``{"host_kernels": True, "cuda_kernels": True, "nvcc": "13.0.88", "cuda_arch": "75;80;90+PTX",
    "cuda_runtime": "13.0 (static)", "compiler": "gcc 12.2.0", "pybind11": "3.1.0",
    "cxx_standard": 201703}``; without the CUDA kernels, ``"cuda_kernels": False`` and no
    ``nvcc``, ``cuda_arch`` or ``cuda_runtime``."""
    return dict(ext().build_info())


@functools.lru_cache(maxsize=None)
def cuda_built() -> bool:
    """Whether this build has the CUDA kernels (else device arrays take the CuPy fallback)."""
    return bool(ext().build_info()["cuda_kernels"])
