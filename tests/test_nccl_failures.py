"""Issue 6 on NCCL ranks (``pytest -m gpu``): dead ranks, timeouts, mismatches, stalls and bad
input, with the same workers as the CPU tests (their tensors live on the rank's device).

Ranks share one GPU as separate NCCL "hosts" (see rendezvous). The timeout is 10 s, not the
CPU tests' 2 s, because NCCL's communicator set-up is bounded by it too.
"""
import re
import time

import pytest

from conftest import assert_gone, assert_ok, launch, run_under_mpiexec, started_pids

pytestmark = pytest.mark.gpu
NCCL = {"PYCOLL_DEVICE": "gpu", "PYCOLL_BACKEND": "nccl", "NCCL_SOCKET_IFNAME": "lo", "NCCL_IB_DISABLE": "1"}


@pytest.mark.parametrize("mode, report", [
    ("sync", "CollectiveError: all_reduce #1 on world (ranks [0, 1]) did not complete within 10 s"),
    ("async", "CollectiveError: all_reduce #1 on world (ranks [0, 1]) did not complete within 10 s"),
    ("new_group", "CollectiveError: new_group #1 on world (ranks [0, 1]) did not complete within 10 s"),
])
def test_a_collective_a_peer_never_joins_aborts_nccl_and_ends_the_job(mode, report):
    start = time.monotonic()
    result = launch(2, "timeout.py", "120", mode, env={**NCCL, "PYCOLL_TIMEOUT": "10"}, timeout=180)
    elapsed = time.monotonic() - start
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert report in output, output
    assert elapsed < 60, f"rank 1 sleeps for 120 s; the job took {elapsed:.1f} s\n{output}"
    assert_gone(started_pids(output))


@pytest.mark.parametrize("mode, status", [("raise", 1), ("exit", 3), ("kill", None)])
def test_a_failing_rank_stops_an_nccl_job(mode, status):
    start = time.monotonic()
    result = launch(2, "failing.py", mode, env=NCCL, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode != 0 if status is None else result.returncode == status, output
    assert "failing.py OK" not in output
    if mode == "raise":
        assert "KeyError: 'planted failure'" in output and "pycoll: rank 1 failed" in output
    assert time.monotonic() - start < 60, output
    assert_gone(started_pids(output))


# How the rank that is left learns of its peer's exit is a race on NCCL: the exit notice (after
# its grace), NCCL's asynchronous error from the closed socket (the watchdog), or an error from
# the all_reduce itself when NCCL connects at a communicator's first call. Each ends the job.
LEFT_THE_JOB = re.compile(
    r"all_reduce #1 on world \(ranks \[0, 1\]\) cannot complete: rank\(s\) \[1\] left the job"
    r"|NCCL reported an error on world \(ranks \[0, 1\]\)"
    r"|all_reduce on the nccl communicator \(rank 0 of 2, device \d+\) failed")


def test_under_plain_mpiexec_an_nccl_rank_that_exits_ends_the_job(tmp_path):
    script = tmp_path / "leave.py"
    script.write_text(
        "import sys, time, pycoll, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "x = pycoll.ones([4])\n"
        "if dist.get_rank() == 1:\n"
        "    time.sleep(0.5)\n"
        "    sys.exit(3)\n"
        "dist.all_reduce(x)\n"
        "x.numpy()\n")
    start = time.monotonic()
    result = run_under_mpiexec(2, [str(script)], env=NCCL, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert LEFT_THE_JOB.search(output), output
    assert time.monotonic() - start < 60, output


def test_debug_mode_reports_mismatched_collectives_on_nccl():
    result = launch(3, "debug_checks.py", "mismatch", env={**NCCL, "PYCOLL_DEBUG": "1"}, timeout=180)
    assert_ok(result, expect_lines=3)


def test_a_long_wait_on_nccl_logs_a_stall_warning():
    result = launch(2, "debug_checks.py", "stall", env={**NCCL, "PYCOLL_STALL_WARN": "1"}, timeout=180)
    assert_ok(result, expect_lines=2)
    assert "all_reduce #1 on world (ranks [0, 1]) has waited" in result.stderr, result.stderr


def test_bad_input_on_nccl_raises_on_the_calling_rank_and_the_job_goes_on():
    assert_ok(launch(2, "bad_input_nccl.py", env=NCCL, timeout=180), expect_lines=2)
