"""MPICH's /dev/shm segments that a stopped job leaves are removed when its launcher ends
(pycoll.distributed.shm_leftovers): a rank killed by SIGKILL never reaches MPI_Finalize, which
would unlink them, and tmpfs would keep them in memory until the machine restarts."""
import mmap
import os
import secrets
import time

import pytest
from conftest import launch

from pycoll.distributed import shm_leftovers

pytestmark = pytest.mark.skipif(not os.path.isdir(shm_leftovers.SHM_DIR) or not os.path.isdir("/proc"),
                                reason="needs Linux's /dev/shm and /proc")


def _segment(size=4096):
    path = os.path.join(shm_leftovers.SHM_DIR, f"{shm_leftovers.PREFIX}pycolltest_{secrets.token_hex(4)}_0")
    with open(path, "wb") as f:
        f.write(b"\0" * size)
    return path


def test_new_unmapped_segments_go_and_mapped_or_older_ones_stay():
    older = _segment()
    before = shm_leftovers.snapshot()
    left, in_use = _segment(), _segment()
    with open(in_use, "r+b") as f, mmap.mmap(f.fileno(), 4096) as mapped:  # a live job's segment
        try:
            assert shm_leftovers.remove_left(before) == 1
            assert not os.path.exists(left) and os.path.exists(in_use) and os.path.exists(older)
            assert mapped[0] == 0
        finally:
            for path in (older, in_use):
                os.unlink(path)
    assert shm_leftovers.remove_left(shm_leftovers.snapshot()) == 0  # nothing new: nothing scanned


def test_a_job_whose_rank_was_killed_leaves_no_segment():
    before = shm_leftovers.snapshot()
    result = launch(2, "failing.py", "kill")
    assert result.returncode != 0, result.stdout + result.stderr
    # A job running beside it (another test worker's) may hold segments of its own: mapped ones,
    # or, for a moment, a stopped job's that its own launcher is about to remove. This job's
    # launcher has ended: what it left now stays.
    deadline = time.monotonic() + 10
    while shm_leftovers.unclaimed(before) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert shm_leftovers.unclaimed(before) == frozenset()
