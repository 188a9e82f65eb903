"""Starting the NCCL world: where this rank sits, its GPU, and the shared NCCL unique id.

Two ways ranks are started, two ways the id travels:

- under MPI (``python -m pycoll.launch``, ``mpiexec``, ``srun``; seen from ``PMI_RANK`` and
  its kin, or from an MPI already running with more than one rank): rank and world size are
  MPI's, the local rank is ``MPI_LOCALRANKID`` (Hydra) / ``OMPI_COMM_WORLD_LOCAL_RANK``, else
  the rank among the processes sharing this node; rank 0's id reaches the others through an
  MPI broadcast on ``COMM_WORLD``;
- torchrun-style (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``):
  rank 0 hosts a :class:`~pycoll.distributed.store.TCPStore` and publishes the id in it.

With neither, the process is a world of one. Nothing here imports CuPy or mpi4py until it is used.
"""
from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, ContextManager, Mapping, Optional, Tuple

from pycoll._errors import CollectiveError
from pycoll._logging import logger
from pycoll.distributed.placement import int_var, local_world_size, placement, under_mpi, with_slurm

_store: Any = None  # the process's rendezvous store, kept for its lifetime (rank 0 serves it)
_generation = 0  # NCCL worlds made by this process: keys of a later world never meet stale ids


def _new_unique_id() -> bytes:
    from pycoll.backends.nccl import new_unique_id

    return new_unique_id()


def _id_through_mpi(rank: int, timeout: float) -> bytes:
    import numpy as np
    from mpi4py import MPI

    from pycoll.backends.nccl import UNIQUE_ID_BYTES

    buf = np.zeros(UNIQUE_ID_BYTES, np.uint8)
    if rank == 0:
        buf[:] = np.frombuffer(_new_unique_id(), np.uint8)
    request = MPI.COMM_WORLD.Ibcast([buf, MPI.BYTE], root=0)
    deadline = time.monotonic() + timeout
    while not request.Test():
        if time.monotonic() > deadline:
            raise CollectiveError(f"rank {rank} did not receive the NCCL unique id from rank 0 "
                                  f"through MPI within {timeout:g} s (did rank 0 start the GPU "
                                  f"backend too?)")
        time.sleep(1e-3)
    return buf.tobytes()


def _master_address(env: Mapping[str, str]) -> Tuple[str, int]:
    host = env.get("MASTER_ADDR")
    if not host:
        raise ValueError("MASTER_ADDR is not set; the ranks meet at MASTER_ADDR:MASTER_PORT "
                         "(the host of rank 0 and a free port), as under torchrun")
    port = int_var(env, "MASTER_PORT", low=1)
    if port is None or port > 65535:
        raise ValueError(f"MASTER_PORT={env.get('MASTER_PORT')!r}: set it to a free TCP port in "
                         f"[1, 65535] on the host of rank 0")
    return host, port


def rendezvous_store(rank: int, timeout: float, env: Mapping[str, str] = os.environ) -> Any:
    """The process's store at ``MASTER_ADDR:MASTER_PORT`` (hosted by rank 0), made once."""
    global _store
    host, port = _master_address(with_slurm(env))
    if _store is not None and (_store.host, _store.port) == (host, port):
        return _store
    from pycoll.distributed.store import TCPStore

    _store = TCPStore(host, port, is_master=rank == 0, timeout=timeout)
    return _store


def _id_through_store(rank: int, world: int, timeout: float) -> bytes:
    """Rank 0 publishes the id and returns once every rank has it: its process serves the
    store, and a rank that never comes shows here, as a timeout, not as a hang in NCCL."""
    store = rendezvous_store(rank, timeout)
    key = f"pycoll/nccl/{_generation}"
    if rank == 0:
        uid = _new_unique_id()
        store.set(f"{key}/world", str(world).encode())
        store.set(f"{key}/unique_id", uid)
        try:
            store.get(f"{key}/all_fetched", timeout)
        except CollectiveError:
            fetched = store.add(f"{key}/fetched", 0)
            raise CollectiveError(f"only {fetched} of the {world - 1} other ranks fetched the NCCL "
                                  f"unique id from the store at {store.where} within {timeout:g} s") from None
        return uid
    theirs = int(store.get(f"{key}/world", timeout))
    if theirs != world:
        raise ValueError(f"WORLD_SIZE={world} on rank {rank} but {theirs} on rank 0; every rank "
                         f"must be started with the same WORLD_SIZE")
    uid = store.get(f"{key}/unique_id", timeout)
    if store.add(f"{key}/fetched", 1) == world - 1:
        store.set(f"{key}/all_fetched", b"1")
    return uid


def nccl_unique_id(rank: int, world: int, timeout: float) -> bytes:
    """Rank 0's fresh NCCL unique id, on every rank (collective over the ``world`` ranks).

    It travels through MPI under MPI, else through the store at ``MASTER_ADDR:MASTER_PORT``.
    """
    global _generation
    _generation += 1
    if world == 1:
        return _new_unique_id()
    if under_mpi():
        return _id_through_mpi(rank, timeout)
    return _id_through_store(rank, world, timeout)


def select_device(local_rank: int) -> int:
    """Make GPU ``local_rank`` modulo the visible count current; returns its index."""
    if isinstance(local_rank, bool) or not isinstance(local_rank, int) or local_rank < 0:
        raise ValueError(f"local_rank={local_rank!r}: it must be an int >= 0 (LOCAL_RANK / MPI_LOCALRANKID)")
    import cupy

    count = cupy.cuda.runtime.getDeviceCount()
    if count < 1:
        raise RuntimeError(f"no CUDA device is visible (CUDA_VISIBLE_DEVICES="
                           f"{os.environ.get('CUDA_VISIBLE_DEVICES')!r})")
    device = local_rank % count
    cupy.cuda.Device(device).use()
    return device


def _separate_hosts_when_sharing_a_gpu(rank: int) -> None:
    """NCCL refuses two ranks on one GPU; when this node runs more ranks than it has GPUs (tests,
    small machines) and NCCL_HOSTID is unset, give each rank a host id of its own, so NCCL treats
    them as separate hosts and connects them through its socket transport. Must run before
    NCCL initialises (it reads its environment once)."""
    local_ranks = local_world_size()
    import cupy

    if local_ranks > cupy.cuda.runtime.getDeviceCount() and not os.environ.get("NCCL_HOSTID"):
        os.environ["NCCL_HOSTID"] = f"pycoll-{os.uname().nodename}-rank{rank}"
        logger.info("%d ranks share this node's GPUs: NCCL_HOSTID=%s (NCCL's socket transport)",
                    local_ranks, os.environ["NCCL_HOSTID"])


def make_nccl_world(timeout: float, bounded: Optional[Callable[[int, int], ContextManager[Any]]] = None
                    ) -> Tuple[Any, int, int]:
    """``(NCCLBackend, rank, world)`` over every rank of the job, on this rank's GPU.

    Collective over the job; ``timeout`` bounds the rendezvous and the backend's host waits.
    NCCL's own communicator set-up, once every rank has the id, runs inside
    ``bounded(rank, world)`` when given (the watchdog's guard); nothing bounds it otherwise.
    """
    from pycoll.backends.nccl import NCCLBackend

    where = placement()
    device = select_device(where.local_rank)
    _separate_hosts_when_sharing_a_gpu(where.rank)
    uid = nccl_unique_id(where.rank, where.world, timeout)
    with bounded(where.rank, where.world) if bounded is not None else contextlib.nullcontext():
        backend = NCCLBackend.create(where.world, uid, where.rank, timeout)
    logger.info("rank %d of %d started (nccl backend on GPU %d, rendezvous via %s)",
                where.rank, where.world, device, where.via)
    return backend, where.rank, where.world
