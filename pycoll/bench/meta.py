"""What a result was measured with: the software versions and each rank's device."""
from __future__ import annotations

import os
import platform
import socket
from typing import Dict, List

import mpi4py
import numpy as np
from mpi4py import MPI

import pycoll
from pycoll.info import mpi_library


def versions(backend: str = "cpu") -> Dict[str, str]:
    found = {
        "pycoll": pycoll.__version__,
        "numpy": np.__version__,
        "mpi4py": mpi4py.__version__,
        "mpi": mpi_library(),
        "python": platform.python_version(),
    }
    if backend == "nccl":
        found.update(_gpu_versions())
    return found


def _gpu_versions() -> Dict[str, str]:
    """CuPy's, the CUDA runtime's and NCCL's versions (NCCL's as 2.23.4 from 22304)."""
    import cupy
    from cupy.cuda import nccl as nccl_module  # loaded by the engine already

    cuda = cupy.cuda.runtime.runtimeGetVersion()  # 12040 -> 12.4
    nccl = nccl_module.get_version()
    return {"cupy": cupy.__version__, "cuda": f"{cuda // 1000}.{cuda % 1000 // 10}",
            "nccl": f"{nccl // 10000}.{nccl // 100 % 100}.{nccl % 100}"}


def _device(backend: str) -> str:
    """``cpu``, or ``gpu:N NAME (X GiB)`` for the rank's current GPU."""
    if backend != "nccl":
        return backend
    import cupy

    index = cupy.cuda.Device().id
    props = cupy.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else name
    return f"gpu:{index} {name} ({props['totalGlobalMem'] / (1 << 30):.0f} GiB)"


def devices(comm: MPI.Comm, backend: str) -> List[Dict[str, object]]:
    """Every rank's host, process and device, in rank order (collective over ``comm``)."""
    mine = {"rank": comm.Get_rank(), "host": socket.gethostname(), "pid": os.getpid(),
            "device": _device(backend)}
    return comm.allgather(mine)
