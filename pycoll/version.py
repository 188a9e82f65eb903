"""``pycoll.version``, paddle's ``paddle.version`` for pycoll: the version strings and the functions
that return them (``cuda()``, ``nccl()``, ``show()``...).

The values are pycoll's own: its version, and the CUDA and NCCL that CuPy brings where a GPU can
be used (``is_compiled_with_cuda()``), else 'False' and '0' as paddle's CPU build says. They are
worked out on first use, so that importing this module never imports CuPy. pycoll uses neither
cuDNN, XPU, CINN, TensorRT nor ROCm: those read as paddle's CPU build reads them.
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List

from pycoll import __version__ as full_version
from pycoll.device import is_compiled_with_cuda

major, minor, patch = (full_version.split(".") + ["0", "0"])[:3]
rc = "0"
is_tagged = True
commit = "unknown"
cudnn_version = xpu_xre_version = xpu_xccl_version = xpu_xhpc_version = cinn_version = "False"
hip_version = None
tensorrt_version = "None"
with_mkl = "OFF"
with_hml = ""
with_pip_cuda_libraries = "OFF"
with_pip_tensorrt = "OFF"
compiled_cuda_archs: List[int] = []

class CudaVersion(str):
    """paddle's ``version.cuda``: the CUDA version string, which can also be called (``cuda()``)."""

    def __call__(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return f"CudaVersion('{self}')"


@functools.lru_cache(maxsize=None)
def _gpu_versions() -> Dict[str, str]:
    """CUDA's runtime version ('12.4') and NCCL's version code ('21903') as CuPy has them, or
    'False' and '0' where no GPU can be used."""
    if not is_compiled_with_cuda():
        return {"cuda_version": "False", "nccl_version": "0"}
    import cupy

    code = cupy.cuda.runtime.runtimeGetVersion()
    versions = {"cuda_version": f"{code // 1000}.{code % 1000 // 10}", "nccl_version": "0"}
    try:
        from cupy.cuda import nccl as cupy_nccl

        if cupy_nccl.available:
            versions["nccl_version"] = str(cupy_nccl.get_build_version())
    except Exception:  # CuPy without its NCCL: the version paddle's CPU build reports
        pass
    return versions


def __getattr__(name: str) -> Any:
    if name in ("cuda_version", "nccl_version"):
        return _gpu_versions()[name]
    if name == "cuda":
        return CudaVersion(_gpu_versions()["cuda_version"])
    raise AttributeError(f"module 'pycoll.version' has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | {"cuda", "cuda_version", "nccl_version"})


def nccl() -> str:
    """NCCL's version code ('0' without a GPU)."""
    return _gpu_versions()["nccl_version"]


def cudnn() -> str:
    return cudnn_version


def xpu() -> str:
    return xpu_xhpc_version


def xpu_xre() -> str:
    return xpu_xre_version


def xpu_xccl() -> str:
    return xpu_xccl_version


def xpu_xhpc() -> str:
    return xpu_xhpc_version


def cinn() -> str:
    return cinn_version


def tensorrt() -> str:
    return tensorrt_version


def hip() -> Any:
    return hip_version


def mkl() -> str:
    return with_mkl


def hml() -> str:
    return with_hml


def cuda_archs() -> List[int]:
    return compiled_cuda_archs


def show() -> None:
    """Print the versions, one per line, as paddle's ``version.show()`` does."""
    lines = ([f"full_version: {full_version}", f"major: {major}", f"minor: {minor}", f"patch: {patch}", f"rc: {rc}"]
             if is_tagged else [f"commit: {commit}"])
    versions = _gpu_versions()
    lines += [f"cuda: {versions['cuda_version']}", f"cudnn: {cudnn_version}", f"hip: {hip_version}",
              f"nccl: {versions['nccl_version']}", f"xpu_xre: {xpu_xre_version}", f"xpu_xccl: {xpu_xccl_version}",
              f"xpu_xhpc: {xpu_xhpc_version}", f"cinn: {cinn_version}", f"tensorrt_version: {tensorrt_version}",
              f"cuda_archs: {compiled_cuda_archs}"]
    print("\n".join(lines))
