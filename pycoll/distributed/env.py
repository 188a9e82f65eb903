"""The parallel environment: starting the engine, the world group, sub-groups and rank queries."""
from __future__ import annotations

import atexit
import os
from collections.abc import Mapping
from typing import Any, ContextManager, Dict, List, Optional, Tuple

import numpy as np

from pycoll._errors import CollectiveError, NotAMemberError, NotInitializedError
from pycoll._logging import logger
from pycoll.device import current_place, gpu_count, set_device
from pycoll.distributed import _failure, exits, startup
from pycoll.distributed.group import Group, as_rank
from pycoll.distributed.placement import (LOCAL_RANK_VARS, RANK_VARS, SIZE_VARS, Timeout, backend_name,
                                          first_int, mpi_running, timeout_seconds, with_slurm)
from pycoll.distributed.task import drain, take_failure
from pycoll.distributed.unreceived import report_unreceived
from pycoll.distributed.watchdog import watchdog

_world: Optional[Group] = None
_groups: Dict[int, Group] = {}
_next_group_id = 1


def init_parallel_env(backend: Optional[str] = None, timeout: Timeout = None,
                      nccl_config: Optional[Mapping[str, Any]] = None) -> Group:
    """Start the parallel environment and return the world group (idempotent).

    Ranks are MPI processes, started by ``python -m pycoll.launch``, ``pycoll.distributed.spawn``,
    ``mpiexec -n N`` or ``srun``; a plain ``python script.py`` is a world of one.
    ``timeout`` (seconds or timedelta) bounds every wait; it defaults to ``PYCOLL_TIMEOUT`` or 1800.
    ``nccl_config`` is paddle's NCCL tuning of the world's communicator (``create_nccl_config``'s
    dict of buffer sizes, channels, algorithm and protocol; paddle's only parameter, so a dict
    given first is taken as it). It changes no result: the cpu backend has no NCCL and ignores
    it, and on nccl CuPy's communicator takes no configuration, so a config that sets anything
    is said (a warning) not to be applied.
    """
    global _world
    if isinstance(backend, Mapping) and nccl_config is None:  # paddle's init_parallel_env(nccl_config)
        backend, nccl_config = None, backend
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"init_parallel_env: backend must be a str ('cpu', 'gloo' or 'nccl') or None, "
                        f"got {type(backend).__name__}")
    if _world is not None:
        return _world
    name = backend_name(backend)
    seconds = timeout_seconds(timeout, "timeout")
    _nccl_config_unused(nccl_config, name, "init_parallel_env")
    with startup.bounded(seconds):
        world = _start_nccl(seconds) if name == "nccl" else _start_mpi(seconds)
        notices = None
        if mpi_running() and world.nranks > 1:
            _failure.install_hooks()
            from mpi4py import MPI

            notices = exits.ExitNotices(MPI.COMM_WORLD.Dup(), seconds)
            notices.last_look = lambda: report_unreceived(tuple(_groups.values()))
    if world.nranks > 1:
        watchdog.start(notices, groups=lambda: tuple(_groups.values()))
    _world = world
    _groups[0] = world
    atexit.unregister(_finish_pending)
    atexit.register(_finish_pending)  # after the exit notice's registration: runs before it
    return world


def _finish_pending() -> None:
    """At exit: wait for the work in flight of every group, so that its engine never writes into
    memory the interpreter is releasing (an error is logged, and the job then aborts). The error
    of a dropped task that no later collective raised is said in a warning."""
    for group in list(_groups.values()):
        if group.engine is None:
            continue
        try:
            drain(group)
            unraised = take_failure(group)
            if unraised is not None:
                logger.warning("a task nobody waited for failed on %s, and no later collective on the "
                               "group raised it: %s", group.describe(), unraised)
        except CollectiveError as exc:
            logger.error("at exit, work still in flight on %s failed: %s", group.describe(), exc)
            # the job then aborts (a collective failed): the launcher names this as the reason
            _failure.report(f"pycoll.CollectiveError: at exit, work still in flight on {group.describe()} "
                            f"failed: {exc}", 1)


def _announced_sizes() -> List[Tuple[str, int]]:
    """The world sizes a launcher's variables announce: torchrun's ``WORLD_SIZE`` (or SLURM's
    for it), paddle's ``PADDLE_TRAINERS_NUM`` and its endpoint list ``PADDLE_TRAINER_ENDPOINTS``."""
    env = with_slurm(os.environ)
    sizes = []
    for name in ("WORLD_SIZE", "PADDLE_TRAINERS_NUM"):
        value = first_int((name,), env)
        if value is not None:
            sizes.append((f"{name}={value}", value))
    endpoints = [e for e in env.get("PADDLE_TRAINER_ENDPOINTS", "").split(",") if e.strip()]
    if endpoints:
        sizes.append((f"PADDLE_TRAINER_ENDPOINTS names {len(endpoints)} rank(s)", len(endpoints)))
    return sizes


def _check_world(size: int, formed: str, how: str) -> None:
    """RuntimeError when a launcher variable announces another world than the ``size`` ranks the
    engine ``formed``: processes started one by one with such variables would each be a world of
    their own, and every collective would silently return its own data."""
    for said, expected in _announced_sizes():
        if expected != size:
            raise RuntimeError(f"{said} but {formed} {size} process(es): {how}")


def _start_mpi(seconds: float) -> Group:
    from mpi4py import MPI

    from pycoll.backends.mpi import MPIBackend

    comm = MPI.COMM_WORLD
    _check_world(comm.Get_size(), "MPI started",
                 "the cpu backend's ranks must be started by an MPI launcher (python -m pycoll.launch, "
                 "mpiexec -n N, or srun --mpi=pmi2 where the MPI library supports it), not one by one")
    logger.info("rank %d of %d started (cpu backend over %s)", comm.Get_rank(), comm.Get_size(),
                MPI.Get_library_version().splitlines()[0].strip())
    return Group(0, list(range(comm.Get_size())), comm.Get_rank(), MPIBackend(comm.Dup(), seconds), seconds)


def _start_nccl(seconds: float) -> Group:
    from pycoll.distributed.rendezvous import make_nccl_world

    def bounded(rank: int, world: int) -> ContextManager[None]:
        # NCCL's communicator set-up waits for every rank without a limit of its own
        if world > 1:
            watchdog.start()
        return watchdog.guard(Group(0, list(range(world)), rank, None, seconds), "NCCL communicator set-up")

    backend, rank, world = make_nccl_world(seconds, bounded)
    _check_world(world, "the nccl backend's ranks formed a world of",
                 "start the ranks with an MPI launcher (python -m pycoll.launch, mpiexec -n N), or set "
                 "torchrun's RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT on each")
    set_device(f"gpu:{backend.device}")  # tensors are created on this rank's GPU from now on
    return Group(0, list(range(world)), rank, backend, seconds)


def is_initialized() -> bool:
    return _world is not None


def world_group(fn: str) -> Group:
    """The world group; a clear error when the environment has not been started."""
    if _world is None:
        raise NotInitializedError(f"pycoll.distributed.{fn}: the parallel environment is not initialized; "
                         f"call pycoll.distributed.init_parallel_env() first")
    return _world


_told_outside: set = set()  # ids of the groups whose calls this rank has said it skips


def outside(group: Optional[Group], fn: str) -> bool:
    """Whether this rank is outside ``group``: paddle's and torch's collectives then return at
    once, so that scripts may call them on every rank. Said once per group, at DEBUG level."""
    if not isinstance(group, Group) or group.rank >= 0:
        return False
    if group.id not in _told_outside:
        _told_outside.add(group.id)
        logger.debug("%s: this rank is not in %s; its calls on that group return at once "
                     "(this is said once per group)", fn, group.describe())
    return True


def not_a_member(group: Group, fn: str) -> RuntimeError:
    """The error of a call that paddle refuses on a rank outside ``group`` (``all_gather``,
    ``all_gather_object``), where its other collectives return at once."""
    return RuntimeError(f"pycoll.distributed.{fn}: rank {world_group(fn).rank} is not a member of "
                        f"{group.describe()}; all ranks which invoke this operation should be members "
                        f"of the group (paddle's rule)")


def _as_group(group: Any, fn: str) -> Group:
    if not isinstance(group, Group):
        raise TypeError(f"pycoll.distributed.{fn}: group must be a Group from new_group() or None (the world), "
                        f"got {type(group).__name__}")
    return group


def member_group(group: Optional[Group], fn: str) -> Group:
    """``group`` (or the world), which this rank must belong to."""
    if group is None:
        return world_group(fn)
    if _as_group(group, fn).engine is None:
        world = world_group(fn)
        if group.rank < 0:
            raise NotAMemberError(f"pycoll.distributed.{fn}: rank {world.rank} is not in {group.describe()}; "
                                  f"only its members may call collectives on it")
        raise NotAMemberError(f"pycoll.distributed.{fn}: {group.describe()}"
                              + ("" if group.shut_down else " has been destroyed"))
    return group


def get_rank(group: Optional[Group] = None) -> int:
    """This process's rank in ``group`` (the world by default); -1 when not a member."""
    if group is not None:
        return _as_group(group, "get_rank").rank
    return _world.rank if _world is not None else ParallelEnv().rank


def get_world_size(group: Optional[Group] = None) -> int:
    """The number of ranks in ``group`` (the world by default); -1 when not a member (paddle's)."""
    if group is not None:
        return _as_group(group, "get_world_size").world_size
    return _world.nranks if _world is not None else ParallelEnv().world_size


NCCL_CONFIG_KEYS = ("commName", "ll_buffsize", "ll128_buffsize", "simple_buffsize", "buffsize_align", "nchannels",
                    "algoStr", "protoStr")


def create_nccl_config(nccl_config: Optional[Mapping[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """paddle's NCCL tuning for one group (buffer sizes, channels, algorithm, protocol), for
    ``new_group(nccl_config=...)`` and ``init_parallel_env(nccl_config=...)``: the dict (or a
    fleet strategy's ``nccl_config``, paddle's message) checked for paddle's keys, or None."""
    if nccl_config is None:
        return None
    if not isinstance(nccl_config, Mapping):
        raise TypeError(f"create_nccl_config: nccl_config must be a dict or None, got {type(nccl_config).__name__}")
    unknown = sorted(set(nccl_config) - set(NCCL_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"create_nccl_config: unknown keys {unknown}; paddle's are {list(NCCL_CONFIG_KEYS)}")
    return dict(nccl_config)


def _nccl_config_unused(nccl_config: Any, backend: str, fn: str) -> None:
    """Check ``nccl_config`` and, on nccl, warn when it asks for any tuning: CuPy's communicator
    takes no configuration. Unset entries (0, "") and ``commName`` (a name) ask for nothing;
    the cpu backend has no NCCL to tune."""
    config = create_nccl_config(nccl_config)
    if config is None or backend != "nccl":
        return
    asked = sorted(k for k, v in config.items() if k != "commName" and v not in (0, ""))
    if asked:
        logger.warning("%s: nccl_config %s is not applied (CuPy's NCCL communicator takes no configuration); "
                       "NCCL's environment variables (NCCL_ALGO, NCCL_PROTO, NCCL_BUFFSIZE, NCCL_MAX_NCHANNELS) "
                       "tune every group", fn, {k: config[k] for k in asked})


def new_group(ranks: Optional[List[int]] = None, backend: Optional[str] = None,
              timeout: Timeout = None, nccl_comm_init_option: int = 0,
              nccl_config: Optional[Mapping[str, Any]] = None) -> Group:
    """A sub-group over the global ``ranks`` (sorted; all ranks by default; any integers, NumPy's
    too, or a NumPy array of them, as paddle takes them).

    On the cpu backend only its members need to call it (paddle's allows that; the others may
    call it too and get a Group they are not a member of); on nccl every rank of the world must
    call it, in the same order as the other ``new_group`` calls (NCCL's ``ncclCommSplit``).
    ``nccl_comm_init_option`` and ``nccl_config`` (``create_nccl_config``'s) tune how paddle sets up
    NCCL; they change no result. The cpu backend has no NCCL to tune, and on nccl CuPy's
    communicator takes no per-group configuration: a given ``nccl_config`` is said to be unused.
    """
    global _next_group_id
    world = world_group("new_group")
    backend_name(backend, "new_group")
    _nccl_config_unused(nccl_config, world.backend_name, "new_group")
    seconds = timeout_seconds(timeout, "timeout") if timeout is not None else world.timeout
    if ranks is not None and not isinstance(ranks, (list, tuple, range, np.ndarray)):
        raise TypeError(f"pycoll.distributed.new_group: ranks must be a list of ints, got {type(ranks).__name__}")
    members = list(range(world.nranks)) if ranks is None else [
        as_rank(r, "pycoll.distributed.new_group", f"ranks[{i}]") for i, r in enumerate(ranks)]
    for r in members:
        if not 0 <= r < world.nranks:
            raise ValueError(f"pycoll.distributed.new_group: ranks contains {r}; every entry must be "
                             f"a global rank in [0, {world.nranks})")
    if len(set(members)) != len(members):
        raise ValueError(f"pycoll.distributed.new_group: ranks {list(members)} has duplicates")
    members = sorted(members)
    try:  # an empty list is paddle's group of no rank: no communicator, every call on it does nothing
        engine = engine_over(members, seconds, "new_group", _next_group_id) if members else None
    except ValueError:  # the rank lists disagree (engine_over says how): no communicator trouble
        raise
    except Exception as exc:
        raise _split_failed(exc) from exc
    group = Group(_next_group_id, members, world.rank, engine, seconds)
    _groups[group.id] = group
    _next_group_id += 1
    return group


def engine_over(members: List[int], seconds: float, fn: str, gid: Optional[int] = None) -> Any:
    """A new engine over the sorted global ``members`` made from the world's (None on a rank
    outside them): by the members alone on the cpu backend (MPI), by every rank of the world on
    nccl (a split of its communicator, numbered and bounded as a collective over the world).

    ``gid`` is the id the group will have (``new_group``'s): on the cpu backend the wait is then
    watched as call #0 of that group in the making, bounded by ``seconds``, and the stall
    notices tell it as a collective of its members, so that a member waiting there while
    another waits elsewhere (having refused the call that made the group, say) ends the job in
    seconds, not at the timeout."""
    world = world_group(fn)
    member = world.rank in members
    members_only = hasattr(world.engine, "group_of")
    if not members_only:
        world.seq += 1
    making = Group(gid, members, world.rank, world.engine, seconds) if members_only and gid is not None else world
    with watchdog.guard(making, fn):
        if members_only:
            return world.engine.group_of(members, seconds) if member else None
        # the color is the list's first rank, so that ranks that name different lists (each its
        # own, say) get their own communicators, as the cpu backend's group_of gives them
        engine = world.engine.split(member, members.index(world.rank) if member else 0, seconds, color=members[0])
    if engine is not None and engine.size != len(members):
        engine.free()
        raise ValueError(f"{fn}: this rank asked for a group of ranks {members}, but the communicator made has "
                         f"{engine.size} ranks: the ranks called {fn} with different rank lists (call it on every "
                         "rank with the same ranks, in the same order of calls)")
    return engine


def _split_failed(exc: BaseException) -> CollectiveError:
    """The error of a ``new_group`` whose communicator could not be made (MPI's stack of messages
    cut to its last line, the cause). The world stays usable."""
    live = sum(1 for g in _groups.values() if g.engine is not None)
    cause = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
    return CollectiveError(
        f"new_group #{_next_group_id} failed: {cause}. This rank holds {live} live groups (the "
        f"world included); an MPI library runs out of communicators after a few thousand: release "
        f"the groups you no longer use with destroy_process_group(group)")


def get_backend(group: Optional[Group] = None) -> str:
    """The name of ``group``'s backend (the world's by default), as paddle spells it: ``"NCCL"``
    for nccl, ``"GLOO"`` for the cpu backend (pycoll's runs on MPI where paddle's runs on gloo)."""
    return member_group(group, "get_backend").backend


def get_group(id: int = 0) -> Optional[Group]:  # noqa: A002 (paddle's argument name)
    """The group with id ``id`` (0 is the world), or None."""
    return _groups.get(id)


def group_of(group: Any, fn: str) -> Optional[Group]:
    """``group`` as a Group: a Group, None, or a group's ``process_group`` (paddle's examples
    pass ``group.process_group`` to DataParallel); TypeError naming ``fn`` otherwise."""
    if group is None or isinstance(group, Group):
        return group
    for known in _groups.values():
        if known.engine is not None and known.engine is group:
            return known
    raise TypeError(f"{fn}: group must be a pycoll.distributed.Group (or its process_group), "
                    f"got {type(group).__name__}")


def destroy_process_group(group: Optional[Group] = None) -> None:
    """Release ``group``'s communicator, once its work in flight is complete; with no argument,
    every group and the environment."""
    global _world, _next_group_id
    if group is not None and not isinstance(group, Group):
        raise TypeError(f"destroy_process_group: group must be a Group or None (every group), "
                        f"got {type(group).__name__}")
    if group is not None and _groups.get(group.id) is not group:  # torch's ValueError; paddle asserts
        raise ValueError(f"destroy_process_group: group={group} was destroyed already (or belongs to an "
                         f"environment destroyed since)")
    doomed = list(_groups.values()) if group is None else [group]
    for g in doomed:
        if g.engine is not None:
            drain(g)
            g.engine.free()
            g.engine = None
        _groups.pop(g.id, None)
    if group is None or group is _world:
        _world = None
        _groups.clear()
        _next_group_id = 1


class ParallelEnv:
    """Where this process sits in the job (paddle's ``ParallelEnv``).

    Before ``init_parallel_env`` the values come from the launcher's environment
    (``RANK``/``WORLD_SIZE``/``LOCAL_RANK``, MPI's ``PMI_RANK``/``PMI_SIZE``/``MPI_LOCALRANKID``,
    or paddle's ``PADDLE_TRAINER_ID``/``PADDLE_TRAINERS_NUM``/``PADDLE_RANK_IN_NODE``).
    """

    @property
    def rank(self) -> int:
        if _world is not None:
            return _world.rank
        return first_int(RANK_VARS) or 0

    @property
    def world_size(self) -> int:
        if _world is not None:
            return _world.nranks
        return first_int(SIZE_VARS) or 1

    @property
    def nranks(self) -> int:
        return self.world_size

    @property
    def local_rank(self) -> int:
        """This rank's index on its node, from the first of ``LOCAL_RANK``, MPI's local rank,
        paddle's ``PADDLE_RANK_IN_NODE`` / ``PADDLE_LOCAL_RANK`` and ``SLURM_LOCALID`` that is set.
        (paddle 3.3.1's ``ParallelEnv.local_rank`` is an old alias of ``rank``: the same value on
        one node, where pycoll's stays the node's index on several, for ``device_id`` and
        ``fleet.local_rank()``.)"""
        return first_int(LOCAL_RANK_VARS) or 0

    @property
    def device_id(self) -> int:
        """The GPU this rank uses: its engine's once started, else the first of paddle's
        ``FLAGS_selected_gpus`` when set, else its local rank modulo the visible GPUs; 0 on a
        CPU-only run."""
        if _world is not None and _world.engine is not None:
            return _world.engine.device or 0
        selected = os.environ.get("FLAGS_selected_gpus", "").split(",")[0].strip()
        if selected.isdigit():
            return int(selected)
        count = gpu_count()
        return self.local_rank % count if count else 0

    @property
    def device_type(self) -> str:
        """``"gpu"`` when this rank's collectives run on GPUs (nccl), else ``"cpu"``; before
        ``init_parallel_env``, the current device's kind (which picks the default backend)."""
        if _world is not None and _world.engine is not None:
            return "gpu" if _world.engine.name == "nccl" else "cpu"
        return current_place()[0]

    @property
    def nrings(self) -> int:
        """paddle's NCCL ring count (``FLAGS_nccl_nrings``, default 1); NCCL chooses its own channels."""
        return int(os.environ.get("FLAGS_nccl_nrings", "1"))

    @property
    def pg_timeout(self) -> int:
        """paddle's process-group timeout in milliseconds (``PADDLE_PG_TIMEOUT``, default 1800000);
        pycoll's groups take theirs from ``PYCOLL_TIMEOUT`` (seconds)."""
        return int(os.environ.get("PADDLE_PG_TIMEOUT", "1800000"))

    @property
    def dev_id(self) -> int:
        return self.device_id

    @property
    def trainer_endpoints(self) -> List[str]:
        """Every rank's ``host:port``, in rank order (``PADDLE_TRAINER_ENDPOINTS``, which
        ``pycoll.launch`` and ``spawn`` set); empty when the launcher gave none."""
        value = os.environ.get("PADDLE_TRAINER_ENDPOINTS", "")
        return value.split(",") if value else []

    @property
    def current_endpoint(self) -> str:
        """This rank's ``host:port`` (``PADDLE_CURRENT_ENDPOINT``); empty when the launcher gave none."""
        return os.environ.get("PADDLE_CURRENT_ENDPOINT", "")

    def __repr__(self) -> str:
        return (f"ParallelEnv(rank={self.rank}, world_size={self.world_size}, "
                f"local_rank={self.local_rank}, device_id={self.device_id})")
