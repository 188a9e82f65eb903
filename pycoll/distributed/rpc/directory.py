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
import socket
import time
from typing import Dict, List, Sequence, Tuple

from pycoll._errors import CollectiveError
from pycoll.distributed import rendezvous
from pycoll.distributed.rpc.worker_info import WorkerInfo
from pycoll.distributed.store import TCPStore

_stores: Dict[Tuple[str, int], TCPStore] = {}
_LIVENESS_POLL_S = 1.0  # how often a wait for every worker checks that the missing ones still serve


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
    ranks missing after ``timeout`` seconds, or saying that rank 0's store was lost."""
    doing = "init_rpc"
    try:
        claims = store.add(f"{prefix}/claim/{me.rank}", 1)
        if claims == 1:
            store.set(f"{prefix}/worker/{me.rank}", json.dumps([*me, world]).encode())
    except CollectiveError as exc:
        raise _store_lost(doing, store, exc) from None
    if claims > 1:
        raise ValueError(f"init_rpc: rank={me.rank} is already taken by another worker; give each "
                         f"worker its own rank in [0, {world})")
    deadline = time.monotonic() + timeout
    found: List[list] = []
    for rank in range(world):
        try:
            found.append(json.loads(store.get(f"{prefix}/worker/{rank}", max(deadline - time.monotonic(), 0.0))))
        except CollectiveError as exc:
            raise _failed_wait(doing, "joined", store, exc, f"{prefix}/claim", world, timeout) from None
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


def leave_together(store: TCPStore, key: str, rank: int, world: int, timeout: float, doing: str,
                   workers: Sequence[WorkerInfo] = ()) -> None:
    """Return once all ``world`` workers have called this with ``key`` (at most ``timeout``
    seconds); rank 0 returns last, so its process, which serves the store, never leaves while
    another still waits on it. ``doing`` (the API) heads the errors: the ranks that did not
    arrive, or the store lost (rank 0 gone). With ``workers`` (every worker's info, by rank), a
    worker that has not arrived and whose RPC server no longer listens (its process exited)
    ends the wait within a second or so instead of at the timeout."""
    if world == 1:
        return
    deadline = time.monotonic() + timeout
    try:
        store.add(f"{key}/arrived/{rank}", 1)
        if store.add(f"{key}/count", 1) == world:
            store.set(f"{key}/all_arrived", b"1")
    except CollectiveError as exc:
        raise _store_lost(doing, store, exc) from None
    _wait_for(store, f"{key}/all_arrived", deadline, doing, "arrived", f"{key}/arrived", world, timeout, workers)
    try:
        store.add(f"{key}/past/{rank}", 1)
        if rank != 0:
            if store.add(f"{key}/left", 1) == world - 1:
                store.set(f"{key}/all_left", b"1")
            return
    except CollectiveError as exc:
        raise _store_lost(doing, store, exc) from None
    _wait_for(store, f"{key}/all_left", deadline, doing, "got past it", f"{key}/past", world, timeout, workers)


def _wait_for(store: TCPStore, done: str, deadline: float, doing: str, verb: str, marks: str, world: int,
              timeout: float, workers: Sequence[WorkerInfo]) -> None:
    """Wait until ``done`` is set: at most until ``deadline``, or until a worker without its mark
    (``marks/<rank>``) is found to have exited (see :func:`leave_together`)."""
    while True:
        left = deadline - time.monotonic()
        try:
            store.get(done, max(min(left, _LIVENESS_POLL_S if workers else left), 0.0))
            return
        except CollectiveError as exc:
            if not workers or left <= _LIVENESS_POLL_S:
                raise _failed_wait(doing, verb, store, exc, marks, world, timeout) from None
            try:
                missing = _unmarked(store, marks, world)
            except CollectiveError:
                raise _store_lost(doing, store, exc) from None
            gone = [workers[rank] for rank in missing if not _listening(workers[rank])]
            if gone:
                raise CollectiveError(
                    f"{doing}: the worker(s) {[(w.name, w.rank) for w in gone]} (name, rank) exited before "
                    f"reaching it (their RPC servers no longer listen); every worker must call "
                    f"{doing} before its process ends") from None


def _listening(worker: WorkerInfo) -> bool:
    """False when ``worker``'s RPC server refuses a connection (its process is gone); True when
    it accepts one, or when it cannot be told (a slow network: the wait goes on)."""
    try:
        socket.create_connection((worker.ip, worker.port), timeout=_LIVENESS_POLL_S).close()
    except ConnectionRefusedError:
        return False
    except OSError:
        pass
    return True


def _failed_wait(doing: str, verb: str, store: TCPStore, exc: CollectiveError, marks: str, world: int,
                 timeout: float) -> CollectiveError:
    """The error of a wait for every worker that ended in ``exc``: the ranks whose mark
    (``marks/<rank>``, counted with add) is missing after ``timeout`` s, or the store lost."""
    try:
        missing = _unmarked(store, marks, world)
    except CollectiveError:
        return _store_lost(doing, store, exc)
    if not missing:  # the last one came just after the wait ended
        return CollectiveError(f"{doing}: {exc}")
    return CollectiveError(f"{doing}: the worker(s) of rank(s) {missing} had not {verb} within "
                           f"{timeout:g} s at {store.where}; {world - len(missing)} of {world} had")


def _unmarked(store: TCPStore, marks: str, world: int) -> List[int]:
    """The ranks whose mark ``marks/<rank>`` (counted with add) is still missing."""
    return [rank for rank in range(world) if store.add(f"{marks}/{rank}", 0) == 0]


def _store_lost(doing: str, store: TCPStore, exc: CollectiveError) -> CollectiveError:
    return CollectiveError(f"{doing}: lost the rendezvous store, which rank 0's process serves: {exc}")
