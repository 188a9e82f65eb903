"""Files written whole, then put in place: a reader (another rank reading the path the ranks all
write, say) sees the old file or the new one, never half of one."""
from __future__ import annotations

import os
import secrets
from typing import IO, Any, Callable


def write_whole(path: str, write: Callable[[IO[Any]], None], binary: bool = False, durable: bool = False) -> None:
    """``write(f)`` into a temporary file beside ``path`` (text, or bytes with ``binary``), then
    moved onto ``path``; with ``durable`` the data reach the disk before the move."""
    tmp = f"{path}.{os.getpid()}-{secrets.token_hex(4)}.pycoll-tmp"
    try:
        with open(tmp, "wb" if binary else "w") as f:
            write(f)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
