"""Finding MPI's launcher (Hydra ``mpiexec`` from the ``mpich`` wheel) and building its command."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess
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


def _die_with_parent() -> None:
    """In the launcher's child: receive SIGTERM when the parent dies (Linux), so that killing
    the parent (a test timeout, a job scheduler) never leaves the MPI job behind."""
    libc_name = ctypes.util.find_library("c")
    if libc_name and sys.platform.startswith("linux"):
        ctypes.CDLL(libc_name).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_job(command: List[str], env: Dict[str, str]) -> subprocess.Popen:
    """Start MPI's launcher; it stops the whole job if this process dies."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    return subprocess.Popen(command, env=env, preexec_fn=_die_with_parent)
