"""paddle's ``gloo_init_parallel_env`` / ``gloo_barrier`` / ``gloo_release``: barriers among plain
processes that no launcher started (``multiprocessing`` children, say), through pycoll's TCP store.

Rank 0 hosts the store at ``server_endpoint``; every rank connects to it. Paddle's gloo context
serves barriers only, and so does this one (collectives need ``init_parallel_env`` under a
launcher). Every call ends with the others telling rank 0 they are past it (``_all_past``), so
rank 0, whose process serves the store, never leaves while another rank still waits on it.
"""
from __future__ import annotations

import time
from typing import Any, Dict

from pycoll.distributed.placement import timeout_seconds
from pycoll.distributed.store import TCPStore

_state: Dict[str, Any] = {}


def gloo_init_parallel_env(rank_id: int, rank_num: int, server_endpoint: str) -> None:
    """Join the ``rank_num`` processes whose rank ``rank_id`` is; rank 0 serves ``server_endpoint``
    ('ip:port')."""
    if isinstance(rank_num, bool) or not isinstance(rank_num, int) or rank_num < 2:
        raise ValueError(f"gloo_init_parallel_env: rank_num must be an int >= 2, got {rank_num!r}")
    if isinstance(rank_id, bool) or not isinstance(rank_id, int) or not 0 <= rank_id < rank_num:
        raise ValueError(f"gloo_init_parallel_env: rank_id must be an int in [0, {rank_num}), got {rank_id!r}")
    host, _, port = str(server_endpoint).rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"gloo_init_parallel_env: server_endpoint must be 'ip:port', got {server_endpoint!r}")
    if _state:
        raise RuntimeError("gloo_init_parallel_env: already initialised; call gloo_release() first")
    store = TCPStore(host, int(port), is_master=rank_id == 0, timeout=timeout_seconds(None, "PYCOLL_TIMEOUT"))
    _state.update(store=store, rank=rank_id, nranks=rank_num, barriers=0)
    _all_past("init")


def _all_past(step: str) -> None:
    """Every other rank tells rank 0 it is past ``step`` (an acknowledged add); rank 0 returns
    once all have."""
    store, nranks = _state["store"], _state["nranks"]
    if _state["rank"] != 0:
        store.add(f"gloo/{step}", 1)
        return
    deadline = time.monotonic() + store.timeout
    while store.add(f"gloo/{step}", 0) < nranks - 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f"gloo: only {store.add(f'gloo/{step}', 0)} of the {nranks - 1} other ranks "
                               f"reached {step} within {store.timeout:g} s")
        time.sleep(0.01)


def _started(fn: str) -> Dict[str, Any]:
    if not _state:
        raise RuntimeError(f"{fn}: call gloo_init_parallel_env(rank_id, rank_num, server_endpoint) first")
    return _state


def gloo_barrier() -> None:
    """Return once every process of the gloo context has called it (as often)."""
    state = _started("gloo_barrier")
    state["barriers"] += 1
    state["store"].barrier(state["nranks"], f"gloo/{state['barriers']}")
    _all_past(f"barrier/{state['barriers']}")


def gloo_release() -> None:
    """Leave the gloo context (rank 0 stops serving once the others have left); once left, a
    call does nothing, as paddle's."""
    if not _state:
        return
    _all_past("release")
    _state["store"].close()
    _state.clear()
