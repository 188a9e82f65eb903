"""Files written whole, then put in place: a reader (another rank reading the path the ranks all
write, say) sees the old file or the new one, never half of one."""
from __future__ import annotations

import os
import secrets
from typing import IO, Callable


def write_whole(path: str, write: Callable[[IO[str]], None]) -> None:
    """``write(f)`` into a temporary text file beside ``path``, then moved onto ``path``."""
    tmp = f"{path}.{os.getpid()}-{secrets.token_hex(4)}.pycoll-tmp"
    try:
        with open(tmp, "w") as f:
            write(f)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
