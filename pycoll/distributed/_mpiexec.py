"""Finding MPI's launcher (Hydra ``mpiexec`` from the ``mpich`` wheel) and building its command."""
from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import Dict, List

# Variables through which a running MPI job talks to its launcher: a job started from inside
# an MPI rank must not inherit them, or its ranks would join the outer job.
_LAUNCHER_VARS = ("PMI_", "PMIX_", "HYDRA_", "MPI_LOCAL", "MPIR_", "OMPI_")


def mpiexec_path() -> str:
    """``PYCOLL_MPIEXEC``, else the ``mpiexec`` installed beside this Python, else the one on PATH."""
    configured = os.environ.get("PYCOLL_MPIEXEC")
    if configured:
        return configured
    beside = os.pathsep.join({os.path.dirname(sys.executable), sysconfig.get_path("scripts")})
    found = shutil.which("mpiexec", path=beside) or shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec was not found beside this Python or on PATH; install the "
                           "`mpich` package (pip install mpich) or set PYCOLL_MPIEXEC")
    return found


def rank_command(nprocs: int, argv: List[str]) -> List[str]:
    """The command that starts ``nprocs`` ranks, each running ``python argv...``."""
    return [mpiexec_path(), "-n", str(nprocs), sys.executable, *argv]


def job_environment(extra: Dict[str, str]) -> Dict[str, str]:
    """This process's environment without any outer MPI job's variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LAUNCHER_VARS)}
    env.update(extra)
    return env
