"""The names of the DataLoader's shared-memory batch files, ``/dev/shm/pycoll_dl_<pid>_...``
(``pycoll.io.shared_batches`` makes them; ``pycoll.distributed.job_leftovers`` tidies a killed
job's): which training process a file belongs to, and whether that process has ended. Here, below
both, so that the two read the names alike."""
from __future__ import annotations

from typing import Optional

from pycoll._pids import alive

DIR = "/dev/shm"
PREFIX = "pycoll_dl_"


def owner(name: str) -> Optional[int]:
    """The pid of the training process a batch file's ``name`` belongs to (None: not one's)."""
    if not name.startswith(PREFIX):
        return None
    pid = name[len(PREFIX):].split("_", 1)[0]
    return int(pid) if pid.isdigit() else None


def owner_ended(name: str) -> bool:
    """Whether ``name`` is a batch file whose training process no longer runs."""
    pid = owner(name)
    return pid is not None and not alive(pid)
