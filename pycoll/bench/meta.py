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


def versions() -> Dict[str, str]:
    return {
        "pycoll": pycoll.__version__,
        "numpy": np.__version__,
        "mpi4py": mpi4py.__version__,
        "mpi": mpi_library(),
        "python": platform.python_version(),
    }


def devices(comm: MPI.Comm, backend: str) -> List[Dict[str, object]]:
    """Every rank's host, process and device, in rank order (collective over ``comm``)."""
    mine = {"rank": comm.Get_rank(), "host": socket.gethostname(), "pid": os.getpid(),
            "device": backend}
    return comm.allgather(mine)
