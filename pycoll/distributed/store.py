"""A small TCP key-value store for rendezvous (torch's ``TCPStore``, in the part pycoll needs).

Rank 0 hosts the server, a daemon thread listening at ``MASTER_ADDR:MASTER_PORT``; every rank
(rank 0 included) talks to it through one client socket. Messages are length-prefixed frames:

    request  = u32 length | op (1 byte) | u32 key length | key (utf-8) | argument
    reply    = u32 length | status (1 byte) | payload

``get`` waits on the server (which answers when the key is set, or "missing" once the
requested wait is over), so a reply never arrives after its caller gave up and a client's
socket stays in step with the server. Every wait is bounded and ends in
:class:`pycoll.CollectiveError` naming the key, the address and the wait.
"""
from __future__ import annotations

import selectors
import socket
import struct
import threading
import time
from typing import Dict, List, Optional, Tuple

from pycoll._errors import CollectiveError
from pycoll._logging import logger

DEFAULT_TIMEOUT_S = 300.0

_SET, _GET, _ADD = b"S", b"G", b"A"
_OK, _MISSING, _BAD = 0, 1, 2
_U32 = struct.Struct("!I")
_I64 = struct.Struct("!q")
_F64 = struct.Struct("!d")
_MAX_FRAME = 1 << 31
# Grace on top of a get's wait for the server's "missing" answer to travel back.
_REPLY_GRACE_S = 10.0
# Bound on writing one reply to a client that has stopped reading.
_SEND_TIMEOUT_S = 30.0


def _frame(*parts: bytes) -> bytes:
    body = b"".join(parts)
    return _U32.pack(len(body)) + body


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


class _Server:
    """The store's server: one daemon thread multiplexing every client with a selector."""

    def __init__(self, listener: socket.socket):
        self._listener = listener
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._data: Dict[str, bytes] = {}
        self._inbox: Dict[socket.socket, bytearray] = {}
        self._waiters: Dict[str, List[Tuple[float, socket.socket]]] = {}
        self._stopping = False
        listener.setblocking(False)
        self._selector.register(listener, selectors.EVENT_READ)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._serve, name="pycoll-store", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._thread.join(timeout=5.0)

    # -- the loop --------------------------------------------------------------------
    def _serve(self) -> None:
        try:
            while not self._stopping:
                for key, _ in self._selector.select(self._next_deadline()):
                    sock = key.fileobj
                    if sock is self._listener:
                        self._accept()
                    elif sock is not self._wake_r:
                        self._read(sock)
                self._expire(time.monotonic())
        except Exception:  # the store must never take its process down from its thread
            logger.exception("pycoll: the rendezvous store's server stopped on an error")
        finally:
            for sock in [self._listener, self._wake_r, self._wake_w, *self._inbox]:
                sock.close()
            self._selector.close()

    def _next_deadline(self) -> Optional[float]:
        deadlines = [d for waiters in self._waiters.values() for d, _ in waiters]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except BlockingIOError:
            return
        conn.setblocking(True)
        conn.settimeout(_SEND_TIMEOUT_S)  # recv only runs once select said readable
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._inbox[conn] = bytearray()
        self._selector.register(conn, selectors.EVENT_READ)

    def _drop(self, conn: socket.socket) -> None:
        if self._inbox.pop(conn, None) is None:
            return
        self._selector.unregister(conn)
        for key in list(self._waiters):
            kept = [w for w in self._waiters[key] if w[1] is not conn]
            if kept:
                self._waiters[key] = kept
            else:
                del self._waiters[key]
        conn.close()

    def _read(self, conn: socket.socket) -> None:
        try:
            chunk = conn.recv(1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self._drop(conn)
            return
        buf = self._inbox[conn]
        buf += chunk
        while len(buf) >= 4:
            (size,) = _U32.unpack_from(buf)
            if size >= _MAX_FRAME:
                self._drop(conn)
                return
            if len(buf) < 4 + size:
                break
            body = bytes(buf[4:4 + size])
            del buf[:4 + size]
            try:
                self._handle(conn, body)
            except (struct.error, UnicodeDecodeError):  # not a pycoll client
                self._drop(conn)
            if conn not in self._inbox:
                return

    def _reply(self, conn: socket.socket, status: int, payload: bytes = b"") -> None:
        try:
            conn.sendall(_frame(bytes((status,)), payload))
        except OSError:
            self._drop(conn)

    def _handle(self, conn: socket.socket, body: bytes) -> None:
        op = body[:1]
        (klen,) = _U32.unpack_from(body, 1)
        key = body[5:5 + klen].decode()
        arg = body[5 + klen:]
        if op == _SET:
            self._data[key] = arg
            self._reply(conn, _OK)
            for _, waiter in self._waiters.pop(key, []):
                self._reply(waiter, _OK, arg)
        elif op == _GET:
            if key in self._data:
                self._reply(conn, _OK, self._data[key])
            else:
                (wait,) = _F64.unpack(arg)
                self._waiters.setdefault(key, []).append((time.monotonic() + wait, conn))
        elif op == _ADD:
            try:
                value = int(self._data.get(key, b"0")) + _I64.unpack(arg)[0]
            except ValueError:
                self._reply(conn, _BAD, f"key {key!r} holds a value that is not an integer".encode())
                return
            self._data[key] = str(value).encode()
            self._reply(conn, _OK, _I64.pack(value))
            for _, waiter in self._waiters.pop(key, []):
                self._reply(waiter, _OK, self._data[key])
        else:
            self._drop(conn)

    def _expire(self, now: float) -> None:
        for key in list(self._waiters):
            expired = [w for w in self._waiters[key] if w[0] <= now]
            if not expired:
                continue
            self._waiters[key] = [w for w in self._waiters[key] if w[0] > now]
            if not self._waiters[key]:
                del self._waiters[key]
            for _, conn in expired:
                self._reply(conn, _MISSING)


class TCPStore:
    """A client of the rendezvous store at ``host:port``; with ``is_master`` it hosts the server.

    ``timeout`` bounds connecting and is the default bound of ``get`` and ``barrier``.
    With ``is_master`` and ``port=0`` an ephemeral port is chosen (see :attr:`port`).
    """

    def __init__(self, host: str, port: int, *, is_master: bool = False,
                 timeout: float = DEFAULT_TIMEOUT_S):
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout={timeout!r}: it must be a positive number of seconds")
        self._family = _family(host, port, is_master)
        self.host, self.port = host, port
        self.timeout = float(timeout)
        self._lock = threading.Lock()
        self._server: Optional[_Server] = None
        if is_master:
            self._server = self._host()
        try:
            self._sock: Optional[socket.socket] = self._connect()
        except BaseException:
            self._stop_server()
            raise

    @property
    def where(self) -> str:
        return f"MASTER_ADDR:MASTER_PORT = {self.host}:{self.port}"

    def _host(self) -> _Server:
        try:
            listener = socket.create_server((self.host, self.port), family=self._family, backlog=128)
        except OSError as exc:
            raise CollectiveError(
                f"cannot host the rendezvous store at {self.where}: {exc} (another job may be "
                f"using MASTER_PORT, or MASTER_ADDR is not an address of this host)") from None
        self.port = listener.getsockname()[1]
        logger.debug("pycoll: rendezvous store listening at %s:%d", self.host, self.port)
        return _Server(listener)

    def _connect(self) -> socket.socket:
        """Connect, retrying (rank 0 may not be listening yet) until the timeout."""
        deadline = time.monotonic() + self.timeout
        pause, last = 0.05, None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CollectiveError(
                    f"could not connect to the rendezvous store at {self.where} within "
                    f"{self.timeout:g} s (last error: {last}); is rank 0 running, and do "
                    f"MASTER_ADDR and MASTER_PORT name its host and a free port?")
            try:
                sock = socket.create_connection((self.host, self.port), timeout=min(remaining, 5.0))
            except OSError as exc:
                last = exc
                time.sleep(min(pause, max(remaining, 0.0)))
                pause = min(pause * 2, 1.0)
                continue
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

    def _request(self, op: bytes, key: str, arg: bytes, what: str, wait: float) -> Tuple[int, bytes]:
        if not isinstance(key, str) or not key:
            raise TypeError(f"TCPStore.{what}: key must be a non-empty str, got {key!r}")
        raw_key = key.encode()
        with self._lock:
            sock = self._sock
            if sock is None:
                raise CollectiveError(f"TCPStore.{what}({key!r}): the store client at {self.where} "
                                      f"is closed")
            try:
                sock.settimeout(wait + _REPLY_GRACE_S)
                sock.sendall(_frame(op, _U32.pack(len(raw_key)), raw_key, arg))
                (size,) = _U32.unpack(self._recv_exact(sock, 4))
                body = self._recv_exact(sock, size)
            except OSError as exc:  # timeouts and lost connections: the socket is out of step
                self._sock = None
                sock.close()
                raise CollectiveError(
                    f"TCPStore.{what}({key!r}) at {self.where} failed after waiting up to "
                    f"{wait:g} s: {exc or type(exc).__name__} (did rank 0 exit?)") from None
        return body[0], body[1:]

    def set(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key`` (replacing any value) and wake the ranks waiting for it."""
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"TCPStore.set: value must be bytes, got {type(value).__name__}")
        self._request(_SET, key, bytes(value), "set", self.timeout)

    def get(self, key: str, timeout: Optional[float] = None) -> bytes:
        """The value of ``key``, waiting until some rank sets it (at most ``timeout`` seconds)."""
        wait = self.timeout if timeout is None else float(timeout)
        status, payload = self._request(_GET, key, _F64.pack(wait), "get", wait)
        if status != _OK:
            raise CollectiveError(
                f"TCPStore.get({key!r}): the key was not set within {wait:g} s at {self.where} "
                f"(a peer did not reach the rendezvous)")
        return payload

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer under ``key`` (0 when unset); returns the new value."""
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise TypeError(f"TCPStore.add: amount must be an int, got {amount!r}")
        status, payload = self._request(_ADD, key, _I64.pack(amount), "add", self.timeout)
        if status != _OK:
            raise ValueError(f"TCPStore.add({key!r}): {payload.decode()}")
        return _I64.unpack(payload)[0]

    def barrier(self, nranks: int, tag: str, timeout: Optional[float] = None) -> None:
        """Return once ``nranks`` ranks have called ``barrier`` with this ``tag`` (one use per tag)."""
        if isinstance(nranks, bool) or not isinstance(nranks, int) or nranks < 1:
            raise ValueError(f"TCPStore.barrier: nranks must be a positive int, got {nranks!r}")
        count_key, done_key = f"pycoll/barrier/{tag}", f"pycoll/barrier/{tag}/done"
        arrived = self.add(count_key, 1)
        if arrived > nranks:
            raise ValueError(f"TCPStore.barrier: tag {tag!r} was already used by {nranks} ranks; "
                             f"give each barrier its own tag")
        if arrived == nranks:
            self.set(done_key, b"1")
        wait = self.timeout if timeout is None else float(timeout)
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
