"""``python -m pycoll.info [--json]``: what this installation of pycoll has and can use.

Versions of pycoll, Python, NumPy, mpi4py and the MPI library, CuPy and NCCL; whether the
compiled kernels have host and CUDA code (and for which GPU architectures); the visible GPUs.
The JSON form always has ``cuda_kernels``, ``nccl``, ``mpi`` and ``gpus``.
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import warnings
from typing import Any, Dict, List, Optional

import numpy as np

import pycoll
from pycoll.device import gpu_count


def mpi_library() -> str:
    """The MPI library's name and version on one line, e.g. ``MPICH Version: 5.0.2``."""
    from mpi4py import MPI

    return " ".join(MPI.Get_library_version().split("\n")[0].split())


def _mpi() -> Dict[str, Optional[str]]:
    try:
        import mpi4py

        library = mpi_library()
    except Exception as exc:  # a broken MPI install is a fact to report, not a crash
        return {"mpi4py": None, "library": None, "error": str(exc)}
    return {"mpi4py": mpi4py.__version__, "library": library}


def _cupy_and_nccl() -> Dict[str, Optional[str]]:
    """CuPy's version; NCCL's, or ``nccl_missing``: why CuPy could not load it, in pycoll's words
    (CuPy's own warning about it is silenced: this report says it once)."""
    try:
        import cupy
    except Exception:
        return {"cupy": None, "nccl": None, "nccl_missing": "CuPy is not installed"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            from cupy.cuda import nccl as cupy_nccl

            available = cupy_nccl.available
        except Exception as exc:
            available, caught = False, [exc]
    if available:
        version = cupy_nccl.get_build_version()
        return {"cupy": cupy.__version__, "nccl": f"{version // 10000}.{version // 100 % 100}.{version % 100}",
                "nccl_missing": None}
    return {"cupy": cupy.__version__, "nccl": None, "nccl_missing": _why_no_nccl(caught)}


def _why_no_nccl(caught: List[Any]) -> str:
    """The reason and the install command from CuPy's warning (or error) about loading NCCL."""
    text = " ".join(str(getattr(w, "message", w)) for w in caught)
    reason = re.search(r"Reason: (.*?)\s*(?:You can|$)", text, re.S)
    install = re.search(r"(pip install \S+(?: \S+)?)", text)
    why = reason.group(1).strip() if reason else "CuPy could not load libnccl"
    how = f"; {install.group(1)} installs it" if install else ""
    return f"{why}{how}"


def _gpus() -> List[Dict[str, Any]]:
    gpus = []
    for i in range(gpu_count()):
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(i)
        name = props["name"]
        gpus.append({"id": i, "name": name.decode() if isinstance(name, bytes) else name,
                     "memory_gib": round(props["totalGlobalMem"] / 2**30, 1),
                     "compute_capability": f"{props['major']}.{props['minor']}"})
    return gpus


def _kernels() -> Dict[str, Any]:
    from pycoll import kernels

    try:
        return kernels.build_info()
    except ImportError as exc:
        return {"host_kernels": False, "cuda_kernels": False, "error": str(exc)}


def collect() -> Dict[str, Any]:
    """Everything ``python -m pycoll.info`` reports, as a dict (each fact once: whether the
    kernels were built is ``host_kernels``/``cuda_kernels``, ``kernels`` holds how)."""
    kernel_info = _kernels()
    built = {key: bool(kernel_info.pop(key, False)) for key in ("host_kernels", "cuda_kernels")}
    cupy_info = _cupy_and_nccl()
    return {
        "pycoll": pycoll.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "mpi": _mpi(),
        "cupy": cupy_info["cupy"],
        "nccl": cupy_info["nccl"],
        "nccl_missing": cupy_info["nccl_missing"],
        "kernels": kernel_info,
        **built,
        "gpus": _gpus(),
    }


def _text(info: Dict[str, Any]) -> str:
    kernels = info["kernels"]
    lines = [
        f"pycoll       {info['pycoll']} (Python {info['python']}, NumPy {info['numpy']})",
        f"MPI          mpi4py {info['mpi']['mpi4py']}, {info['mpi']['library']}",
        f"CuPy         {info['cupy'] or 'not installed'}",
        f"NCCL         {info['nccl'] or 'not available (' + info['nccl_missing'] + ')'}",
        f"kernels      host: {'yes' if info['host_kernels'] else 'no'}, "
        f"CUDA: {'yes' if info['cuda_kernels'] else 'no'}"
        + "".join(f", {k}: {v}" for k, v in kernels.items()),
        f"GPUs         {len(info['gpus'])}",
    ]
    lines += [f"  gpu {g['id']}: {g['name']}, {g['memory_gib']} GiB, sm {g['compute_capability']}"
              for g in info["gpus"]]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pycoll.info", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    info = collect()
    print(json.dumps(info, indent=2) if args.json else _text(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
