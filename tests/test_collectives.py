"""The collectives on real MPI ranks: values, groups, tasks, bad input and timeouts."""
import time

import pytest

from conftest import assert_gone, assert_ok, launch, started_pids


@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_every_collective_dtype_size_root_op(nprocs):
    assert_ok(launch(nprocs, "collectives.py"), expect_lines=nprocs)


@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_gather_alltoall_single_objects_batches_and_stream_variants(nprocs):
    assert_ok(launch(nprocs, "more_collectives.py"), expect_lines=nprocs)


@pytest.mark.parametrize("nprocs", [3, 4])
def test_groups_tasks_and_bad_arguments(nprocs):
    assert_ok(launch(nprocs, "groups_tasks.py"), expect_lines=nprocs)


@pytest.mark.parametrize("mode, report", [
    ("sync", "pycoll.CollectiveError: all_reduce #1 on world (ranks [0, 1])"),
    ("async", "caught CollectiveError: all_reduce #1 on world (ranks [0, 1])"),
    ("new_group", "pycoll.CollectiveError: new_group on group 1 (ranks [0, 1])"),  # watched as the group in the making
])
def test_a_collective_a_peer_never_joins_ends_with_collective_error(mode, report):
    start = time.monotonic()
    result = launch(2, "timeout.py", "60", mode, env={"PYCOLL_TIMEOUT": "2"}, timeout=90)
    elapsed = time.monotonic() - start
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert report in output and "within 2 s" in output, output
    # rank 1 sleeps for 60 s: the job must have been stopped long before
    assert elapsed < 30, f"took {elapsed:.1f} s\n{output}"
    assert_gone(started_pids(output))


def test_debug_mode_reports_mismatched_collectives_on_every_rank():
    result = launch(3, "debug_checks.py", "mismatch", env={"PYCOLL_DEBUG": "1"})
    assert_ok(result, expect_lines=3)
    # and logs every collective, shown without PYCOLL_LOG_LEVEL
    assert "pycoll: all_reduce #1 float32[" in result.stderr and "on world (ranks [0, 1, 2])" in result.stderr, \
        result.stderr


def test_a_long_wait_logs_a_stall_warning_naming_the_collective():
    result = launch(2, "debug_checks.py", "stall", env={"PYCOLL_STALL_WARN": "1"})
    assert_ok(result, expect_lines=2)
    assert "all_reduce #1 on world (ranks [0, 1]) has waited" in result.stderr, result.stderr


@pytest.mark.parametrize("nprocs", [2, 3])
def test_arrays_of_other_frameworks_are_moved_in_place(nprocs):
    assert_ok(launch(nprocs, "foreign_arrays.py"), expect_lines=nprocs)


@pytest.mark.parametrize("when", ["first", "later"])
def test_ranks_reducing_different_sizes_are_refused_on_every_rank_naming_them(when):
    """On the group's first call and its 21st alike. The timeout here (60 s) is what a hang would run
    into."""
    assert_ok(launch(2, "reduce_sizes_differ.py", when, env={"PYCOLL_TIMEOUT": "600"}, timeout=60),
              expect_lines=2)


@pytest.mark.parametrize("where", ["world", "group"])
def test_rooted_calls_given_different_roots_are_refused_on_every_rank(where):
    """A probe: broadcast(x, src=rank) on two ranks returned rank 0's data on both, silently (and
    reduce, scatter alike; gather stalled until the stall notices ended the job)."""
    assert_ok(launch(2, "rooted_roots.py", where, timeout=60), expect_lines=2)


@pytest.mark.parametrize("where", ["world", "group", "kinds"])
def test_collectives_given_different_sizes_dtypes_or_ops_are_refused_on_every_rank(where):
    """A probe: an all_gather of an uneven split's shards (19 and 18 rows) returned the short
    rank's block padded with whatever followed it in memory, and the job exited 0."""
    assert_ok(launch(2, "tensor_agreement.py", where, timeout=60), expect_lines=2)


@pytest.mark.parametrize("script, case, words", [
    ("tensor_agreement.py", "task",
     "pycoll: pycoll.distributed.all_gather: the ranks of world (ranks [0, 1]) gave different tensors (rank 0: float32 "
     "of 3 elements; rank 1: float32 of 2 elements); every rank must give the same dtype and number of elements; this "
     "rank's call (sync_op=False) had started, so the group cannot go on: stopping the job"),
    ("rooted_roots.py", "task",
     "pycoll: pycoll.distributed.broadcast: the ranks of world (ranks [0, 1]) gave different src [0, 1] (in rank "
     "order); every rank must name the same (a global rank); this rank's call (sync_op=False) had started, so the "
     "group cannot go on: stopping the job"),
    # a probe: past the group's 8th collective a non-blocking all_reduce of 4 and 5 elements gave
    # rank 1 an element of garbage, and the job went on; now the next comparison ends it
    ("tensor_agreement.py", "late_task",
     "pycoll: pycoll.distributed: the ranks of world (ranks [0, 1]) made different collectives among the calls that "
     "ran without a comparison before this one (this rank's #17 to #21; ranks' counts of them [5, 5])"),
])
def test_a_non_blocking_call_that_differs_ends_the_job_naming_it(script, case, words):
    result = launch(2, script, case, timeout=60)
    assert result.returncode != 0, result.stdout + result.stderr
    assert words in result.stderr, result.stderr
    assert "was not stopped" not in result.stdout + result.stderr
