"""Where this rank sits: what launchers tell it, whether MPI started it, which backend it uses and
how long it may wait. The one place that knows launcher variables; env, rendezvous, the entry
point, the failure path and the bench CLI ask here.

Launchers and their variables:

- MPI (``python -m pycoll.launch``, ``mpiexec``, ``srun --mpi``): Hydra/MPICH sets ``PMI_RANK``,
  ``PMI_SIZE``, ``MPI_LOCALRANKID``, ``MPI_LOCALNRANKS``; PMIx ``PMIX_RANK``; Open MPI
  ``OMPI_COMM_WORLD_RANK``, ``OMPI_COMM_WORLD_SIZE``, ``OMPI_COMM_WORLD_LOCAL_RANK``.
- torchrun-style: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE`` (with
  ``MASTER_ADDR``/``MASTER_PORT``, read by the rendezvous).
- paddle's launcher: ``PADDLE_TRAINER_ID``, ``PADDLE_TRAINERS_NUM``, and the rank within the
  node ``PADDLE_RANK_IN_NODE`` (what paddle's ``fleet.local_rank()`` reads), also
  ``PADDLE_LOCAL_RANK``, with ``PADDLE_LOCAL_SIZE`` ranks on the node.
- SLURM's ``srun`` (without MPI): ``SLURM_PROCID``, ``SLURM_STEP_NUM_TASKS``, ``SLURM_LOCALID``,
  ``SLURM_STEP_NODELIST``; read as the torchrun-style variables they stand for
  (:func:`with_slurm`) wherever those are unset.
"""
from __future__ import annotations

import datetime
import math
import os
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from pycoll._logging import logger

DEFAULT_TIMEOUT_S = 1800.0
MAX_TIMEOUT_S = 1e6  # about 11.6 days: beyond it a timeout is a typo, and timers overflow later
BACKENDS = ("cpu", "nccl")

MPI_RANK_VARS = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")
MPI_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
MPI_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")
MPI_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")
RANK_VARS = ("RANK", *MPI_RANK_VARS, "PADDLE_TRAINER_ID", "SLURM_PROCID")
SIZE_VARS = ("WORLD_SIZE", *MPI_SIZE_VARS, "PADDLE_TRAINERS_NUM", "SLURM_STEP_NUM_TASKS")
PADDLE_LOCAL_RANK_VARS = ("PADDLE_RANK_IN_NODE", "PADDLE_LOCAL_RANK")
LOCAL_RANK_VARS = ("LOCAL_RANK", *MPI_LOCAL_RANK_VARS, *PADDLE_LOCAL_RANK_VARS, "SLURM_LOCALID")
LOCAL_SIZE_VARS = ("LOCAL_WORLD_SIZE", *MPI_LOCAL_SIZE_VARS, "PADDLE_LOCAL_SIZE")
SLURM_PORTS = (20000, 40000)  # MASTER_PORT under srun, when unset: from the job id, in this range

Timeout = Union[None, float, int, datetime.timedelta]


# -- variables -------------------------------------------------------------------------------
def int_var(env: Mapping[str, str], name: str, low: int = 0) -> Optional[int]:
    """The integer in ``env[name]`` (None when unset or empty); ValueError naming the variable
    when it is not an integer >= ``low``."""
    raw = env.get(name)
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low:
        raise ValueError(f"{name}={raw!r}: it must be an integer >= {low}")
    return value


def first_int(names: Sequence[str], env: Mapping[str, str] = os.environ) -> Optional[int]:
    """The first of ``names`` set in ``env``, as an integer; None when none is."""
    for name in names:
        value = int_var(env, name)
        if value is not None:
            return value
    return None


def launcher_rank() -> Optional[int]:
    """This process's rank as an MPI launcher announced it, else None."""
    return first_int(MPI_RANK_VARS)


def under_mpi() -> bool:
    """True when an MPI launcher started this process, or MPI runs here with several ranks."""
    if any(os.environ.get(name) for name in MPI_RANK_VARS):
        return True
    mpi = sys.modules.get("mpi4py.MPI")
    return (mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()
            and mpi.COMM_WORLD.Get_size() > 1)


def mpi_running() -> bool:
    """True when this process initialised MPI and has not finalised it."""
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()


# -- placement -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    """Where this process sits: ``via`` is ``"mpi"``, ``"store"`` or ``"single"``."""

    rank: int
    world: int
    local_rank: int
    via: str


def mpi_placement(env: Mapping[str, str]) -> Placement:
    """The placement MPI gives (initialising MPI); torchrun variables that disagree are an error."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    for name, mine in (("RANK", rank), ("WORLD_SIZE", size)):
        given = int_var(env, name)
        if given is not None and given != mine:
            raise ValueError(f"{name}={given} disagrees with MPI, which has this process as rank "
                             f"{rank} of {size}; unset {name} or start the ranks consistently")
    local = first_int(MPI_LOCAL_RANK_VARS, env)
    if local is None:
        node = world.Split_type(MPI.COMM_TYPE_SHARED)
        local = node.Get_rank()
        node.Free()
    return Placement(rank, size, local, "mpi")


def env_placement(env: Mapping[str, str]) -> Placement:
    """The placement from torchrun-style variables in ``env`` (a world of one when unset)."""
    world = int_var(env, "WORLD_SIZE", low=1)
    rank = int_var(env, "RANK")
    local = first_int(("LOCAL_RANK", *PADDLE_LOCAL_RANK_VARS), env)
    if world is None:
        if rank not in (None, 0):
            raise ValueError(f"RANK={rank} is set but WORLD_SIZE is not; set WORLD_SIZE to the "
                             f"number of ranks (torchrun sets both)")
        return Placement(0, 1, local or 0, "single")
    if rank is None:
        raise ValueError(f"WORLD_SIZE={world} is set but RANK is not; set RANK to this process's "
                         f"rank in [0, {world})")
    if rank >= world:
        raise ValueError(f"RANK={rank} is out of range for WORLD_SIZE={world}; it must be in [0, {world})")
    if world == 1:
        return Placement(0, 1, local or 0, "single")
    if local is None:
        raise ValueError(f"LOCAL_RANK is not set (RANK={rank}, WORLD_SIZE={world}); set it to this "
                         f"process's index on its node, which picks its GPU")
    return Placement(rank, world, local, "store")


def placement() -> Placement:
    """Where this process sits, from MPI when it runs under MPI, else from the environment
    (torchrun's variables, or SLURM's standing for them)."""
    return mpi_placement(os.environ) if under_mpi() else env_placement(with_slurm(os.environ))


def first_host(nodelist: str) -> str:
    """The first host of a SLURM node list: ``gpu[03-08,11],cpu1`` -> ``gpu03``."""
    head = nodelist.strip()
    depth, cut = 0, len(head)
    for i, ch in enumerate(head):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            cut = i
            break
    head = head[:cut]
    if "[" not in head:
        return head
    prefix, rest = head.split("[", 1)
    ranges, suffix = rest.split("]", 1)
    return prefix + ranges.split(",")[0].split("-")[0] + suffix


def with_slurm(env: Mapping[str, str]) -> Mapping[str, str]:
    """``env``, with the torchrun-style variables an ``srun`` step implies where they are unset:
    ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` from ``SLURM_PROCID``, ``SLURM_STEP_NUM_TASKS``,
    ``SLURM_LOCALID``; ``MASTER_ADDR`` the first host of the step's node list; ``MASTER_PORT``
    from the job id (so every task of a step picks the same one). Only inside an ``srun`` step of
    several tasks (``SLURM_STEP_NUM_TASKS`` > 1): a batch script itself is one process."""
    tasks = int_var(env, "SLURM_STEP_NUM_TASKS", low=1)
    if tasks is None or tasks == 1 or env.get("SLURM_PROCID") in (None, ""):
        return env
    nodes = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or ""
    job = int_var(env, "SLURM_JOB_ID") or 0
    implied = {"RANK": env["SLURM_PROCID"], "WORLD_SIZE": str(tasks), "LOCAL_RANK": env.get("SLURM_LOCALID"),
               "MASTER_ADDR": first_host(nodes) if nodes else None,
               "MASTER_PORT": str(SLURM_PORTS[0] + job % (SLURM_PORTS[1] - SLURM_PORTS[0]))}
    return {**{k: v for k, v in implied.items() if v is not None}, **{k: v for k, v in env.items() if v != ""}}


def rank_variables(env: Mapping[str, str] = os.environ) -> Dict[str, str]:
    """What other frameworks read to find a rank (torchrun's ``RANK``, ``WORLD_SIZE``,
    ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``; paddle's ``PADDLE_TRAINER_ID``, ``PADDLE_TRAINERS_NUM``,
    ``PADDLE_CURRENT_ENDPOINT``, ``PADDLE_GLOBAL_RANK/SIZE``, ``PADDLE_LOCAL_RANK/SIZE``,
    ``PADDLE_RANK_IN_NODE``, ``PADDLE_NNODES``), from the MPI launcher's variables of a rank it started; set by
    pycoll's rank wrapper before the user's code runs. Empty outside an MPI launcher."""
    rank, world = first_int(MPI_RANK_VARS, env), first_int(MPI_SIZE_VARS, env)
    if rank is None or world is None:
        return {}
    local = first_int(MPI_LOCAL_RANK_VARS, env)
    local_world = first_int(MPI_LOCAL_SIZE_VARS, env)
    found = {"RANK": rank, "WORLD_SIZE": world, "PADDLE_TRAINER_ID": rank, "PADDLE_TRAINERS_NUM": world,
             "LOCAL_RANK": local, "LOCAL_WORLD_SIZE": local_world,
             # paddle's launcher's other names for them
             "PADDLE_GLOBAL_RANK": rank, "PADDLE_GLOBAL_SIZE": world, "PADDLE_LOCAL_RANK": local,
             "PADDLE_RANK_IN_NODE": local, "PADDLE_LOCAL_SIZE": local_world,
             "PADDLE_NNODES": world // local_world if local_world and world % local_world == 0 else None}
    endpoints = env.get("PADDLE_TRAINER_ENDPOINTS", "").split(",")
    if len(endpoints) == world:
        found["PADDLE_CURRENT_ENDPOINT"] = endpoints[rank]
    return {k: str(v) for k, v in found.items() if v is not None}


def local_world_size() -> int:
    """How many ranks the launcher started on this node (1 when it did not say)."""
    return first_int(LOCAL_SIZE_VARS) or 1


def selected_gpus(spec: Any, option: str) -> List[str]:
    """The GPU ids ``spec`` names (``"0,1"``, or a list), for a job's ``CUDA_VISIBLE_DEVICES``.

    Each must be among ``CUDA_VISIBLE_DEVICES`` when that is set (paddle's rule), else below the
    number of GPUs CuPy sees, when it sees any (without one the ranks run on the CPU). ValueError
    naming ``option`` otherwise."""
    from pycoll.device import gpu_count

    items = spec.split(",") if isinstance(spec, str) else [str(g) for g in spec]
    ids = [g.strip() for g in items if g.strip()]
    if not ids or not all(g.isdigit() for g in ids):
        raise ValueError(f"{option} {spec!r}: give comma-separated GPU ids such as 0,1")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        shown = [g.strip() for g in visible.split(",")]
        missing = [g for g in ids if g not in shown]
        where = f"CUDA_VISIBLE_DEVICES={visible}"
    else:
        count = gpu_count()
        missing = [g for g in ids if count and int(g) >= count]
        where = f"this machine's {count} GPU(s)"
    if missing:
        raise ValueError(f"{option} {spec!r}: GPU {', '.join(missing)} is not among {where}")
    return ids


# -- backend and timeouts ------------------------------------------------------------------------
def backend_name(backend: Optional[str], fn: str = "init_parallel_env") -> str:
    """The backend asked for (argument, else PYCOLL_BACKEND), else the one the device implies:
    nccl when the current device is a GPU, cpu otherwise. nccl without a usable GPU falls back
    to cpu with a log line. A name there is not is refused naming ``fn``, the call given it."""
    from pycoll.device import current_place, gpu_count

    name = (backend or os.environ.get("PYCOLL_BACKEND") or "").lower()
    if name == "gloo":  # paddle's name for its CPU backend
        name = "cpu"
    if name and name not in BACKENDS:
        raise ValueError(f"{fn}: backend {name!r} (argument or PYCOLL_BACKEND) is not available; "
                         f"available: {', '.join(BACKENDS)} (and gloo, paddle's name for cpu)")
    if not name:
        name = "nccl" if current_place()[0] == "gpu" else "cpu"
    if name == "nccl" and gpu_count() == 0:
        logger.warning("the nccl backend needs a visible GPU (with CuPy); none is usable "
                       "here, so the cpu backend is used")
        name = "cpu"
    return name


def paddle_backend_variable(backend: Optional[str], fn: str) -> Dict[str, str]:
    """``PADDLE_DISTRI_BACKEND`` as paddle's launcher and spawn tell their ranks, for the backend
    ``backend`` names (or :func:`backend_name` picks): its CPU ranks' is ``gloo``."""
    name = backend_name(backend, fn)
    return {"PADDLE_DISTRI_BACKEND": "gloo" if name == "cpu" else name}


def _checked_seconds(value: float, what: str) -> float:
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise ValueError(f"{what}: it must be a positive, finite number of seconds, at most "
                         f"{MAX_TIMEOUT_S:g}")
    return float(value)


def timeout_seconds(timeout: Timeout, arg: str = "timeout") -> float:
    """``timeout`` (seconds or a timedelta) checked, else ``PYCOLL_TIMEOUT``, else the default.
    NaN, infinite, negative and absurdly large values are refused, naming where they came from."""
    if timeout is None:
        raw = os.environ.get("PYCOLL_TIMEOUT")
        if raw is None:
            return DEFAULT_TIMEOUT_S
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        return _checked_seconds(value, f"PYCOLL_TIMEOUT={raw!r}")
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise ValueError(f"{arg}={timeout!r}: it must be a number of seconds or a timedelta")
    return _checked_seconds(timeout, f"{arg}={timeout!r}")
