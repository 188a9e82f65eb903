"""A worker's RPC server: a daemon thread accepting calls, each served on a thread of its own.

One connection carries one call (:mod:`pycoll.distributed.rpc.messages`). Every call runs on its
own daemon thread, so a function that itself makes RPCs (worker0 -> worker1 -> worker0, at any
depth) never waits for a busy pool, and a function that never returns cannot keep the process
from exiting. Requests without the job's token are refused unread; a client that sends nothing
is dropped after the job's timeout.
"""
from __future__ import annotations

import hmac
import socket
import threading
import time

from pycoll._logging import logger
from pycoll.distributed import _store_wire as wire
from pycoll.distributed.rpc.messages import CALL, error_reply, read_frame, run_call

_ACCEPT_POLL_S = 0.1  # how soon the accepting thread notices stop()


class RpcServer:
    """Listens at ``ip:port`` (0: a free port, see :attr:`port`) from its making to :meth:`stop`,
    running calls from :meth:`start` on (connections made before wait in the listen backlog)."""

    def __init__(self, ip: str, port: int, *, token: bytes, io_timeout: float):
        try:
            family = socket.getaddrinfo(ip, port, type=socket.SOCK_STREAM)[0][0]
            self._listener = socket.create_server((ip, port), family=family, backlog=128)
        except OSError as exc:
            raise RuntimeError(f"init_rpc: cannot serve RPCs at {ip}:{port}: {exc} (is "
                               f"PADDLE_WORKER_ENDPOINT an address of this host and a free port?)") from None
        self.ip, self.port = ip, self._listener.getsockname()[1]
        self._token = token
        self._io_timeout = io_timeout
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True, name=f"pycoll-rpc-server-{self.port}")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting calls and close the listening socket (calls being served finish on their own)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        self._listener.close()

    def _accept(self) -> None:
        self._listener.settimeout(_ACCEPT_POLL_S)
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError as exc:  # out of descriptors, say: the caller retries on its side
                logger.warning("rpc server at %s:%d: accept failed: %s", self.ip, self.port, exc)
                time.sleep(_ACCEPT_POLL_S)
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True, name="pycoll-rpc-call").start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                op, token, fn_name, payload = wire.parse_request(
                    read_frame(conn, time.monotonic() + self._io_timeout))
            except (OSError, ValueError) as exc:
                logger.debug("rpc server at %s:%d: dropped a request: %s", self.ip, self.port, exc)
                return
            if not hmac.compare_digest(token, self._token):
                reply = error_reply(wire.REFUSED, "the request's PYCOLL_STORE_TOKEN is not this job's")
            elif op != CALL:
                reply = error_reply(wire.BAD, f"unknown op {op!r}")
            else:
                reply = run_call(payload)
            try:
                conn.settimeout(self._io_timeout)
                conn.sendall(reply)
            except OSError as exc:  # the caller gave up (its timeout) or exited
                logger.debug("rpc server at %s:%d: the caller of %s left before its reply: %s",
                             self.ip, self.port, fn_name, exc)
