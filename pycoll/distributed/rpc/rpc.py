"""paddle's ``paddle.distributed.rpc``: run a Python function on another worker of the job.

    rpc.init_rpc("worker0", rank=0, world_size=2, master_endpoint="127.0.0.1:8001")
    rpc.rpc_sync("worker1", add, args=(2, 3))       # 5, computed on worker1
    fut = rpc.rpc_async("worker1", add, args=(2, 3)); fut.wait()
    rpc.shutdown()

Each worker serves calls on a TCP socket of its own (:mod:`.server`); the workers find each
other through the rendezvous store at the master endpoint (:mod:`.directory`). Pickles travel
between the job's workers only: keep every worker's port inside the job's network (paddle's
warning), and set ``PYCOLL_STORE_TOKEN`` (the launcher does) so other processes are refused.
"""
from __future__ import annotations

import atexit
import math
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

from pycoll._logging import logger
from pycoll.distributed.nodes import reachable_address
from pycoll.distributed.placement import timeout_seconds
from pycoll.distributed.rpc import directory
from pycoll.distributed.rpc.client import FutureWrapper, call, call_async
from pycoll.distributed.rpc.messages import call_request, function_name
from pycoll.distributed.rpc.server import RpcServer
from pycoll.distributed.rpc.worker_info import WorkerInfo
from pycoll.distributed.store import TCPStore, _token_bytes

_DEFAULT_RPC_TIMEOUT = -1  # paddle's: <= 0 waits without an RPC timeout of its own


class _Agent:
    """This process's RPC worker between ``init_rpc`` and ``shutdown``."""

    def __init__(self, me: WorkerInfo, workers: List[WorkerInfo], server: RpcServer, store: TCPStore,
                 prefix: str, token: bytes, timeout: float):
        self.me, self.workers, self.server, self.store = me, workers, server, store
        self.by_name = {w.name: w for w in workers}
        self.prefix, self.token, self.timeout = prefix, token, timeout
        self.pending: set = set()  # rpc_async futures not yet done


_agent: Optional[_Agent] = None
_was_shut_down = False
_generation = 0  # init_rpc calls made by this process: each meeting has keys of its own
_stops_at_exit = False  # whether _stop_serving is registered to run at exit


def _int_arg(value: Any, name: str, variable: str) -> int:
    if value is None:
        raw = os.environ.get(variable)
        if raw is None:
            raise ValueError(f"init_rpc: {name} was not given and {variable} is not set (the "
                             f"launcher sets it); pass {name}=...")
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"init_rpc: {variable}={raw!r} must be an int ({name})") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"init_rpc: {name} must be an int, got {type(value).__name__} {value!r}")
    return value


def _endpoint(value: str, what: str) -> Tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"init_rpc: {what}={value!r}; it must be 'ip:port'")
    return host.strip("[]"), int(port)


def _master_endpoint(value: Optional[str]) -> Tuple[str, int]:
    """``master_endpoint``, else paddle's PADDLE_MASTER_ENDPOINT, else the meeting point
    pycoll's launcher gives every job (PADDLE_MASTER, MASTER_ADDR:MASTER_PORT)."""
    if value is not None:
        if not isinstance(value, str):
            raise TypeError(f"init_rpc: master_endpoint must be a str 'ip:port', got {type(value).__name__}")
        where = _endpoint(value, "master_endpoint")
    else:
        env = os.environ
        pair = f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}" if "MASTER_ADDR" in env and "MASTER_PORT" in env else None
        for variable, raw in (("PADDLE_MASTER_ENDPOINT", env.get("PADDLE_MASTER_ENDPOINT")),
                              ("PADDLE_MASTER", env.get("PADDLE_MASTER")), ("MASTER_ADDR:MASTER_PORT", pair)):
            if raw:
                where = _endpoint(raw, variable)
                break
        else:
            raise ValueError("init_rpc: master_endpoint was not given and PADDLE_MASTER_ENDPOINT is not "
                             "set; pass master_endpoint='ip:port' (rank 0 serves it)")
    if where[1] == 0:
        raise ValueError(f"init_rpc: master endpoint {where[0]}:0 has no port; rank 0 serves it at a "
                         f"port every worker knows")
    return where


def init_rpc(name: str, rank: Optional[int] = None, world_size: Optional[int] = None,
             master_endpoint: Optional[str] = None) -> None:
    """Start this process's RPC worker ``name`` and meet the others (every worker calls it).

    ``rank`` / ``world_size`` default to ``PADDLE_TRAINER_ID`` / ``PADDLE_TRAINERS_NUM`` and
    ``master_endpoint`` ('ip:port', served by rank 0) to ``PADDLE_MASTER_ENDPOINT`` (else the
    launcher's ``PADDLE_MASTER``); the worker serves at ``PADDLE_WORKER_ENDPOINT`` when set,
    else at a free port of its address towards the master. Returns once every worker has
    joined and read the others' infos (paddle's closing barrier).
    """
    global _agent, _generation, _was_shut_down, _stops_at_exit
    if not isinstance(name, str) or not name:
        raise TypeError(f"init_rpc: name must be a non-empty str, got {name!r}")
    rank = _int_arg(rank, "rank", "PADDLE_TRAINER_ID")
    world_size = _int_arg(world_size, "world_size", "PADDLE_TRAINERS_NUM")
    if world_size < 1:
        raise ValueError(f"init_rpc: world_size={world_size}; it must be >= 1")
    if not 0 <= rank < world_size:
        raise ValueError(f"init_rpc: rank={rank}; it must be in [0, world_size={world_size})")
    host, port = _master_endpoint(master_endpoint)
    worker_endpoint = os.environ.get("PADDLE_WORKER_ENDPOINT")
    ip, my_port = (_endpoint(worker_endpoint, "PADDLE_WORKER_ENDPOINT") if worker_endpoint
                   else (reachable_address(host, port), 0))
    if _agent is not None:
        raise RuntimeError(f"init_rpc: this process is already RPC worker {_agent.me.name!r}; call "
                           f"rpc.shutdown() before init_rpc again")
    timeout, token = timeout_seconds(None), _token_bytes(None)
    _generation += 1
    prefix = f"pycoll/rpc/{_generation}"
    # Listening from here on, the server runs calls only once this worker is ready: calls from
    # peers that met the others first wait in the listen backlog until then.
    server = RpcServer(ip, my_port, token=token, io_timeout=timeout)
    try:
        store = directory.meeting_store(host, port, rank, timeout)
        me = WorkerInfo(name, rank, ip, server.port)
        workers = directory.meet(store, prefix, me, world_size, timeout)
        # paddle's closing barrier: nobody leaves (rank 0, the store's host, last) before every
        # worker has read the directory, so a rank 0 that exits at once fails no one's init_rpc.
        directory.leave_together(store, f"{prefix}/joined", rank, world_size, timeout, "init_rpc", workers)
    except BaseException:
        server.stop()
        raise
    _agent, _was_shut_down = _Agent(me, workers, server, store, prefix, token, timeout), False
    server.start()
    if not _stops_at_exit:  # registered after MPI's finalize (if any), so it runs before it
        atexit.register(_stop_serving)
        _stops_at_exit = True
    logger.info("rpc worker %r (rank %d of %d) serving at %s:%d", name, rank, world_size, ip, server.port)


def _stop_serving() -> None:
    """At exit without ``shutdown``: stop listening, so that a peer waiting in ``shutdown`` for
    this worker learns at once that it will never come (see ``directory.leave_together``)."""
    if _agent is not None:
        _agent.server.stop()


def _started(fn: str) -> _Agent:
    if _agent is None:
        if _was_shut_down:
            raise RuntimeError(f"rpc.{fn}: rpc was shut down on this worker; call init_rpc again first")
        raise RuntimeError(f"rpc.{fn}: call rpc.init_rpc(name, rank, world_size, master_endpoint) first")
    return _agent


def _prepared(what: str, to: str, fn: Callable[..., Any], args: Any, kwargs: Any,
              timeout: Any) -> Tuple[WorkerInfo, bytes, str, float, str]:
    """The checked call: (worker, request, fn's name, seconds, where that bound comes from)."""
    if not isinstance(to, str):
        raise TypeError(f"{what}: to must be a worker's name (str), got {type(to).__name__} {to!r}")
    if not callable(fn):
        raise TypeError(f"{what}: fn must be callable, got {type(fn).__name__} {fn!r}")
    if args is not None and not isinstance(args, (tuple, list)):
        raise TypeError(f"{what}: args must be a tuple or list (or None), got {type(args).__name__}")
    if kwargs is not None and not (isinstance(kwargs, dict) and all(isinstance(k, str) for k in kwargs)):
        raise TypeError(f"{what}: kwargs must be a dict of str keys (or None), got {kwargs!r:.80}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or math.isnan(timeout):
        raise TypeError(f"{what}: timeout must be a number of seconds (<= 0: no RPC timeout), got {timeout!r}")
    agent = _started(what.split(".")[-1])
    worker = agent.by_name.get(to)
    if worker is None:
        raise ValueError(f"{what}: to={to!r} is no worker of this job; the workers are "
                         f"{sorted(agent.by_name)}")
    request = call_request(what, agent.token, fn, args or (), kwargs or {})
    if 0 < timeout < math.inf:
        return worker, request, function_name(fn), float(timeout), f"timeout={timeout!r}"
    return worker, request, function_name(fn), agent.timeout, "no RPC timeout: PYCOLL_TIMEOUT bounds it"


def rpc_sync(to: str, fn: Callable[..., Any], args: Optional[Tuple[Any, ...]] = None,
             kwargs: Optional[Dict[str, Any]] = None, timeout: float = _DEFAULT_RPC_TIMEOUT) -> Any:
    """Run ``fn(*args, **kwargs)`` on worker ``to`` and return its result (or raise, here, what
    it raised there: the same type, naming the worker, with the remote traceback). ``timeout``
    seconds bound it (TimeoutError); <= 0 sets no RPC timeout (``PYCOLL_TIMEOUT`` still bounds
    every wait of pycoll's)."""
    return call(*_prepared("rpc.rpc_sync", to, fn, args, kwargs, timeout))


def rpc_async(to: str, fn: Callable[..., Any], args: Optional[Tuple[Any, ...]] = None,
              kwargs: Optional[Dict[str, Any]] = None, timeout: float = _DEFAULT_RPC_TIMEOUT) -> FutureWrapper:
    """``rpc_sync`` without waiting: returns a future whose ``wait()`` gives the result. Bad
    arguments and unpicklable ones are refused here, at once."""
    prepared = _prepared("rpc.rpc_async", to, fn, args, kwargs, timeout)
    agent = _agent
    future = call_async(*prepared)
    agent.pending.add(future)
    future.add_done_callback(agent.pending.discard)
    return FutureWrapper(future)


def shutdown() -> None:
    """Leave the job's RPC: wait for this worker's own calls in flight, then for every worker to
    call ``shutdown`` (so calls to this one are served until none can come), then stop serving.
    Bounded by ``PYCOLL_TIMEOUT``; a worker that never arrives ends it with CollectiveError."""
    global _agent, _was_shut_down
    agent = _started("shutdown")
    for future in list(agent.pending):
        future.exception()  # waits; the error is the caller's to see through wait()
    try:
        directory.leave_together(agent.store, f"{agent.prefix}/shutdown", agent.me.rank, len(agent.workers),
                                 agent.timeout, "rpc.shutdown", agent.workers)
    finally:
        agent.server.stop()
        _agent, _was_shut_down = None, True
    logger.info("rpc worker %r shut down", agent.me.name)


def get_worker_info(name: str) -> WorkerInfo:
    """The :class:`WorkerInfo` of the worker called ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"rpc.get_worker_info: name must be a str, got {type(name).__name__} {name!r}")
    agent = _started("get_worker_info")
    if name not in agent.by_name:
        raise ValueError(f"rpc.get_worker_info: name={name!r} is no worker of this job; the workers "
                         f"are {sorted(agent.by_name)}")
    return agent.by_name[name]


def get_all_worker_infos() -> List[WorkerInfo]:
    """Every worker's :class:`WorkerInfo`, by rank."""
    return list(_started("get_all_worker_infos").workers)


def get_current_worker_info() -> WorkerInfo:
    """This worker's :class:`WorkerInfo`."""
    return _started("get_current_worker_info").me
