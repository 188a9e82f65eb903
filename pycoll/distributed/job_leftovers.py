"""The files a stopped MPI job leaves behind, removed once the job has ended.

Three kinds, each removed by its maker when it ends tidily:

- MPICH's shared-memory segments, ``/dev/shm/mpich_shm_*``, through which its ranks on one machine
  talk; unlinked in ``MPI_Finalize``. tmpfs keeps them, in memory, until the machine restarts: one
  machine that had run many failing test jobs held 3,107 of them, 6 GB.
- Hydra's topology files, ``/tmp/hydra_hwloc_xmlfile_*``: each of its proxies
  (``hydra_pmi_proxy``) writes the machine's hwloc topology there for its ranks and unlinks it as
  it exits. 5.5 KB each; a machine that had run the test suite a few times held 609.
- The DataLoader's shared-memory batches, ``/dev/shm/pycoll_dl_<pid>_*``
  (``pycoll.io.shared_batches``): a batch a worker wrote that the training process ``<pid>`` had
  not taken when it was killed.

A rank that never reaches ``MPI_Finalize`` (killed, or stopped by the launcher after another rank
failed: pycoll's rule for a dead rank), and a proxy stopped with it, leave them. So the launcher
(``pycoll.launch``) and ``spawn`` note the files present when they start a job and, once it has
ended, remove those that appeared meanwhile and that no live process holds (has open or mapped,
``/proc/*/fd`` and ``/proc/*/maps``): the files of another job running beside it stay. MPICH's
and Hydra's files are held from the moment they are made (opened, then mapped); a batch file is
not held between its worker's write and its taking, so it counts as a leftover only once the
training process its name gives has ended. A neighbour's new file is never taken. Without
``/proc`` (not Linux) nothing is removed.
"""
from __future__ import annotations

import os
import time
from typing import FrozenSet, Iterable, Tuple

from pycoll import _batch_files
from pycoll.distributed._stop_peers import rank_running

# (folder, name prefix) of each kind
KINDS: Tuple[Tuple[str, str], ...] = (("/dev/shm", "mpich_shm_"), ("/tmp", "hydra_hwloc_xmlfile_"),
                                      (_batch_files.DIR, _batch_files.PREFIX))


def snapshot() -> FrozenSet[str]:
    """The paths of the files of every kind present now."""
    paths = set()
    for folder, prefix in KINDS:
        try:
            paths.update(os.path.join(folder, name) for name in os.listdir(folder) if name.startswith(prefix))
        except OSError:  # no such folder here
            continue
    return frozenset(paths)


def _held(paths: FrozenSet[str]) -> FrozenSet[str]:
    """Those of ``paths`` that some live process has open or mapped (of the processes whose
    ``/proc`` entries this user may read)."""
    held = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            for fd in os.listdir(fd_dir):
                try:
                    target = os.readlink(os.path.join(fd_dir, fd))
                except OSError:  # closed meanwhile
                    continue
                if target in paths:
                    held.add(target)
            with open(f"/proc/{pid}/maps") as maps:
                for line in maps:
                    fields = line.split(maxsplit=5)
                    if len(fields) == 6 and fields[5].rstrip("\n") in paths:
                        held.add(fields[5].rstrip("\n"))
        except OSError:  # gone meanwhile, or another user's
            continue
    return frozenset(held)


def unclaimed(before: FrozenSet[str]) -> FrozenSet[str]:
    """The files that appeared since ``before`` (a :func:`snapshot`) and that no live process
    holds: a stopped job's leftovers (none without ``/proc``, where nothing can tell)."""
    new = snapshot() - before
    if not new or not os.path.isdir("/proc"):
        return frozenset()
    return frozenset(path for path in new - _held(new) if not _owner_running(path))


def _owner_running(path: str) -> bool:
    """Whether ``path`` is a DataLoader batch file whose training process still runs."""
    name = os.path.basename(path)
    return _batch_files.owner(name) is not None and not _batch_files.owner_ended(name)


def remove_left(before: FrozenSet[str], ranks: Iterable[int] = (), wait_s: float = 2.0) -> int:
    """Remove the :func:`unclaimed` files; how many were removed. ``ranks``: the process ids of the
    job's ranks, whose end is waited for first (``wait_s`` at most): a rank MPI's launcher has
    just stopped may still hold its segments for a moment, and would keep them for good."""
    deadline = time.monotonic() + wait_s
    while any(rank_running(pid) for pid in ranks) and time.monotonic() < deadline:
        time.sleep(0.02)
    removed = 0
    for path in unclaimed(before):
        try:
            os.unlink(path)
            removed += 1
        except OSError:  # removed by its job meanwhile, or not ours
            continue
    return removed
