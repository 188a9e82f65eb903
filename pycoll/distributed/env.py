"""The parallel environment: starting the engine, the world group, sub-groups and rank queries."""
from __future__ import annotations

import datetime
import os
from typing import ContextManager, Dict, List, Optional, Union

from pycoll._logging import logger
from pycoll.device import current_place, gpu_count, set_device
from pycoll.distributed import _failure
from pycoll.distributed.exits import ExitNotices
from pycoll.distributed.group import Group
from pycoll.distributed.watchdog import watchdog

DEFAULT_TIMEOUT_S = 1800.0
BACKENDS = ("cpu", "nccl")

_world: Optional[Group] = None
_groups: Dict[int, Group] = {}
_next_group_id = 1

Timeout = Union[None, float, int, datetime.timedelta]


def _timeout_seconds(timeout: Timeout, arg: str) -> float:
    if timeout is None:
        raw = os.environ.get("PYCOLL_TIMEOUT")
        if raw is None:
            return DEFAULT_TIMEOUT_S
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if value <= 0:
            raise ValueError(f"PYCOLL_TIMEOUT={raw!r}: it must be a positive number of seconds")
        return value
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"{arg}={timeout!r}: it must be a positive number of seconds or a timedelta")
    return float(timeout)


def _backend_name(backend: Optional[str]) -> str:
    """The backend asked for (argument, else PYCOLL_BACKEND), else the one the device implies:
    nccl when the current device is a GPU, cpu otherwise. nccl without a usable GPU falls back
    to cpu with a log line."""
    name = (backend or os.environ.get("PYCOLL_BACKEND") or "").lower()
    if name == "gloo":  # paddle's name for its CPU backend
        name = "cpu"
    if name and name not in BACKENDS:
        raise ValueError(f"backend {name!r} (argument or PYCOLL_BACKEND) is not available; "
                         f"available: {', '.join(BACKENDS)}")
    if not name:
        name = "nccl" if current_place()[0] == "gpu" else "cpu"
    if name == "nccl" and gpu_count() == 0:
        logger.warning("pycoll: the nccl backend needs a visible GPU (with CuPy); none is usable "
                       "here, so the cpu backend is used")
        name = "cpu"
    return name


def _env_int(*names: str, default: int) -> int:
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return int(value)
    return default


def init_parallel_env(backend: Optional[str] = None, timeout: Timeout = None) -> Group:
    """Start the parallel environment and return the world group (idempotent).

    Ranks are MPI processes, started by ``python -m pycoll.launch``, ``pycoll.distributed.spawn``,
    ``mpiexec -n N`` or ``srun``; a plain ``python script.py`` is a world of one.
    ``timeout`` (seconds or timedelta) bounds every wait; it defaults to ``PYCOLL_TIMEOUT`` or 1800.
    """
    global _world
    if _world is not None:
        return _world
    name = _backend_name(backend)
    seconds = _timeout_seconds(timeout, "timeout")
    world = _start_nccl(seconds) if name == "nccl" else _start_mpi(seconds)
    exits = None
    if _failure.mpi_running() and world.nranks > 1:
        _failure.install_hooks()
        from mpi4py import MPI

        exits = ExitNotices(MPI.COMM_WORLD.Dup())
    if world.nranks > 1:
        watchdog.start(exits, groups=lambda: tuple(_groups.values()))
    _world = world
    _groups[0] = world
    return world


def _start_mpi(seconds: float) -> Group:
    from mpi4py import MPI

    from pycoll.backends.mpi import MPIBackend

    comm = MPI.COMM_WORLD
    expected = os.environ.get("WORLD_SIZE")
    if expected and int(expected) != comm.Get_size():
        raise RuntimeError(
            f"WORLD_SIZE={expected} but MPI started {comm.Get_size()} process(es): the cpu backend's "
            f"ranks must be started by an MPI launcher (python -m pycoll.launch, mpiexec -n N, srun)")
    logger.info("pycoll: rank %d of %d started (cpu backend over %s)", comm.Get_rank(), comm.Get_size(),
                MPI.Get_library_version().splitlines()[0].strip())
    return Group(0, list(range(comm.Get_size())), comm.Get_rank(), MPIBackend(comm.Dup()), seconds)


def _start_nccl(seconds: float) -> Group:
    from pycoll.distributed.rendezvous import make_nccl_world

    def bounded(rank: int, world: int) -> ContextManager[None]:
        # NCCL's communicator set-up waits for every rank without a limit of its own
        if world > 1:
            watchdog.start()
        return watchdog.guard(Group(0, list(range(world)), rank, None, seconds), "NCCL communicator set-up")

    backend, rank, world = make_nccl_world(seconds, bounded)
    set_device(f"gpu:{backend.device}")  # tensors are created on this rank's GPU from now on
    return Group(0, list(range(world)), rank, backend, seconds)


def is_initialized() -> bool:
    return _world is not None


def world_group(fn: str) -> Group:
    """The world group; a clear error when the environment has not been started."""
    if _world is None:
        raise ValueError(f"pycoll.distributed.{fn}: the parallel environment is not initialized; "
                         f"call pycoll.distributed.init_parallel_env() first")
    return _world


def member_group(group: Optional[Group], fn: str) -> Group:
    """``group`` (or the world), which this rank must belong to."""
    if group is None:
        return world_group(fn)
    if not isinstance(group, Group):
        raise TypeError(f"pycoll.distributed.{fn}: group must be a Group from new_group() or None, "
                        f"got {type(group).__name__}")
    if group.backend is None:
        world = world_group(fn)
        if group.rank < 0:
            raise ValueError(f"pycoll.distributed.{fn}: rank {world.rank} is not in {group.describe()}; "
                             f"only its members may call collectives on it")
        raise ValueError(f"pycoll.distributed.{fn}: {group.describe()} has been destroyed")
    return group


def get_rank(group: Optional[Group] = None) -> int:
    """This process's rank in ``group`` (the world by default); -1 when not a member."""
    if group is not None:
        return group.rank
    return _world.rank if _world is not None else ParallelEnv().rank


def get_world_size(group: Optional[Group] = None) -> int:
    """The number of ranks in ``group`` (the world by default)."""
    if group is not None:
        return group.nranks
    return _world.nranks if _world is not None else ParallelEnv().world_size


def new_group(ranks: Optional[List[int]] = None, backend: Optional[str] = None,
              timeout: Timeout = None) -> Group:
    """A sub-group over the global ``ranks`` (sorted; all ranks by default).

    Every rank of the world must call it, in the same order as the other ``new_group`` calls
    (as in torch and paddle); ranks outside ``ranks`` get a Group they are not a member of.
    """
    global _next_group_id
    world = world_group("new_group")
    _backend_name(backend)
    seconds = _timeout_seconds(timeout, "timeout") if timeout is not None else world.timeout
    members = list(range(world.nranks)) if ranks is None else ranks
    if not isinstance(members, (list, tuple, range)):
        raise TypeError(f"pycoll.distributed.new_group: ranks must be a list of ints, got {type(ranks).__name__}")
    for r in members:
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < world.nranks:
            raise ValueError(f"pycoll.distributed.new_group: ranks contains {r!r}; every entry must be "
                             f"a global rank in [0, {world.nranks})")
    if len(set(members)) != len(members):
        raise ValueError(f"pycoll.distributed.new_group: ranks {list(members)} has duplicates")
    if not members:
        raise ValueError("pycoll.distributed.new_group: ranks is empty")
    members = sorted(members)
    member = world.rank in members
    world.seq += 1  # a collective over the world, bounded like one
    with watchdog.guard(world, "new_group"):
        backend_obj = world.backend.split(member, members.index(world.rank) if member else 0)
    group = Group(_next_group_id, members, world.rank, backend_obj, seconds)
    _groups[group.id] = group
    _next_group_id += 1
    return group


def get_group(gid: int = 0) -> Optional[Group]:
    """The group with id ``gid`` (0 is the world), or None."""
    return _groups.get(gid)


def destroy_process_group(group: Optional[Group] = None) -> None:
    """Release ``group``'s communicator; with no argument, every group and the environment."""
    global _world, _next_group_id
    doomed = list(_groups.values()) if group is None else [group]
    for g in doomed:
        if g.backend is not None:
            g.backend.free()
            g.backend = None
        _groups.pop(g.id, None)
    if group is None or group is _world:
        _world = None
        _groups.clear()
        _next_group_id = 1


class ParallelEnv:
    """Where this process sits in the job (paddle's ``ParallelEnv``).

    Before ``init_parallel_env`` the values come from the launcher's environment
    (``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` or MPI's ``PMI_RANK``/``PMI_SIZE``/``MPI_LOCALRANKID``).
    """

    @property
    def rank(self) -> int:
        if _world is not None:
            return _world.rank
        return _env_int("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "PADDLE_TRAINER_ID", default=0)

    @property
    def world_size(self) -> int:
        if _world is not None:
            return _world.nranks
        return _env_int("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PADDLE_TRAINERS_NUM", default=1)

    @property
    def nranks(self) -> int:
        return self.world_size

    @property
    def local_rank(self) -> int:
        return _env_int("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", default=0)

    @property
    def device_id(self) -> int:
        """The GPU this rank uses (its local rank modulo the visible GPUs); 0 on a CPU-only run."""
        if _world is not None:
            return getattr(_world.backend, "device", 0)
        count = gpu_count()
        return self.local_rank % count if count else 0

    @property
    def dev_id(self) -> int:
        return self.device_id

    def __repr__(self) -> str:
        return (f"ParallelEnv(rank={self.rank}, world_size={self.world_size}, "
                f"local_rank={self.local_rank}, device_id={self.device_id})")
