"""The workers' meeting in the rendezvous store: who is there, and leaving together.

Each worker claims its rank, publishes its :class:`WorkerInfo` (with the world size it was
started with) under ``pycoll/rpc/<generation>/`` and reads everyone's; the generation (how many
times this process has called ``init_rpc``) keeps a later meeting from reading an earlier one's
keys. Rank 0 hosts the store at the master endpoint (see :func:`meeting_store`). A store is kept for
the process's lifetime, as the rendezvous's is: a worker that leaves late never finds it gone,
and a later ``init_rpc`` at the same endpoint meets there again.
"""
from __future__ import annotations

import json
import os
import time
from typing import Dict, List, Tuple

from pycoll._errors import CollectiveError
from pycoll.distributed import rendezvous
from pycoll.distributed.rpc.worker_info import WorkerInfo
from pycoll.distributed.store import TCPStore

_stores: Dict[Tuple[str, int], TCPStore] = {}


def meeting_store(host: str, port: int, rank: int, timeout: float) -> TCPStore:
    """The store at ``host:port`` (hosted by rank 0), made once per process. At the job's
    ``MASTER_ADDR:MASTER_PORT``, or where this process's rendezvous store already is, it is that
    store (:func:`pycoll.distributed.rendezvous.rendezvous_store`), so the two never both try
    to serve one port."""
    env = {"MASTER_ADDR": host, "MASTER_PORT": str(port)}
    shared = rendezvous._store
    if (shared is not None and (shared.host, shared.port) == (host, port)) or \
            all(os.environ.get(k) == v for k, v in env.items()):
        return rendezvous.rendezvous_store(rank, timeout, env)
    if (host, port) not in _stores:
        _stores[(host, port)] = TCPStore(host, port, is_master=rank == 0, timeout=timeout)
    return _stores[(host, port)]


def meet(store: TCPStore, prefix: str, me: WorkerInfo, world: int, timeout: float) -> List[WorkerInfo]:
    """Every worker's info, by rank, once all ``world`` have published theirs. ValueError when a
    rank is claimed twice, names repeat or the world sizes differ; CollectiveError naming the
    ranks missing after ``timeout`` seconds."""
    if store.add(f"{prefix}/claim/{me.rank}", 1) > 1:
        raise ValueError(f"init_rpc: rank={me.rank} is already taken by another worker; give each "
                         f"worker its own rank in [0, {world})")
    store.set(f"{prefix}/worker/{me.rank}", json.dumps([*me, world]).encode())
    deadline = time.monotonic() + timeout
    found: List[list] = []
    for rank in range(world):
        try:
            found.append(json.loads(store.get(f"{prefix}/worker/{rank}", max(deadline - time.monotonic(), 0.0))))
        except CollectiveError:
            raise CollectiveError(f"init_rpc: the worker of rank {rank} (and maybe later ones) did not "
                                  f"join within {timeout:g} s at {store.where}; ranks 0..{rank - 1} "
                                  f"did") from None
    worlds = {entry[0]: entry[4] for entry in found}
    if len(set(worlds.values())) > 1:
        raise ValueError(f"init_rpc: the workers were given different world_size values "
                         f"(name: world_size): {worlds}; every worker needs the same")
    ranks_of: Dict[str, List[int]] = {}
    for name, rank, *_ in found:
        ranks_of.setdefault(name, []).append(rank)
    repeated = {name: ranks for name, ranks in ranks_of.items() if len(ranks) > 1}
    if repeated:
        raise ValueError(f"init_rpc: worker names must be unique, but {repeated} (name: ranks) are "
                         f"repeated")
    return [WorkerInfo(name, rank, ip, port) for name, rank, ip, port, _ in found]


def leave_together(store: TCPStore, prefix: str, rank: int, world: int, timeout: float) -> None:
    """Return once all ``world`` workers have called this; rank 0 returns last, so its process,
    which serves the store, never leaves while another still waits on it."""
    if world == 1:
        return
    store.barrier(world, f"{prefix}/shutdown", timeout)
    if rank != 0:
        if store.add(f"{prefix}/left", 1) == world - 1:
            store.set(f"{prefix}/all_left", b"1")
        return
    try:
        store.get(f"{prefix}/all_left", timeout)
    except CollectiveError:
        raise CollectiveError(f"rpc shutdown: only {store.add(f'{prefix}/left', 0)} of the other "
                              f"{world - 1} workers got past the shutdown within {timeout:g} s") from None
