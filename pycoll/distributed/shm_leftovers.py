"""MPICH's shared-memory segments a stopped job leaves behind, removed once the job has ended.

MPICH's ranks on one machine talk through files it creates in ``/dev/shm`` (``mpich_shm_*``) and
unlinks in ``MPI_Finalize``. A rank that never gets there (killed, or stopped by the launcher
after another rank failed: pycoll's rule for a dead rank) leaves them, and tmpfs keeps them, in
memory, until the machine restarts: one machine that had run many failing test jobs held 3,107
of them, 6 GB. So the launcher (``pycoll.launch``) and ``spawn`` note the segments present when
they start a job and, once it has ended, remove those that appeared meanwhile and that no live
process has mapped (``/proc/*/maps``): the segments of another job running beside it stay.
Without ``/dev/shm`` or ``/proc`` (not Linux) nothing is done.
"""
from __future__ import annotations

import os
from typing import FrozenSet

SHM_DIR = "/dev/shm"
PREFIX = "mpich_shm_"


def snapshot() -> FrozenSet[str]:
    """The MPICH segments in ``/dev/shm`` now (none where there is no such folder)."""
    try:
        return frozenset(name for name in os.listdir(SHM_DIR) if name.startswith(PREFIX))
    except OSError:
        return frozenset()


def _mapped() -> FrozenSet[str]:
    """The MPICH segments some live process has mapped (those whose maps this user may read)."""
    marker = os.path.join(SHM_DIR, PREFIX)
    names = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as maps:
                for line in maps:
                    at = line.find(marker)
                    if at >= 0:
                        names.add(line[at + len(SHM_DIR) + 1:].split()[0])
        except OSError:  # gone meanwhile, or another user's
            continue
    return frozenset(names)


def unclaimed(before: FrozenSet[str]) -> FrozenSet[str]:
    """The segments that appeared since ``before`` (a :func:`snapshot`) and that no live process
    maps: a stopped job's leftovers (empty without ``/proc``, where nothing can tell)."""
    new = snapshot() - before
    if not new or not os.path.isdir("/proc"):
        return frozenset()
    return new - _mapped()


def remove_left(before: FrozenSet[str]) -> int:
    """Remove the :func:`unclaimed` segments; how many were removed."""
    removed = 0
    for name in unclaimed(before):
        try:
            os.unlink(os.path.join(SHM_DIR, name))
            removed += 1
        except OSError:  # removed by its job meanwhile, or not ours
            continue
    return removed
