"""The rendezvous store's server: one daemon thread that no client can stop, stall or exhaust.

Every socket is non-blocking and multiplexed by one selector. What a client sends is read only
up to one frame of ``max_frame_bytes``; what it is sent waits in its own output buffer, written
when its socket is writable, so a client that stops reading stalls nobody but itself, and is
dropped once more than a frame of replies piles up; one that sends a request while its get waits
(TCPStore never does) is dropped too, so waiters never outnumber clients. A client that breaks the
protocol, sends the wrong token or makes serving it raise is dropped; the server thread itself
only ends on ``stop``. Running out of file descriptors in ``accept`` pauses accepting for a
moment (the pending connections wait in the listen backlog) and is logged once per episode.
"""
from __future__ import annotations

import errno
import hmac
import selectors
import socket
import threading
import time
from typing import Dict, List, Optional, Set, Tuple

from pycoll._logging import logger
from pycoll.distributed import _store_wire as wire

_RECV_BYTES = 1 << 18
_ACCEPT_BACKOFF_S = 0.1


class _Client:
    """One connection: its socket, unparsed input, unsent output and whether it is on its way out."""

    __slots__ = ("sock", "peer", "inbox", "outbox", "events", "closing", "waiting")

    def __init__(self, sock: socket.socket, peer: str):
        self.sock, self.peer = sock, peer
        self.inbox, self.outbox = bytearray(), bytearray()
        self.events = selectors.EVENT_READ  # what the selector watches it for
        self.closing = False  # refused: closed once its last reply is out
        self.waiting = False  # its get waits for a key: a client asks one thing at a time


class StoreServer:
    """Serves the store on ``listener`` from a daemon thread until :meth:`stop`."""

    def __init__(self, listener: socket.socket, *, token: bytes, max_frame_bytes: int,
                 max_connections: int):
        self._listener = listener
        self._token = token
        self._max_frame = max_frame_bytes
        self._max_connections = max_connections
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._data: Dict[str, bytes] = {}
        self._clients: Set[_Client] = set()
        self._waiters: Dict[str, List[Tuple[float, _Client]]] = {}
        self._accept_paused_until: Optional[float] = None
        self._warned: Set[str] = set()
        self._stopping = False
        listener.setblocking(False)
        self._wake_r.setblocking(False)
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
                for key, mask in self._selector.select(self._select_timeout()):
                    if key.fileobj is self._listener:
                        self._accept()
                    elif key.fileobj is self._wake_r:
                        self._wake_r.recv(64)
                    else:
                        self._serve_client(key.data, mask)
                now = time.monotonic()
                self._expire(now)
                if self._accept_paused_until is not None and now >= self._accept_paused_until:
                    self._accept_paused_until = None
                    self._selector.register(self._listener, selectors.EVENT_READ)
        except Exception:  # only a bug of the loop itself can land here, never a client
            logger.exception("the rendezvous store's server stopped on an error")
        finally:
            for client in list(self._clients):
                client.sock.close()
            for sock in (self._listener, self._wake_r, self._wake_w):
                sock.close()
            self._selector.close()

    def _select_timeout(self) -> float:
        now = time.monotonic()
        deadlines = [d for waiters in self._waiters.values() for d, _ in waiters]
        if self._accept_paused_until is not None:
            deadlines.append(self._accept_paused_until)
        return max(0.0, min([wire.MAX_WAIT_S, *(d - now for d in deadlines)]))

    def _serve_client(self, client: _Client, mask: int) -> None:
        if client not in self._clients:  # dropped earlier in this round of events
            return
        try:
            if mask & selectors.EVENT_WRITE:
                self._flush(client)
            if mask & selectors.EVENT_READ and client in self._clients:
                self._read(client)
        except Exception as exc:  # one client's trouble is that client's alone
            self._failed(client, exc)

    def _failed(self, client: _Client, exc: Exception) -> None:
        self._drop(client, "failed", f"serving it failed ({type(exc).__name__}: {exc})")

    def _warn_once(self, reason: str, message: str, *args: object) -> None:
        """A warning the first time ``reason`` happens, debug lines after (clients can repeat it)."""
        level = "debug" if reason in self._warned else "warning"
        self._warned.add(reason)
        getattr(logger, level)(message, *args)

    # -- connections -----------------------------------------------------------------
    def _accept(self) -> None:
        try:
            sock, address = self._listener.accept()
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.ECONNABORTED:  # out of descriptors or memory: pause, never spin
                self._pause_accepting(exc)
            return
        self._warned.discard("accept")  # a later shortage is a new episode, worth a warning
        try:
            self._welcome(sock, f"{address[0]}:{address[1]}")
        except Exception as exc:  # reset before we could set it up, ...
            logger.debug("the rendezvous store could not take a connection: %s", exc)
            sock.close()

    def _welcome(self, sock: socket.socket, peer: str) -> None:
        """Greet a new connection, or refuse it when the store is full."""
        sock.setblocking(False)
        if len(self._clients) >= self._max_connections:
            self._warn_once("full", "the rendezvous store refuses connections: it already serves "
                            "max_connections=%d clients", self._max_connections)
            sock.send(wire.frame(bytes((wire.FULL,)), f"the store already serves its maximum of "
                                 f"{self._max_connections} clients".encode()))
            sock.close()
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = _Client(sock, peer)
        self._selector.register(sock, selectors.EVENT_READ, client)
        self._clients.add(client)
        self._reply(client, wire.OK)  # the greeting: the client may speak

    def _pause_accepting(self, exc: OSError) -> None:
        self._warn_once("accept", "the rendezvous store cannot accept connections (%s); it keeps "
                        "serving its clients and retries every %g s", exc, _ACCEPT_BACKOFF_S)
        self._selector.unregister(self._listener)
        self._accept_paused_until = time.monotonic() + _ACCEPT_BACKOFF_S

    def _drop(self, client: _Client, kind: str = "", why: str = "") -> None:
        """Forget ``client`` and close it; ``kind`` and ``why`` say what it did (logged)."""
        if client not in self._clients:
            return
        if kind:
            self._warn_once(kind, "the rendezvous store dropped the client at %s: %s", client.peer, why)
        self._clients.discard(client)
        self._selector.unregister(client.sock)
        for key in [k for k, waiters in self._waiters.items() if any(c is client for _, c in waiters)]:
            kept = [w for w in self._waiters[key] if w[1] is not client]
            if kept:
                self._waiters[key] = kept
            else:
                del self._waiters[key]
        client.sock.close()

    # -- input -----------------------------------------------------------------------
    def _read(self, client: _Client) -> None:
        try:
            chunk = client.sock.recv(_RECV_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._drop(client)
            return
        inbox = client.inbox
        inbox += chunk
        start = 0
        while len(inbox) - start >= 4:
            (size,) = wire.U32.unpack_from(inbox, start)
            if size > self._max_frame:
                self._drop(client, "oversized", f"oversized frame of {size} bytes (max_frame_bytes="
                                   f"{self._max_frame})")
                return
            if len(inbox) - start - 4 < size:
                break
            with memoryview(inbox) as view:
                body = bytes(view[start + 4:start + 4 + size])
            start += 4 + size
            self._handle(client, body)
            if client.closing or client not in self._clients:
                return
        del inbox[:start]

    def _handle(self, client: _Client, body: bytes) -> None:
        try:
            op, token, key, arg = wire.parse_request(body)
        except ValueError as exc:
            self._drop(client, "malformed", f"malformed request ({exc})")
            return
        if not hmac.compare_digest(token, self._token):
            self._refuse(client)
        elif client.waiting:  # pipelining gets would pile waiters up without bound
            self._drop(client, "pipelined", "it sent a request while its get was waiting")
        elif op == wire.SET:
            self._data[key] = arg
            self._reply(client, wire.OK)
            self._wake_waiters(key)
        elif op == wire.GET:
            self._get(client, key, arg)
        elif op == wire.ADD and len(arg) == wire.I64.size:
            self._add(client, key, wire.I64.unpack(arg)[0])
        else:
            self._drop(client, "malformed", f"malformed request (op {op!r} with {len(arg)} argument bytes)")

    def _refuse(self, client: _Client) -> None:
        """Say why, read nothing more, and close once that reply is out."""
        self._warn_once("token", "the rendezvous store refused the client at %s: its store token "
                        "differs from the store's", client.peer)
        client.closing = True
        self._reply(client, wire.REFUSED)

    def _get(self, client: _Client, key: str, arg: bytes) -> None:
        if len(arg) != wire.F64.size:
            self._drop(client, "malformed", f"malformed request (get with {len(arg)} argument bytes)")
            return
        (wait,) = wire.F64.unpack(arg)
        if not wire.valid_wait(wait):
            self._reply(client, wire.BAD, f"wait={wait!r}: it must be a finite number of seconds "
                                          f">= 0".encode())
        elif key in self._data:
            self._reply(client, wire.OK, self._data[key])
        else:
            deadline = time.monotonic() + min(wait, wire.MAX_WAIT_S)
            self._waiters.setdefault(key, []).append((deadline, client))
            client.waiting = True

    def _add(self, client: _Client, key: str, amount: int) -> None:
        try:
            value = int(self._data.get(key, b"0")) + amount
        except ValueError:
            self._reply(client, wire.BAD, f"key {key!r} holds a value that is not an integer".encode())
            return
        self._data[key] = str(value).encode()
        self._reply(client, wire.OK, wire.I64.pack(value))
        self._wake_waiters(key)

    def _wake_waiters(self, key: str) -> None:
        for _, waiter in self._waiters.pop(key, []):
            waiter.waiting = False
            self._reply(waiter, wire.OK, self._data[key])

    def _expire(self, now: float) -> None:
        for key in [k for k, waiters in self._waiters.items() if any(d <= now for d, _ in waiters)]:
            expired = [w for w in self._waiters[key] if w[0] <= now]
            kept = [w for w in self._waiters[key] if w[0] > now]
            if kept:
                self._waiters[key] = kept
            else:
                del self._waiters[key]
            for _, client in expired:
                client.waiting = False
                self._reply(client, wire.MISSING)

    # -- output ----------------------------------------------------------------------
    def _reply(self, client: _Client, status: int, payload: bytes = b"") -> None:
        if client not in self._clients:
            return
        client.outbox += wire.frame(bytes((status,)), payload)
        if len(client.outbox) > self._max_frame + 4:
            self._drop(client, "unread", "it stopped reading its replies (more than max_frame_bytes="
                               f"{self._max_frame} of them are waiting)")
            return
        try:
            self._flush(client)
        except Exception as exc:  # replies also go to waiters: whoever fails is dropped alone
            self._failed(client, exc)

    def _flush(self, client: _Client) -> None:
        """Write what the socket takes now; ask for EVENT_WRITE while anything is left."""
        if client.outbox:
            try:
                sent = client.sock.send(client.outbox)
            except BlockingIOError:
                sent = 0
            except OSError:
                self._drop(client)
                return
            del client.outbox[:sent]
        if client.closing and not client.outbox:
            self._drop(client)
            return
        events = ((0 if client.closing else selectors.EVENT_READ)
                  | (selectors.EVENT_WRITE if client.outbox else 0))
        if events != client.events:
            client.events = events
            self._selector.modify(client.sock, events, client)
