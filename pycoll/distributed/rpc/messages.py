"""What an RPC puts on the wire, and how its outcome comes back.

A call travels as one request frame of the rendezvous store's format
(:mod:`pycoll.distributed._store_wire`): op ``C``, the job's store token, the function's name as
the key (for logs and errors) and, as the argument, the pickled ``(fn, args, kwargs)``. The
answer is one reply frame: status ``OK`` with the pickled result, ``RAISED`` with the pickled
``(exception type, message, traceback text)`` of what the function raised, or the store's
``BAD`` / ``REFUSED`` with a text (a malformed request, a foreign token).

Functions travel by reference, as pickle sends them: the callee must be able to import ``fn``
(a function of the script every worker runs, or of an installed module; not a lambda).
Pickles are only exchanged between the job's own workers (the token keeps others out), as
torch's and paddle's RPC do; never expose a worker's port beyond the job's network.
"""
from __future__ import annotations

import pickle
import socket
import time
import traceback
from typing import Any, Callable, Dict, Sequence

from pycoll.distributed import _store_wire as wire

CALL = b"C"
RAISED = 5  # a status beyond the store's: the function raised
MAX_FRAME_BYTES = (1 << 32) - 1  # the frame's u32 length field


def function_name(fn: Callable[..., Any]) -> str:
    """How errors and logs name ``fn``."""
    return getattr(fn, "__qualname__", None) or repr(fn)


def call_request(what: str, token: bytes, fn: Callable[..., Any], args: Sequence[Any],
                 kwargs: Dict[str, Any]) -> bytes:
    """The request frame of ``fn(*args, **kwargs)``; TypeError naming ``what`` (the API call)
    when it cannot be pickled."""
    name = function_name(fn)
    try:
        payload = pickle.dumps((fn, tuple(args), kwargs), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise TypeError(f"{what}: fn={name} and its args/kwargs must be picklable (a function the other "
                        f"workers can import, not a lambda or a local function): {exc}") from None
    size = wire.request_size(token, name.encode(), payload)
    if size > MAX_FRAME_BYTES:
        raise ValueError(f"{what}: the call of {name} pickles to {size} bytes, more than one frame's "
                         f"{MAX_FRAME_BYTES}")
    return wire.request(CALL, token, name.encode(), payload)


def read_frame(sock: socket.socket, deadline: float) -> bytes:
    """One frame's body from ``sock``; ``deadline`` (``time.monotonic()``) bounds the whole read
    (socket.timeout once it passes); ConnectionError when the peer closes first."""
    def exact(n: int) -> bytes:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            sock.settimeout(max(deadline - time.monotonic(), 1e-3))
            count = sock.recv_into(view[got:])
            if not count:
                raise ConnectionError("the peer closed the connection")
            got += count
        return bytes(buf)

    (size,) = wire.U32.unpack(exact(wire.U32.size))
    return exact(size)


def run_call(payload: bytes) -> bytes:
    """Unpickle a call, run it and return the reply frame: its result, or what it raised."""
    try:
        fn, args, kwargs = pickle.loads(payload)
        return wire.frame(bytes([wire.OK]), pickle.dumps(fn(*args, **kwargs), protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:  # the caller gets it, raised again there
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        try:
            raised = pickle.dumps((type(exc), str(exc), text))
        except Exception:  # a class the caller could not import anyway
            raised = pickle.dumps((RuntimeError, f"{type(exc).__name__}: {exc}", text))
        return wire.frame(bytes([RAISED]), raised)


def error_reply(status: int, text: str) -> bytes:
    """A reply that refuses a request (``wire.BAD`` / ``wire.REFUSED``), saying why."""
    return wire.frame(bytes([status]), text.encode())


def outcome(body: bytes, worker: str, fn_name: str) -> Any:
    """The result a reply frame's body carries, or the remote exception raised again here: its
    own type where that can be made from a message (else RuntimeError), naming the worker and
    holding the remote traceback."""
    status, payload = body[0], body[1:]
    if status == wire.OK:
        return pickle.loads(payload)
    if status != RAISED:
        raise RuntimeError(f"rpc: worker {worker!r} refused the call of {fn_name}: "
                           f"{payload.decode(errors='replace')}")
    try:
        exc_type, message, remote = pickle.loads(payload)
    except Exception as exc:  # its class cannot be imported here
        raise RuntimeError(f"rpc: {fn_name} raised on worker {worker!r} an exception this worker "
                           f"cannot unpickle ({exc})") from None
    text = f"{message} (raised on worker {worker!r} in {fn_name}; remote traceback:\n{remote})"
    raise _rebuilt(exc_type, text) from None


def _rebuilt(exc_type: type, text: str) -> BaseException:
    try:
        exc = exc_type(text)
        if isinstance(exc, BaseException):
            return exc
    except Exception:
        pass
    return RuntimeError(f"{exc_type.__name__}: {text}")

