"""The calling side of an RPC: one connection per call, bounded by the call's deadline."""
from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from pycoll._errors import CollectiveError
from pycoll.distributed.rpc.messages import outcome, read_frame
from pycoll.distributed.rpc.worker_info import WorkerInfo

_T = TypeVar("_T")


def call(worker: WorkerInfo, request: bytes, fn_name: str, timeout: float, why: str) -> Any:
    """Send ``request`` to ``worker`` and return what its call of ``fn_name`` returned (or raise
    what it raised). TimeoutError after ``timeout`` seconds (``why`` says where that bound came
    from); CollectiveError when the worker cannot be reached or closes the connection first."""
    deadline = time.monotonic() + timeout
    where = f"worker {worker.name!r} (rank {worker.rank}, {worker.ip}:{worker.port})"
    try:
        with socket.create_connection((worker.ip, worker.port), timeout=timeout) as sock:
            sock.settimeout(max(deadline - time.monotonic(), 1e-3))
            sock.sendall(request)
            body = read_frame(sock, deadline)
    except socket.timeout:
        raise TimeoutError(f"rpc to {where} running {fn_name} did not complete within "
                           f"{timeout:g} s ({why})") from None
    except OSError as exc:
        raise CollectiveError(f"rpc to {where} running {fn_name} failed: {exc or type(exc).__name__} "
                              f"(has that worker exited or shut down?)") from None
    return outcome(body, worker.name, fn_name)


class FutureWrapper(Generic[_T]):
    """What ``rpc_async`` returns: ``wait()`` gives the call's result, or raises what it raised."""

    def __init__(self, future: "Future[_T]"):
        self._future = future

    def wait(self) -> _T:
        return self._future.result()

    def done(self) -> bool:
        """Whether the call has finished (paddle's FutureWrapper has only ``wait``)."""
        return self._future.done()


def call_async(worker: WorkerInfo, request: bytes, fn_name: str, timeout: float, why: str) -> "Future[Any]":
    """:func:`call` on a daemon thread of its own; the future holds its result or error."""
    future: "Future[Any]" = Future()
    future.set_running_or_notify_cancel()

    def run() -> None:
        try:
            future.set_result(call(worker, request, fn_name, timeout, why))
        except BaseException as exc:  # handed to whoever waits
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True, name="pycoll-rpc-async").start()
    return future
