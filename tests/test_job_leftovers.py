"""The files a stopped job leaves (MPICH's /dev/shm segments, Hydra's /tmp topology files) are
removed when its launcher ends (pycoll.distributed.job_leftovers): a rank killed by SIGKILL never
reaches MPI_Finalize, which would unlink its segments, nor does a proxy stopped with it unlink its
topology file."""
import fcntl
import mmap
import os
import secrets
import subprocess
import sys
import time

import pytest
from conftest import launch

from pycoll.distributed import job_leftovers

pytestmark = pytest.mark.skipif(not all(os.path.isdir(folder) for folder, _ in job_leftovers.KINDS)
                                or not os.path.isdir("/proc"), reason="needs Linux's /dev/shm, /tmp and /proc")


@pytest.fixture(autouse=True)
def one_test_at_a_time():
    """This file's tests make files of every kind and remove what is new: two of them at once
    (pytest -n 2) take each other's files. An exclusive lock runs them in turn."""
    with open(os.path.join("/tmp", "pycoll-test-job-leftovers.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _file(kind, size=4096):
    folder, prefix = job_leftovers.KINDS[kind]
    path = os.path.join(folder, f"{prefix}pycolltest_{secrets.token_hex(4)}")
    with open(path, "wb") as f:
        f.write(b"\0" * size)
    return path


@pytest.mark.parametrize("kind", range(len(job_leftovers.KINDS)))
def test_new_unheld_files_go_and_mapped_open_or_older_ones_stay(kind):
    # A launched job of another test worker, ending meanwhile, may take the unheld files first
    # (``left``; ``older`` too, new to that job) or leave its own: what this snapshot's removal
    # does to this test's files is asserted, not a count the other job may have changed.
    older = _file(kind)
    before = job_leftovers.snapshot()
    left, mapped_one, open_one = _file(kind), _file(kind), _file(kind)
    with open(mapped_one, "r+b") as f:
        mapped = mmap.mmap(f.fileno(), 4096)  # a live job's segment (its descriptor closed)
    try:
        with open(open_one, "rb"):  # a live proxy's topology file
            mine = {older, left, mapped_one, open_one}
            assert job_leftovers.unclaimed(before) & mine <= {left}  # (others' jobs may leave files too)
            older_there = os.path.exists(older)
            job_leftovers.remove_left(before)
            assert not os.path.exists(left)
            assert os.path.exists(older) == older_there  # not new to this snapshot: never taken by it
            assert all(os.path.exists(path) for path in (mapped_one, open_one))
            assert mapped[0] == 0
    finally:
        mapped.close()
        for path in (older, mapped_one, open_one):
            if os.path.exists(path):
                os.unlink(path)
    assert job_leftovers.remove_left(job_leftovers.snapshot()) == 0  # nothing new: nothing scanned


def test_a_job_whose_rank_was_killed_leaves_nothing():
    before = job_leftovers.snapshot()
    result = launch(2, "failing.py", "kill")
    assert result.returncode != 0, result.stdout + result.stderr
    # A job running beside it (another test worker's) may hold files of its own, or, for a
    # moment, have stopped and left some that its own launcher is about to remove. This job's
    # launcher has ended: what it left now stays.
    deadline = time.monotonic() + 10
    while job_leftovers.unclaimed(before) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job_leftovers.unclaimed(before) == frozenset()


def test_a_batch_file_stays_while_its_training_process_runs():
    # a DataLoader batch file is not held between its worker's write and its taking: its name's
    # training process decides (this one runs; a finished child's does not)
    folder, prefix = "/dev/shm", "pycoll_dl_"
    before = job_leftovers.snapshot()
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True, timeout=60)
    ours, orphan = (os.path.join(folder, f"{prefix}{pid}_0_1_{secrets.token_hex(4)}")
                    for pid in (os.getpid(), int(child.stdout)))
    for path in (ours, orphan):
        with open(path, "wb") as f:
            f.write(b"\0" * 64)
    try:
        assert job_leftovers.unclaimed(before) == {orphan}
        # (a job's launcher on another test worker may take the orphan first: not counted here)
        assert job_leftovers.remove_left(before) in (0, 1)
        assert os.path.exists(ours) and not os.path.exists(orphan)
    finally:
        for path in (ours, orphan):
            if os.path.exists(path):
                os.unlink(path)
