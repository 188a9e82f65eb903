"""Whether a process id still names a live process (for files named after their writer's pid)."""
from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (or is a zombie not yet reaped: its pid is not free);
    another user's counts as running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
