"""The watchdog's decisions, one ``tick`` at a time, without its thread or any ranks.

Blocking calls (the MPI engine's, and set-up steps) are marked by the collective layer; the
NCCL engine's enqueued calls are watched through their events, here against the recording
CuPy stand-in (``host_cuda``). Ending the job is replaced by an exception carrying the exit
code and the message; the live-job versions of these cases are in test_collectives/test_launch
(CPU ranks) and test_nccl_failures (NCCL ranks, ``-m gpu``).
"""
import logging
import types

import numpy as np
import pytest

from host_cuda import zeros
from pycoll import CollectiveError
from pycoll.backends import nccl as engine
from pycoll.backends.reduce_op import ReduceOp
from pycoll.distributed import _failure, watchdog
from pycoll.distributed.group import Group
from pycoll.distributed.watchdog import _EXIT_GRACE_S, Watchdog

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:cupy._environment")
WORLD = "world (ranks [0, 1])"


class JobEnded(Exception):
    """What ``_failure.abort_job`` would have done: (exit code, message)."""


@pytest.fixture(autouse=True)
def job_end(monkeypatch):
    def abort_job(code, message=None, then=None):
        if then is not None:  # the real one runs it once the message is out
            then()
        raise JobEnded(code, message)

    monkeypatch.setattr(_failure, "abort_job", abort_job)
    monkeypatch.setattr(_failure, "_broken", None)  # a timeout marks the process broken


def ended(tick, now):
    with pytest.raises(JobEnded) as info:
        tick(now)
    code, message = info.value.args
    assert code == 1
    return message


# -- blocking calls ----------------------------------------------------------------------------
def blocking_in(dog, name, seq, timeout=2.0, backend=None):
    group = Group(0, [0, 1], 0, backend, timeout)
    group.seq = seq
    dog.name, dog.group = name, group
    return group


def test_a_blocking_call_past_its_groups_timeout_ends_the_job():
    dog = Watchdog()
    blocking_in(dog, "all_reduce", 5)
    dog.tick(100.0)  # first seen
    dog.tick(101.9)
    message = ended(dog.tick, 102.1)
    assert f"pycoll.CollectiveError: all_reduce #5 on {WORLD} did not complete within 2 s" in message
    assert "after 2.1 s" in message and "stopping the job" in message
    assert _failure._broken is not None, "the process must abort rather than finalize MPI"


def test_each_call_gets_its_own_time_and_finished_calls_are_forgotten():
    dog = Watchdog()
    group = blocking_in(dog, "broadcast", 1)
    dog.tick(100.0)
    group.seq = 2  # the next collective, on the same group
    dog.tick(101.5)
    dog.tick(103.4)  # 1.9 s into the second call
    dog.group = None
    dog.tick(200.0)
    blocking_in(dog, "barrier", 3)
    dog.tick(300.0)
    assert "barrier #3" in ended(dog.tick, 302.5)


def test_a_set_up_step_is_guarded_and_named_without_a_sequence_number():
    dog = Watchdog()
    placeholder = Group(0, [0, 1], 0, None, 2.0)
    with dog.guard(placeholder, "NCCL communicator set-up"):
        assert (dog.group, dog.name) == (placeholder, "NCCL communicator set-up")
        dog.tick(10.0)
        message = ended(dog.tick, 12.5)
    assert dog.group is None
    assert f"NCCL communicator set-up on {WORLD} did not complete within 2 s" in message
    assert "#0" not in message


def test_a_long_wait_is_warned_about_once(caplog):
    dog = Watchdog()
    dog.stall_warn = 1.0
    blocking_in(dog, "all_gather", 7, timeout=60.0)
    with caplog.at_level(logging.WARNING, logger="pycoll"):
        dog.tick(0.0)
        dog.tick(0.9)
        assert not caplog.records
        dog.tick(1.6)
        dog.tick(5.0)
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [f"all_gather #7 on {WORLD} has waited 2 s (PYCOLL_STALL_WARN); "
                        f"it fails after 60 s"]


def test_a_member_that_left_ends_the_job_after_a_grace_period():
    dog = Watchdog()
    dog.exits = types.SimpleNamespace(poll=lambda: {1, 5})
    blocking_in(dog, "reduce", 2, timeout=60.0)
    dog.tick(0.0)
    dog.tick(_EXIT_GRACE_S - 0.1)  # the call may still finish: the peer took part before leaving
    message = ended(dog.tick, _EXIT_GRACE_S + 0.1)
    assert f"reduce #2 on {WORLD} cannot complete: rank(s) [1] left the job" in message


def test_departures_outside_the_group_are_ignored():
    dog = Watchdog()
    dog.exits = types.SimpleNamespace(poll=lambda: {3})
    blocking_in(dog, "reduce", 2, timeout=60.0)
    dog.tick(0.0)
    dog.tick(30.0)


# -- calls enqueued by the NCCL engine ---------------------------------------------------------
@pytest.fixture
def world(backend):
    return Group(0, [0, 1], 0, backend, 2.0)


def all_reduce(backend, blocking=True, seq=0):
    arr = zeros(8, np.float32)
    return backend.all_reduce(arr, backend.plan(np.dtype(np.float32), ReduceOp.SUM), blocking, seq)


@pytest.mark.parametrize("blocking", [True, False])
def test_an_enqueued_call_that_does_not_complete_in_time_aborts_nccl_and_ends_the_job(world, fake, blocking):
    all_reduce(world.engine, blocking, seq=4)
    call = world.engine.stalled_call()
    assert (call.name, call.seq) == ("all_reduce", 4)
    assert fake.device == 0, "the watchdog's thread must use the communicator's device"
    dog = Watchdog(groups=lambda: [world])
    dog.tick(call.started + 1.9)
    message = ended(dog.tick, call.started + 2.1)
    assert f"all_reduce #4 on {WORLD} did not complete within 2 s" in message
    assert world.engine.comm.aborted


def test_the_oldest_unfinished_call_is_the_one_timed(world, fake):
    backend = world.engine
    for seq in (1, 2, 3):
        all_reduce(backend, seq=seq)
    backend._in_flight.calls[0].event.fired = True
    call = backend.stalled_call()
    assert call.seq == 2 and len(backend._in_flight.calls) == 2  # the finished call was dropped
    fake.done = True
    assert backend.stalled_call() is None
    dog = Watchdog(groups=lambda: [world])
    dog.tick(call.started + 1000.0)  # nothing is waiting: nothing ends


def test_completed_calls_do_not_pile_up_without_a_watchdog(backend, fake):
    fake.done = True
    for _ in range(1000):
        all_reduce(backend)
    assert len(backend._in_flight.calls) <= engine.PRUNE_AT + 1
    assert backend.stalled_call() is None


def test_a_call_that_completes_before_the_decision_is_spared(world, fake):
    all_reduce(world.engine)
    call = world.engine.stalled_call()
    dog = Watchdog(groups=lambda: [world])
    call.event.fired = True  # completes between the sampling and the check
    dog._check(world, call, call.started + 10.0, lambda: not call.done)
    assert not world.engine.comm.aborted


def test_an_nccl_async_error_aborts_and_ends_the_job(world, fake):
    world.engine.comm.async_error = RuntimeError("NCCL_ERROR_REMOTE_ERROR: remote process exited")
    dog = Watchdog(groups=lambda: [world])
    message = ended(dog.tick, 0.0)
    assert f"NCCL reported an error on {WORLD}: NCCL_ERROR_REMOTE_ERROR: remote process exited" in message
    assert world.engine.comm.aborted


def test_an_async_error_already_raised_on_the_rank_is_left_to_the_rank(world, fake):
    request = all_reduce(world.engine, blocking=False)
    world.engine.comm.async_error = RuntimeError("NCCL_ERROR_SYSTEM_ERROR")
    with pytest.raises(CollectiveError, match="SYSTEM_ERROR"):
        request.test()
    fake.done = True  # the aborted communicator's kernels have ended
    Watchdog(groups=lambda: [world]).tick(1e6)


def test_an_enqueued_call_waiting_for_a_member_that_left(world, fake):
    all_reduce(world.engine, seq=1)
    call = world.engine.stalled_call()
    dog = Watchdog(groups=lambda: [world])
    dog.exits = types.SimpleNamespace(poll=lambda: {1})
    dog.tick(call.started + 1.0)
    message = ended(dog.tick, call.started + _EXIT_GRACE_S + 0.1)
    assert f"all_reduce #1 on {WORLD} cannot complete: rank(s) [1] left the job" in message
    assert world.engine.comm.aborted


def test_an_enqueued_call_is_warned_about_once(world, fake, caplog):
    all_reduce(world.engine, seq=9)
    call = world.engine.stalled_call()
    dog = Watchdog(groups=lambda: [world])
    dog.stall_warn = 0.5
    world.timeout = 100.0
    with caplog.at_level(logging.WARNING, logger="pycoll"):
        for dt in (0.4, 0.6, 0.8, 3.0):
            dog.tick(call.started + dt)
    assert [r.getMessage() for r in caplog.records] == [
        f"all_reduce #9 on {WORLD} has waited 1 s (PYCOLL_STALL_WARN); it fails after 100 s"]


def test_destroyed_groups_are_skipped_and_cpu_groups_have_nothing_enqueued(world, fake):
    from mpi4py import MPI

    from pycoll.backends.mpi import MPIBackend

    cpu = Group(1, [0], 0, MPIBackend(MPI.COMM_SELF.Dup(), 1.0), 1.0)
    gone = Group(2, [0, 1], 0, None, 1.0)
    Watchdog(groups=lambda: [cpu, gone]).tick(1e6)
    cpu.engine.free()


def test_the_job_is_ended_with_its_message_written_and_reported_before_the_communicator_is_aborted(
        monkeypatch, capsys):
    """Aborting an NCCL communicator makes a call blocked inside it fail on the main thread
    (NCCL's "internal error"); the watchdog's reason must be out before that can race it."""
    events = []

    class Exit(Exception):
        pass

    def real_exit(code):
        raise Exit(code)

    monkeypatch.undo()  # the real abort_job, with no MPI and no launcher to reach
    monkeypatch.setattr(_failure, "_broken", None)
    monkeypatch.setattr(_failure, "mpi_running", lambda: False)
    monkeypatch.setattr(_failure, "first_int", lambda names: None)
    monkeypatch.setattr(_failure, "report", lambda text, code: events.append(("report", text)))
    monkeypatch.setattr(_failure, "_real_exit", real_exit)
    with pytest.raises(Exit):
        _failure.abort_job(1, "pycoll.CollectiveError: all_reduce #1 timed out",
                           then=lambda: events.append(("abort", capsys.readouterr().err)))
    assert events == [("report", "pycoll.CollectiveError: all_reduce #1 timed out"),
                      ("abort", "pycoll.CollectiveError: all_reduce #1 timed out\n")]


@pytest.mark.parametrize("raw", ["0", "-1", "inf", "nan", "soon"])
def test_a_stall_warning_delay_that_is_no_positive_number_is_refused_by_name(monkeypatch, raw):
    monkeypatch.setenv("PYCOLL_STALL_WARN", raw)  # as PYCOLL_TIMEOUT is checked
    with pytest.raises(ValueError, match=f"PYCOLL_STALL_WARN='{raw}': it must be a number of seconds above 0"):
        watchdog.stall_warn_seconds()
