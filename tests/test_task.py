"""Non-blocking work: tasks keep their engine's buffers alive, the group owns them whatever the
caller drops, errors of dropped tasks surface at the group's next call, and a wait notices a peer
that left. In-process cases drive the bookkeeping with stand-in requests; the rest run real ranks."""
import os
import time

import numpy as np
import pytest
from conftest import assert_ok, launch

from pycoll import CollectiveError
from pycoll.distributed import _failure
from pycoll.distributed.group import Group
from pycoll.distributed.task import Task, drain, memory_spans, retire, take_failure


class Request:
    """A stand-in engine request: complete once ``done`` is set; ``error`` makes ``test`` raise."""

    def __init__(self, done=False, error=None):
        self.done, self.error, self.starts = done, error, []

    def test(self, start=True):
        self.starts.append(start)
        if self.error is not None:
            raise self.error
        return self.done

    def join_stream(self):
        return False


@pytest.fixture
def group(monkeypatch):
    monkeypatch.setattr(_failure, "_broken", None)  # an engine error marks the process broken
    return Group(0, [0, 1], 0, None, 0.05)


def started(group, request, finish=None, keep=()):
    group.seq += 1
    task = Task(request, group, "all_reduce", group.seq, finish, keep)
    group.pending.append(task)
    return task


def test_a_task_keeps_its_arrays_until_it_completes(group):
    buffers = (object(), object())
    request = Request()
    task = started(group, request, keep=buffers)
    assert task._keep is buffers and not task.is_completed()
    request.done = True
    assert task.is_completed() and task._keep is None and task._request is None
    assert not task.is_sync(), "completed, but made by a non-blocking call"
    assert Task(None, group, "all_reduce", group.seq).is_sync()  # a blocking call's task


class RefusesItsInterface:
    """As torch's CUDA tensor that requires grad: asking for its interface raises RuntimeError."""

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")


def test_memory_spans_of_arrays_views_and_objects_that_refuse_their_interface():
    x = np.arange(12, dtype=np.float32)
    lo = x.__array_interface__["data"][0]
    assert [span[:2] for span in memory_spans([x[2:5], [x[::-4]], (x[:0],)])] == [(lo + 8, lo + 20),
                                                                                 (lo + 12, lo + 48)]
    assert memory_spans([RefusesItsInterface(), "text", 3]) == [], \
        "the call's own checks refuse such an object, naming the argument"


def test_retire_lets_go_of_completed_tasks_oldest_first_without_starting_held_back_ones(group):
    first, second = Request(done=True), Request()
    delivered = []
    started(group, first, finish=lambda: delivered.append(1))
    started(group, second, finish=lambda: delivered.append(2))
    started(group, Request(done=True), finish=lambda: delivered.append(3))
    retire(group)
    assert delivered == [1] and len(group.pending) == 2  # the third waits behind the second
    assert second.starts == [False], "retiring must not start a call the engine holds back"
    second.done = True
    retire(group)
    assert delivered == [1, 2, 3] and not group.pending


def test_the_error_of_a_dropped_task_is_taken_once_for_the_groups_next_call(group):
    started(group, Request(error=RuntimeError("MPI_ERR_TRUNCATE")))
    retire(group)
    assert not group.pending
    failure = take_failure(group)
    assert isinstance(failure, CollectiveError)
    assert "all_reduce #1 on world (ranks [0, 1]) failed on rank 0" in str(failure)
    assert take_failure(group) is None  # taken once
    assert _failure._broken == "all_reduce #1 on world (ranks [0, 1])"  # named at exit


def test_a_dropped_task_s_error_leaves_sends_and_receives_paired_and_is_said_at_exit():
    """A probe: the error took the place of the next recv, and every later message arrived a
    step late."""
    result = launch(2, "dropped_failure.py", "p2p", timeout=90)
    assert_ok(result, expect_lines=2)
    assert "a task nobody waited for failed on world (ranks [0, 1]), and no later collective" in result.stderr


@pytest.mark.parametrize("check", ["off", "on"])
def test_a_dropped_task_s_error_takes_the_place_of_the_next_call_which_the_peers_learn(check):
    """Rank 1's dropped irecv failed; its next all_reduce raises that error instead of being made.
    Without PYCOLL_CHECK rank 0 made that all_reduce: the job ends, naming both (the calls paired
    a step apart gave wrong sums); with it, rank 0's comparison names the refusal and the job goes
    on in step."""
    env = {"PYCOLL_CHECK": "1"} if check == "on" else None
    result = launch(2, "dropped_failure.py", check, env=env, timeout=90)
    if check == "on":
        assert_ok(result, expect_lines=2)
        return
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert ("rank 1 refused all_reduce #1 on world (ranks [0, 1]) (CollectiveError: recv #1 from rank 0 on "
            "world (ranks [0, 1]): a message longer than the buffer arrived") in output, output
    assert "and rank(s) [0] made it" in output, output


def test_a_kept_task_reports_its_own_error_too(group):
    task = started(group, Request(error=RuntimeError("boom")))
    retire(group)
    with pytest.raises(CollectiveError, match="boom"):
        task.wait()


def test_drain_waits_for_every_task_and_keeps_a_timed_out_one_pending(group):
    started(group, Request(done=True))
    stuck = started(group, Request())
    with pytest.raises(CollectiveError, match="did not complete within 0.05 s"):
        drain(group)
    assert list(group.pending) == [stuck], "a call that may still write into its arrays stays owned"


def test_wait_refuses_a_bad_timeout(group):
    task = started(group, Request())
    for bad in (float("nan"), -1, "soon", True):
        with pytest.raises(ValueError, match="Task.wait: timeout="):
            task.wait(bad)


@pytest.mark.parametrize("case", ["kept", "dropped", "exit"])
def test_pending_work_keeps_its_memory(case):
    assert_ok(launch(2, "pending_memory.py", case), expect_lines=2)


STRICT_GPU = {"PYCOLL_BACKEND": "nccl", "NCCL_SOCKET_IFNAME": "lo", "NCCL_IB_DISABLE": "1"}


@pytest.mark.parametrize("nprocs, backend", [(2, "cpu"), (3, "cpu"), (2, "nccl")])
def test_calls_on_a_tensor_a_task_holds_run_after_it(nprocs, backend):
    env = STRICT_GPU if backend == "nccl" else None
    assert_ok(launch(nprocs, "overlapping_tasks.py", backend, env=env), expect_lines=nprocs)


def test_dropped_tasks_with_the_system_allocator():
    """PYTHONMALLOC=malloc hands freed buffers straight back to the C allocator: reuse is quick."""
    assert_ok(launch(2, "pending_memory.py", "dropped", env={"PYTHONMALLOC": "malloc"}), expect_lines=2)


@pytest.mark.parametrize("what", ["task", "data_parallel"])
def test_a_wait_notices_a_peer_that_left(what, tmp_path):
    """Rank 1 leaves after the set-up every rank does; rank 0 then waits on a task (DataParallel's
    gradient buckets are tasks)."""
    script = tmp_path / "left.py"
    if what == "task":
        setup, body = "", ("task = dist.all_reduce(np.ones(1 << 20), sync_op=False)\n"
                           "task.wait()\n")
    else:
        setup = "model = pycoll.DataParallel(pycoll.nn.Linear(64, 64))\n"
        body = "model(pycoll.ones([8, 64])).sum().backward()\n"
    script.write_text(
        "import os, time, numpy as np, pycoll, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n" + setup +
        "if dist.get_rank() == 1:\n"
        "    time.sleep(0.5)\n"
        "    os._exit(0)\n" + body)
    start = time.monotonic()
    result = launch(2, str(script))  # the ranks' timeout is 60 s: it must end long before
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "rank(s) [1] left the job" in output, output
    assert time.monotonic() - start < 30, output


@pytest.mark.parametrize("peer", ["leaves", "never_calls"])
def test_a_polled_task_raises_as_its_wait_would(peer, tmp_path):
    """A loop on is_completed() never waited forever (a probe: 60 s with PYCOLL_TIMEOUT=5, and
    after the peer had exited): it raises what wait() meets, on the polling rank."""
    script = tmp_path / "poll.py"
    script.write_text(
        "import os, sys, time, numpy as np, pycoll, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "if dist.get_rank() == 1:\n"
        f"    time.sleep({'0.5' if peer == 'leaves' else '30'})\n"
        "    sys.exit(0)\n"
        "task = dist.all_reduce(np.ones(4), sync_op=False)\n"
        "start = time.monotonic()\n"
        "try:\n"
        "    while not task.is_completed():\n"
        "        time.sleep(0.01)\n"
        "except pycoll.CollectiveError as exc:\n"
        "    print(f'raised after {time.monotonic() - start:.1f} s: {exc}', flush=True)\n"
        "    os._exit(0)\n")
    env = {**os.environ, "PYCOLL_TIMEOUT": "3"}
    start = time.monotonic()
    result = launch(2, str(script), env=env, timeout=60)
    output = result.stdout + result.stderr
    words = ("rank(s) [1] left the job (exited) (it ended without making this call, or made it otherwise: another sync_op"
             if peer == "leaves" else "did not complete within 3 s")
    assert "raised after" in output and words in output, output
    assert time.monotonic() - start < 25, output


def test_a_wait_given_a_shorter_timeout_may_be_waited_for_again(tmp_path):
    """torch's documented pattern: a wait(timeout) that times out is caught and waited for
    again. The call was still in flight, not failed: the job ended with status 1 before ('a
    collective failed earlier in this process')."""
    script = tmp_path / "again.py"
    script.write_text(
        "import time, numpy as np, pycoll, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "x = np.ones(3)\n"
        "if dist.get_rank() == 1:\n"
        "    time.sleep(1.5)\n"
        "task = dist.all_reduce(x, sync_op=False)\n"
        "if dist.get_rank() == 0:\n"
        "    try:\n"
        "        task.wait(timeout=0.3)\n"
        "    except pycoll.CollectiveError as exc:\n"
        "        assert 'the timeout given to wait()' in str(exc) and 'still in flight' in str(exc), exc\n"
        "        print('timed out once', flush=True)\n"
        "task.wait()\n"
        "assert x.tolist() == [2.0] * 3, x\n"
        "print('OK rank', dist.get_rank(), flush=True)\n")
    result = launch(2, str(script))
    assert result.returncode == 0 and "timed out once" in result.stdout, result.stdout + result.stderr
    assert result.stdout.count("OK rank") == 2, result.stdout + result.stderr


def test_a_polled_task_whose_peers_gave_their_part_and_left_completes(tmp_path):
    """On 3 ranks a member may finish its part of an all_reduce and exit while a peer still polls:
    the poll raised 'left the job' for a call that then completed (a probe, 5 runs in 5)."""
    script = tmp_path / "late.py"
    script.write_text(
        "import time, pycoll, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "x = pycoll.ones([1 << 16])\n"
        "if dist.get_rank() == 0:\n"
        "    time.sleep(2.0)\n"
        "task = dist.all_reduce(x, sync_op=False)\n"
        "while not task.is_completed():\n"
        "    pass\n"
        "assert float(x.numpy()[0]) == 3.0\n"
        "print('OK rank', dist.get_rank(), flush=True)\n")
    result = launch(3, str(script), timeout=90)
    assert result.returncode == 0 and result.stdout.count("OK rank") == 3, result.stdout + result.stderr
