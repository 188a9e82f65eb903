"""The rendezvous store's frames, shared by its server and its client.

The format is described in :mod:`pycoll.distributed.store`; this module only encodes and decodes
it, and holds the limits both ends agree on.
"""
from __future__ import annotations

import math
import struct
from typing import Tuple

from pycoll.distributed.placement import MAX_TIMEOUT_S

SET, GET, ADD = b"S", b"G", b"A"
OPS = (SET, GET, ADD)
# reply statuses
OK, MISSING, BAD, REFUSED, FULL = 0, 1, 2, 3, 4

U32 = struct.Struct("!I")
I64 = struct.Struct("!q")
F64 = struct.Struct("!d")
_U16 = struct.Struct("!H")

DEFAULT_MAX_FRAME_BYTES = 64 << 20  # NCCL ids and small metadata travel; 64 MiB is ample
# Longer waits are clamped to pycoll's longest timeout (the selector cannot sleep past ~2.1e6 s).
MAX_WAIT_S = MAX_TIMEOUT_S
# The token travels in every request; a long one would only slow every message down.
MAX_TOKEN_BYTES = 1024


def frame(*parts: bytes) -> bytes:
    """One frame: its length, then its parts."""
    body = b"".join(parts)
    return U32.pack(len(body)) + body


def request(op: bytes, token: bytes, key: bytes, arg: bytes) -> bytes:
    """The frame of one request (``token`` may be empty: an unauthenticated store)."""
    return frame(op, _U16.pack(len(token)), token, U32.pack(len(key)), key, arg)


def request_size(token: bytes, key: bytes, arg: bytes) -> int:
    """The size of a request's body: what ``max_frame_bytes`` bounds."""
    return 1 + _U16.size + len(token) + U32.size + len(key) + len(arg)


def parse_request(body: bytes) -> Tuple[bytes, bytes, str, bytes]:
    """``(op, token, key, argument)`` of a request's body; ValueError when it is malformed."""
    if len(body) < 1 + _U16.size:
        raise ValueError("a request shorter than its header")
    op = body[:1]
    (token_len,) = _U16.unpack_from(body, 1)
    key_at = 1 + _U16.size + token_len
    if len(body) < key_at + U32.size:
        raise ValueError("a request shorter than its token")
    token = body[1 + _U16.size:key_at]
    (key_len,) = U32.unpack_from(body, key_at)
    arg_at = key_at + U32.size + key_len
    if len(body) < arg_at:
        raise ValueError("a request shorter than its key")
    return op, token, body[key_at + U32.size:arg_at].decode(), body[arg_at:]


def valid_wait(wait: float) -> bool:
    """Whether a get may wait ``wait`` seconds (finite and >= 0; larger ones are clamped)."""
    return math.isfinite(wait) and wait >= 0
