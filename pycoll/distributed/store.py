"""A small TCP key-value store for rendezvous (torch's ``TCPStore``, in the part pycoll needs).

Rank 0 hosts the server (:mod:`pycoll.distributed._store_server`, a daemon thread listening at
``MASTER_ADDR:MASTER_PORT``); every rank (rank 0 included) talks to it through one client
socket. Messages are length-prefixed frames, integers big-endian:

    greeting = u32 length | status (1 byte) | payload        the server's first frame
    request  = u32 length | op (1 byte) | u16 token length | token
               | u32 key length | key (utf-8) | argument
    reply    = u32 length | status (1 byte) | payload

Ops: ``S`` set (argument: the value), ``G`` get (argument: f64, the wait in seconds), ``A`` add
(argument: i64, the amount; the reply's payload is the new value, i64). Statuses: 0 ok, 1 missing
(a get's wait ended), 2 bad (the payload says why), 3 refused (the request's token is not the
store's), 4 full (the greeting of a store already serving ``max_connections`` clients). After
"refused" and "full" the server closes the connection.

``get`` waits on the server (which answers when the key is set, or "missing" once the
requested wait is over), so a reply never arrives after its caller gave up and a client's
socket stays in step with the server. Every wait is bounded and ends in
:class:`pycoll.CollectiveError` naming the key, the address and the wait.

No client can stop, stall or exhaust the server (torch's TCPStore guards none of this):

- a per-job token (the ``token`` argument, else ``PYCOLL_STORE_TOKEN``; the launcher sets it)
  travels in every request, and the server answers only requests carrying its own, compared in
  constant time. Without a token the store is unauthenticated. The token is never logged or shown;
- frames are at most ``max_frame_bytes`` (64 MiB by default: NCCL ids and small metadata
  travel here); at most ``max_connections`` clients are served at once;
- waits must be finite and >= 0, and are clamped to ``MAX_WAIT_S`` (about 11.6 days);
- a client that stops reading its replies, breaks the protocol or makes serving it fail is
  dropped, alone; running out of file descriptors pauses accepting, never serving.
"""
from __future__ import annotations

import math
import os
import resource
import socket
import threading
import time
from typing import Optional, Sequence, Tuple, Union

from pycoll._errors import CollectiveError
from pycoll._logging import logger
from pycoll.distributed import _store_wire as wire
from pycoll.distributed._store_server import StoreServer
from pycoll.distributed._store_wire import DEFAULT_MAX_FRAME_BYTES, MAX_WAIT_S

DEFAULT_TIMEOUT_S = 300.0
TOKEN_VAR = "PYCOLL_STORE_TOKEN"
# Grace on top of a get's wait for the server's "missing" answer to travel back.
_REPLY_GRACE_S = 10.0
_MAX_CONNECTIONS = 4096
_FD_HEADROOM = 64  # descriptors the store's process keeps for everything else


def default_max_connections() -> int:
    """4096, or this process's file-descriptor limit less some headroom when that is lower."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return _MAX_CONNECTIONS
    return max(1, min(_MAX_CONNECTIONS, soft - _FD_HEADROOM))


def _family(host: str, port: int, master: bool) -> int:
    """The address family of ``host``; ValueError naming MASTER_ADDR / MASTER_PORT when unusable."""
    if not isinstance(host, str) or not host:
        raise ValueError(f"MASTER_ADDR={host!r}: it must be the host name or address of rank 0")
    lowest = 0 if master else 1
    if isinstance(port, bool) or not isinstance(port, int) or not lowest <= port <= 65535:
        raise ValueError(f"MASTER_PORT={port!r}: it must be a TCP port in [{lowest}, 65535]")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ValueError(f"MASTER_ADDR={host!r} cannot be resolved ({exc}); set it to the host "
                         f"name or address of rank 0") from None
    return infos[0][0]


def _seconds(value: object, what: str, *, zero_ok: bool) -> float:
    """``value`` as seconds: a finite number, > 0 (>= 0 with ``zero_ok``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what}: timeout must be a number of seconds, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        raise ValueError(f"{what}: timeout={value!r}; it must be a finite number of seconds "
                         f"{'>= 0' if zero_ok else '> 0'}")
    return float(value)


def _positive_int(value: object, name: str, lowest: int, highest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest:
        raise ValueError(f"TCPStore: {name}={value!r}; it must be an int in [{lowest}, {highest}]")
    return value


def _token_bytes(token: Optional[str]) -> bytes:
    """The store token (never echoed in an error: it is a secret)."""
    source = "token"
    if token is None:
        token, source = os.environ.get(TOKEN_VAR, ""), TOKEN_VAR
    if not isinstance(token, str):
        raise TypeError(f"TCPStore: token must be a str, got {type(token).__name__}")
    raw = token.encode()
    if len(raw) > wire.MAX_TOKEN_BYTES:
        raise ValueError(f"TCPStore: the store token ({source}) is {len(raw)} bytes long; it "
                         f"travels in every message, so at most {wire.MAX_TOKEN_BYTES} are allowed")
    return raw


def _lost(exc: OSError, bound: float, elapsed: float) -> str:
    """Why a request got no reply: the server's silence for ``bound`` seconds, or what ended
    the connection ``elapsed`` seconds into the request (never a wait that did not happen)."""
    if isinstance(exc, socket.timeout):
        return f"no reply within {bound:g} s (is rank 0's process alive but stuck?)"
    return f"{exc or type(exc).__name__}, {elapsed:.1f} s into the request (did rank 0 exit?)"


class TCPStore:
    """A client of the rendezvous store at ``host:port``; with ``is_master`` it hosts the server.

    ``timeout`` bounds connecting and is the default bound of ``get`` and ``barrier``.
    With ``is_master`` and ``port=0`` an ephemeral port is chosen (see :attr:`port`).
    ``token`` (default: ``PYCOLL_STORE_TOKEN``, else none) must be the same on every rank;
    ``max_frame_bytes`` bounds one message (every rank should use the same);
    ``max_connections`` (the master's; default :func:`default_max_connections`) bounds the
    clients served at once.
    """

    def __init__(self, host: str, port: int, *, is_master: bool = False,
                 timeout: float = DEFAULT_TIMEOUT_S, token: Optional[str] = None,
                 max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                 max_connections: Optional[int] = None):
        self.timeout = _seconds(timeout, "TCPStore", zero_ok=False)
        self._family = _family(host, port, is_master)
        self.host, self.port = host, port
        self._token = _token_bytes(token)
        self._max_frame = _positive_int(max_frame_bytes, "max_frame_bytes", 1 << 10, (1 << 32) - 1)
        self._lock = threading.Lock()
        self._lost = ""  # why the connection ended, once a request lost it (later requests say so)
        self._server: Optional[StoreServer] = None
        if is_master:
            limit = default_max_connections() if max_connections is None else max_connections
            self._server = self._host(_positive_int(limit, "max_connections", 1, 1 << 20))
        try:
            self._sock: Optional[socket.socket] = self._connect()
        except BaseException:
            self._stop_server()
            raise

    @property
    def where(self) -> str:
        return f"MASTER_ADDR:MASTER_PORT = {self.host}:{self.port}"

    def _host(self, max_connections: int) -> StoreServer:
        try:
            listener = socket.create_server((self.host, self.port), family=self._family, backlog=128)
        except OSError as exc:
            raise CollectiveError(
                f"cannot host the rendezvous store at {self.where}: {exc} (another job may be "
                f"using MASTER_PORT, or MASTER_ADDR is not an address of this host)") from None
        self.port = listener.getsockname()[1]
        logger.debug("rendezvous store listening at %s:%d (%s)", self.host, self.port,
                     "with a token" if self._token else "unauthenticated")
        return StoreServer(listener, token=self._token, max_frame_bytes=self._max_frame,
                           max_connections=max_connections)

    def _connect(self) -> socket.socket:
        """Connect and read the server's greeting, retrying (rank 0 may not be listening yet)
        until the timeout; a store that is full refuses at once."""
        deadline = time.monotonic() + self.timeout
        pause, last = 0.05, None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CollectiveError(
                    f"could not connect to the rendezvous store at {self.where} within "
                    f"{self.timeout:g} s (last error: {last}); is rank 0 running, and do "
                    f"MASTER_ADDR and MASTER_PORT name its host and a free port?")
            sock = None
            try:
                sock = socket.create_connection((self.host, self.port), timeout=min(remaining, 5.0))
                status, payload = self._read_reply(sock)
            except OSError as exc:
                if sock is not None:
                    sock.close()
                last = exc
                time.sleep(min(pause, max(remaining, 0.0)))
                pause = min(pause * 2, 1.0)
                continue
            if status != wire.OK:
                sock.close()
                raise CollectiveError(f"the rendezvous store at {self.where} refused a connection: "
                                      f"{payload.decode(errors='replace')} (rank 0's TCPStore "
                                      f"takes max_connections)")
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock

    # -- requests ------------------------------------------------------------------------
    def _recv_exact(self, sock: socket.socket, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the store closed the connection")
            buf += chunk
        return bytes(buf)

    def _read_reply(self, sock: socket.socket) -> Tuple[int, bytes]:
        (size,) = wire.U32.unpack(self._recv_exact(sock, 4))
        if not 1 <= size <= self._max_frame:
            raise ConnectionError(f"the store sent a frame of {size} bytes (max_frame_bytes="
                                  f"{self._max_frame}); is MASTER_PORT a pycoll store's?")
        body = self._recv_exact(sock, size)
        return body[0], body[1:]

    def _request(self, op: bytes, key: str, arg: bytes, what: str, wait: float) -> Tuple[int, bytes]:
        if not isinstance(key, str) or not key:
            raise TypeError(f"TCPStore.{what}: key must be a non-empty str, got {key!r}")
        raw_key = key.encode()
        size = wire.request_size(self._token, raw_key, arg)
        if size > self._max_frame:
            raise ValueError(f"TCPStore.{what}({key!r}): the message would be {size} bytes, more "
                             f"than max_frame_bytes={self._max_frame}; the store carries small "
                             f"metadata, not bulk data")
        with self._lock:
            sock = self._sock
            if sock is None:
                state = f"lost its connection earlier ({self._lost})" if self._lost else "is closed"
                raise CollectiveError(f"TCPStore.{what}({key!r}): the store client at {self.where} {state}")
            bound = min(wait, MAX_WAIT_S) + _REPLY_GRACE_S
            started = time.monotonic()
            try:
                sock.settimeout(bound)
                sock.sendall(wire.request(op, self._token, raw_key, arg))
                status, payload = self._read_reply(sock)
            except OSError as exc:  # timeouts and lost connections: the socket is out of step
                self._sock = None
                sock.close()
                reason = _lost(exc, bound, time.monotonic() - started)
                self._lost = f"TCPStore.{what}({key!r}): {reason}"
                raise CollectiveError(f"TCPStore.{what}({key!r}) at {self.where}: {reason}") from None
            if status == wire.REFUSED:  # the server closes this connection
                self._sock = None
                sock.close()
                self._lost = f"the store refused this client's {TOKEN_VAR}"
                raise CollectiveError(
                    f"TCPStore.{what}({key!r}): the rendezvous store at {self.where} refused this "
                    f"client: its {TOKEN_VAR} differs from the store's (every rank of a job must "
                    f"have rank 0's; is another job using MASTER_PORT?)")
        return status, payload

    def _unexpected(self, what: str, key: str, status: int, payload: bytes) -> CollectiveError:
        return CollectiveError(f"TCPStore.{what}({key!r}) at {self.where}: the store answered "
                               f"status {status}: {payload.decode(errors='replace')}")

    def set(self, key: str, value: Union[bytes, str]) -> None:
        """Store ``value`` under ``key`` (replacing any value) and wake the ranks waiting for it; a
        str is stored as its UTF-8 bytes (paddle's store takes one; ``get`` gives bytes back)."""
        if isinstance(value, str):
            value = value.encode()
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"TCPStore.set: value must be bytes or str, got {type(value).__name__}")
        status, payload = self._request(wire.SET, key, bytes(value), "set", self.timeout)
        if status != wire.OK:
            raise self._unexpected("set", key, status, payload)

    def get(self, key: str, timeout: Optional[float] = None) -> bytes:
        """The value of ``key``, waiting until some rank sets it (at most ``timeout`` seconds,
        clamped to :data:`MAX_WAIT_S`)."""
        return self._get(key, timeout, "get")

    def _get(self, key: str, timeout: Optional[float], what: str) -> bytes:
        wait = self.timeout if timeout is None else _seconds(timeout, f"TCPStore.{what}", zero_ok=True)
        status, payload = self._request(wire.GET, key, wire.F64.pack(min(wait, MAX_WAIT_S)), what, wait)
        if status == wire.MISSING:
            raise CollectiveError(
                f"TCPStore.{what}({key!r}): no client set the key within {wait:g} s at {self.where} (at a "
                f"rendezvous: a peer did not reach it)")
        if status != wire.OK:
            raise self._unexpected(what, key, status, payload)
        return payload

    def wait(self, keys: Union[str, Sequence[str]], timeout: Optional[float] = None) -> None:
        """Return once every one of ``keys`` (a key or a list of them) is set (paddle's and
        torch's ``wait``; ``get``'s bound, each)."""
        for key in [keys] if isinstance(keys, str) else list(keys):
            self._get(key, timeout, "wait")

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer under ``key`` (0 when unset); returns the new value."""
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise TypeError(f"TCPStore.add: amount must be an int, got {amount!r}")
        status, payload = self._request(wire.ADD, key, wire.I64.pack(amount), "add", self.timeout)
        if status == wire.BAD:
            raise ValueError(f"TCPStore.add({key!r}): {payload.decode()}")
        if status != wire.OK:
            raise self._unexpected("add", key, status, payload)
        return wire.I64.unpack(payload)[0]

    def barrier(self, nranks: int, tag: str, timeout: Optional[float] = None) -> None:
        """Return once ``nranks`` ranks have called ``barrier`` with this ``tag`` (one use per tag)."""
        if isinstance(nranks, bool) or not isinstance(nranks, int) or nranks < 1:
            raise ValueError(f"TCPStore.barrier: nranks must be a positive int, got {nranks!r}")
        wait = self.timeout if timeout is None else _seconds(timeout, "TCPStore.barrier", zero_ok=True)
        count_key, done_key = f"pycoll/barrier/{tag}", f"pycoll/barrier/{tag}/done"
        arrived = self.add(count_key, 1)
        if arrived > nranks:
            raise ValueError(f"TCPStore.barrier: tag {tag!r} was already used by {nranks} ranks; "
                             f"give each barrier its own tag")
        if arrived == nranks:
            self.set(done_key, b"1")
        try:
            self.get(done_key, wait)
        except CollectiveError as exc:
            try:
                came = f"only {self.add(count_key, 0)} of {nranks} ranks arrived"
            except CollectiveError:
                raise exc from None
            raise CollectiveError(f"TCPStore.barrier({tag!r}): {came} within {wait:g} s at "
                                  f"{self.where}") from None

    def close(self) -> None:
        """Close this client and, on the master, stop the server (idempotent)."""
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()
        self._stop_server()

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> "TCPStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        role = "master" if self._server is not None else "client"
        return f"TCPStore({self.host}:{self.port}, {role})"
