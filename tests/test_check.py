"""PYCOLL_CHECK: ranks that call collectives differently all get a CollectiveError listing each
rank's call, the job goes on (a non-blocking call that differs, already started, ends it), a
valid program with non-blocking calls on two groups in different orders still runs, and the
check never removes a timeout. Without it, an engine's own
failure is a CollectiveError naming the call."""
import time

import numpy as np
import pytest
from conftest import assert_ok, launch

from pycoll.distributed import check

CASES = ["dtype", "op", "broadcast_dtype", "scatter_src", "all_gather_size", "reduce_scatter_size",
         "alltoall_or_all_gather", "long_shape", "refused"]


def test_the_description_names_everything_a_mismatch_can_differ_in():
    text = check.describe("reduce", 3, np.zeros((2, 5), np.float16), op=1, root=4, blocking=False)
    assert text == "reduce #3 float16[2, 5] op=ReduceOp.MAX root=4 sync_op=False"
    assert check.describe("all_reduce", 1, np.zeros(2), op="sum").endswith("op='sum'")
    long = check.describe("all_reduce", 1, np.zeros((1,) * 60), op=0)
    assert long.endswith("op=ReduceOp.SUM"), "a long shape must not push the op out"


def test_the_digest_is_the_same_for_the_same_call_and_differs_otherwise():
    a = check.describe("all_reduce", 1, np.zeros(4, np.float32), op=0).encode()
    b = check.describe("all_reduce", 1, np.zeros(4, np.int32), op=0).encode()
    assert check._digest(a) == check._digest(a) != check._digest(b)
    assert 0 <= check._digest(a) < 2 ** 63


@pytest.mark.parametrize("case", CASES)
def test_a_mismatch_is_reported_on_every_rank(case):
    assert_ok(launch(2, "mismatches.py", case, env={"PYCOLL_CHECK": "1"}), expect_lines=2)


def test_a_non_blocking_call_that_differs_ends_the_job_naming_each_rank_s_call():
    """Rank 1's non-blocking all_reduce had started when its comparison came back different (MPI
    cannot take it back); rank 0's blocking one raised before it moved anything."""
    result = launch(2, "mismatches.py", "sync_op", env={"PYCOLL_CHECK": "1"})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert ("rank 0: all_reduce #1 float32[4] op=ReduceOp.SUM sync_op=True; rank 1: all_reduce #1 float32[4] "
            "op=ReduceOp.SUM sync_op=False; this rank's call (sync_op=False) had started") in output, output


def test_non_blocking_calls_on_two_groups_made_in_different_orders_run_under_the_check():
    """A valid program (an async call on one group, a blocking one on another, in the other order
    on the peer) that a blocking comparison before the async call turned into a deadlock."""
    assert_ok(launch(2, "check_async_groups.py", env={"PYCOLL_CHECK": "1"}, timeout=60), expect_lines=2)


def test_sends_and_receives_of_some_ranks_do_not_count_as_collectives():
    """Call numbers compared are the collectives' alone (a send from 0 to 1 once made the next
    barrier "barrier #2" on ranks 0 and 1 but "#1" on rank 2: a false mismatch)."""
    assert_ok(launch(3, "check_after_p2p.py", env={"PYCOLL_CHECK": "1"}), expect_lines=3)


def test_a_later_mismatch_without_the_check_is_refused_on_every_rank():
    """Once MPI failed the call (Message truncated), or completed it with wrong data."""
    assert_ok(launch(2, "mismatches.py", "later"), expect_lines=2)


@pytest.mark.parametrize("mode, words", [
    ("hang", "all_reduce #1 on world (ranks [0, 1]) did not complete within 3 s"),
    ("os_exit", "all_reduce #1 on world (ranks [0, 1]) cannot complete: rank(s) [1] left the job"),
])
def test_the_check_runs_under_the_watchdog(mode, words):
    start = time.monotonic()
    result = launch(2, "failing.py", mode, env={"PYCOLL_CHECK": "1", "PYCOLL_TIMEOUT": "3"})
    output = result.stdout + result.stderr
    assert result.returncode != 0 and words in output, output
    assert time.monotonic() - start < 60, output
