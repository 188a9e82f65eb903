"""Finding MPI's launcher (Hydra ``mpiexec`` from the ``mpich`` wheel) and building its command."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
from typing import Dict, List, Mapping, Optional, Sequence

from pycoll._logging import logger
from pycoll.distributed.store import TOKEN_VAR

# Variables through which a running MPI job talks to its launcher (and the ones pycoll derives from
# them for a rank): a job started from inside a rank must not inherit them, or its ranks would
# join the outer job. MPI's own configuration (HYDRA_HOST_FILE, ...) passes through.
_LAUNCHER_VARS = ("PMI_", "PMIX_", "MPI_LOCAL", "MPIR_", "OMPI_COMM_WORLD_", "OMPI_MCA_orte_")
_RANK_VARS = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "PADDLE_TRAINER_ID",
              "PADDLE_TRAINERS_NUM", "PADDLE_CURRENT_ENDPOINT", "PADDLE_TRAINER_ENDPOINTS",
              "PYCOLL_JOB_DIR"}
# The variables through which OpenMP and the BLAS libraries NumPy may use are told their threads.
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def mpiexec_command() -> List[str]:
    """``PYCOLL_MPIEXEC`` (a command, arguments allowed: ``"mpiexec -f hosts"``), else the
    ``mpiexec`` installed beside this Python, else the one on PATH."""
    configured = os.environ.get("PYCOLL_MPIEXEC")
    if configured:
        command = shlex.split(configured)
        if command and shutil.which(command[0]) is None:
            raise RuntimeError(f"PYCOLL_MPIEXEC={configured!r}: {command[0]!r} is no program found here (a path "
                               f"to MPI's mpiexec, or a command on PATH)")
        return command
    beside = os.pathsep.join({os.path.dirname(sys.executable), sysconfig.get_path("scripts")})
    found = shutil.which("mpiexec", path=beside) or shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec was not found beside this Python or on PATH; install the "
                           "`mpich` package (pip install mpich) or set PYCOLL_MPIEXEC")
    return [found]


def rank_command(nprocs: int, argv: List[str], mpi_args: Sequence[str] = ()) -> List[str]:
    """The command that starts ``nprocs`` ranks, each running ``python argv...``; ``mpi_args``
    go to MPI's launcher (``-hosts ...``)."""
    return [*mpiexec_command(), *mpi_args, "-n", str(nprocs), sys.executable, *argv]


def job_environment(extra: Dict[str, str], nprocs: int = 1, world: Optional[int] = None) -> Dict[str, str]:
    """This process's environment without any outer MPI job's variables, plus each of this
    machine's ``nprocs`` ranks' share of the cores (:func:`thread_share`), the job's meeting point
    (``MASTER_ADDR``/``MASTER_PORT`` unless set, also as paddle's ``PADDLE_MASTER``; paddle's
    ``PADDLE_TRAINER_ENDPOINTS``: one per rank of the ``world``, ``nprocs`` by default), a fresh
    store token (``PYCOLL_STORE_TOKEN`` unless set: the rendezvous store answers this job only),
    and ``extra``. Each rank derives its own variables (``RANK``, ...) from MPI's when it starts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LAUNCHER_VARS) and k not in _RANK_VARS}
    env.update(thread_share(nprocs, env))
    ports = free_ports((world or nprocs) + 1)
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", str(ports[0]))
    env["PADDLE_MASTER"] = f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}"
    env["PADDLE_TRAINER_ENDPOINTS"] = ",".join(f"127.0.0.1:{p}" for p in ports[1:])
    env.setdefault(TOKEN_VAR, secrets.token_hex(16))
    env.update(extra)
    return env


def free_ports(count: int) -> List[int]:
    """``count`` distinct TCP ports free on this host just now."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def usable_cores() -> int:
    """The cores this process may run on (its affinity, which cgroups and ``taskset`` narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def thread_share(nprocs: int, env: Mapping[str, str]) -> Dict[str, str]:
    """The thread count of each of ``nprocs`` ranks on this machine, for OpenMP and the BLAS
    libraries: ``max(1, cores // nprocs)`` (torchrun's convention), in every variable of
    ``THREAD_VARS``; nothing when ``env`` sets any of them (the user chose: OpenBLAS, say, follows
    ``OMP_NUM_THREADS`` when its own variable is unset) or for a single rank.

    Each library otherwise starts one thread per core in every rank, and ranks that busy-poll in
    MPI then fight those threads for the cores (DataParallel steps 10-60x slower on 2 ranks of 2
    cores). The launching process says once what it set.
    """
    if nprocs <= 1 or any(name in env for name in THREAD_VARS):
        return {}
    cores = usable_cores()
    share = str(max(1, cores // nprocs))
    logger.warning("%d ranks share %d cores: each rank gets %s OpenMP/BLAS thread(s) "
                   "(set OMP_NUM_THREADS to choose otherwise)", nprocs, cores, share)
    return {name: share for name in THREAD_VARS}


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
