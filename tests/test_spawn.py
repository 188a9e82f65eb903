"""dist.spawn from a plain `python script.py`, as the seed uses it, and from an importable module."""
import os
import queue
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import pycoll.distributed as dist
from conftest import RANKS_DIR, assert_gone, run_python


def test_spawn_runs_func_from_main_on_every_rank():
    result = run_python([str(RANKS_DIR / "spawn_main.py"), "ok"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("spawned OK rank=") == 2 and "sum=6" in result.stdout
    assert "parent done" in result.stdout


def test_spawn_raises_in_the_parent_with_the_childs_traceback():
    result = run_python([str(RANKS_DIR / "spawn_main.py"), "fail"])
    output = result.stdout + result.stderr
    assert result.returncode == 9, output
    assert "parent caught SpawnError rank=1 exitcode=1" in result.stdout
    assert "ValueError: planted failure in a spawned rank" in result.stdout
    assert 'spawn_main.py", line' in result.stdout, "the child's traceback is in the exception"


def _write_sum(path):
    dist.init_parallel_env()
    x = np.full(2, dist.get_rank() + 1.0)
    dist.all_reduce(x)
    if dist.get_rank() == 0:
        np.save(path, x)


def test_spawn_without_join_returns_a_context_to_join(tmp_path):
    out = tmp_path / "sum.npy"
    context = dist.spawn(_write_sum, args=(str(out),), nprocs=3, join=False)
    assert context.join(timeout=120) is True
    assert np.array_equal(np.load(out), [6.0, 6.0])


def _fail_on_rank_one():
    dist.init_parallel_env()
    if dist.get_rank() == 1:
        raise KeyError("planted")
    dist.barrier()


def test_a_failed_job_raises_on_every_join():
    context = dist.spawn(_fail_on_rank_one, nprocs=2, join=False)
    for _ in range(2):
        try:
            context.join(timeout=120)
        except dist.SpawnError as exc:
            assert exc.rank == 1 and "KeyError: 'planted'" in str(exc)
        else:
            raise AssertionError("join() of a failed job returned")


def _sleep(folder):
    open(os.path.join(folder, f"running.{os.environ['PADDLE_TRAINER_ID']}"), "w").close()
    time.sleep(60)


def test_a_rank_is_terminated_and_joined_as_a_process_of_paddles_spawn(tmp_path):
    """paddle's ``processes`` are multiprocessing.Process objects: ``terminate()`` and ``join()``
    work on each, and the job then fails naming the signal, as paddle's does."""
    context = dist.spawn(_sleep, args=(str(tmp_path),), nprocs=2, join=False)
    rank = context.processes[1]
    deadline = time.monotonic() + 60
    while not (tmp_path / "running.1").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rank.is_alive()
    start = time.monotonic()
    rank.terminate()
    rank.join(timeout=60)
    assert not rank.is_alive() and rank.exitcode == -signal.SIGTERM
    with pytest.raises(dist.SpawnError, match="SIGTERM"):
        context.join(timeout=60)
    assert time.monotonic() - start < 30 and not context.processes[0].is_alive()
    context.processes[0].kill()  # a rank that has ended: nothing to do


def test_spawn_checks_its_arguments():
    for kwargs, words in [({"func": 3}, "callable"), ({"func": print, "args": 1}, "tuple or a list"),
                          ({"func": print, "nprocs": 0}, "nprocs")]:
        try:
            dist.spawn(**kwargs)
        except (TypeError, ValueError) as exc:
            assert words in str(exc)
        else:
            raise AssertionError(f"spawn({kwargs}) did not raise")


def _write_placement(path):
    import os

    world = dist.init_parallel_env()
    if dist.get_rank() == 0:
        with open(path, "w") as f:
            f.write(f"{dist.get_world_size()} {os.environ['CUDA_VISIBLE_DEVICES']} {dist.get_backend()} "
                    f"{os.environ['PADDLE_DISTRI_BACKEND']}")
    dist.barrier(world)


def test_paddles_options_choose_the_gpus_the_rank_count_and_the_backend(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,6")  # ranks run on the CPU here: no GPU is usable
    out = tmp_path / "placement.txt"
    dist.spawn(_write_placement, args=(str(out),), daemon=True, gpus="5,6", backend="gloo",
               start_method="fork", ips="127.0.0.1", print_config=True)
    assert out.read_text() == "2 5,6 GLOO gloo"  # (paddle's PADDLE_DISTRI_BACKEND of CPU ranks)
    assert "spawn: 2 ranks, environment {" in capsys.readouterr().out  # print_config, as paddle prints


@pytest.mark.parametrize("options, words", [
    ({"gpus": "5"}, ["spawn: gpus '5'", "GPU 5 is not among CUDA_VISIBLE_DEVICES=3,6"]),
    ({"gpus": "3,6", "nprocs": 3}, ["gpus='3,6' names 2 GPU(s) for nprocs=3"]),
    ({"gpus": "a"}, ["spawn: gpus 'a'", "comma-separated"]),
    ({"backend": "mpi"}, ["backend='mpi'"]),
    ({"start_method": "thread"}, ["start_method='thread'"]),
    ({"ips": "10.0.0.1,10.0.0.2"}, ["ips='10.0.0.1,10.0.0.2'", "mpiexec"]),
    ({"xpus": "0"}, ["option 'xpus' is not supported"]),
])
def test_paddles_options_are_checked_before_any_rank_starts(options, words, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,6")
    with pytest.raises(ValueError) as info:
        dist.spawn(print, **options)
    for word in words:
        assert word in str(info.value), info.value


def _rank_and_args(*args):
    dist.init_parallel_env()
    return {"rank": dist.get_rank(), "args": args}


def test_args_may_be_a_list_and_return_queues_hold_each_ranks_return_value():
    context = dist.spawn(_rank_and_args, args=[1, "two"], nprocs=2)
    assert [q.get() for q in context.return_queues] == [{"rank": r, "args": (1, "two")} for r in range(2)]
    assert all(q.empty() for q in context.return_queues + context.error_queues)
    with pytest.raises(queue.Empty):
        context.return_queues[0].get()  # given once, as a queue gives it
    assert [p.exitcode for p in context.processes] == [0, 0] and not context.processes[0].is_alive()
    assert all(isinstance(p.pid, int) for p in context.processes)


def _return_a_lock():
    import threading

    dist.init_parallel_env()
    return threading.Lock()


def test_a_return_value_that_cannot_be_pickled_fails_the_job_naming_it():
    # paddle 3.3.1's spawn fails naming the pickling error ("Can't pickle local object")
    with pytest.raises(dist.SpawnError, match=r"returned a lock, which cannot be pickled for the parent's return_queues"):
        dist.spawn(_return_a_lock, nprocs=2)


def test_a_failed_job_fills_the_failed_ranks_error_queue_and_exit_code():
    context = dist.spawn(_fail_on_rank_one, nprocs=2, join=False)
    with pytest.raises(dist.SpawnError):
        context.join(timeout=120)
    assert "KeyError: 'planted'" in context.error_queues[1].get() and context.error_queues[0].empty()
    assert context.processes[1].exitcode == 1 and context.processes[0].exitcode in (0, -signal.SIGKILL)
    with pytest.raises(queue.Empty):
        context.return_queues[1].get(timeout=1)


SPAWNED = """
import os, signal, sys, time, numpy as np, pycoll.distributed as dist

class Point:
    def __init__(self, x):
        self.x = x

def train(how):
    print(f"started pid={os.getpid()}", flush=True)
    if how == "raise_before_init" and os.environ["RANK"] == "1":
        raise ValueError("rank 1 fails before init")
    dist.init_parallel_env()
    if how == "segv" and dist.get_rank() == 1:
        import ctypes
        ctypes.string_at(0)
    if how == "loop":
        while True:
            dist.all_reduce(np.ones(2))
            time.sleep(0.05)
    dist.barrier()
    return Point(dist.get_rank())

if __name__ == "__main__":
    how = sys.argv[1]
    try:
        context = dist.spawn(train, args=(how,), nprocs=2, join=how != "no_join")
    except dist.SpawnError as exc:
        print(f"SpawnError rank={exc.rank} exitcode={exc.exitcode}", exc, flush=True)
        sys.exit(9)
    if how == "ok":
        print("returned", [q.get().x for q in context.return_queues], flush=True)
"""


def _run_spawned(tmp_path, how, timeout=120):
    """Run SPAWNED in a process whose temporary folders go to ``tmp_path/tmp``: what is left
    there after it, and its result."""
    (tmp_path / "tmp").mkdir()
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    return run_python([str(script), how], cwd=tmp_path, env={"TMPDIR": str(tmp_path / "tmp")}, timeout=timeout)


@pytest.mark.parametrize("how", ["ok", "raise_before_init", "segv", "no_join"])
def test_the_jobs_folder_goes_with_the_job_however_it_ends(how, tmp_path):
    start = time.monotonic()
    result = _run_spawned(tmp_path, how)
    output = result.stdout + result.stderr
    assert not list((tmp_path / "tmp").iterdir()), output
    assert time.monotonic() - start < 30, output
    if how in ("ok", "no_join"):
        assert result.returncode == 0, output
    if how == "ok":  # the value's class lives in the parent's __main__
        assert "returned [0, 1]" in result.stdout, output
    if how == "raise_before_init":  # at once, though rank 0 waits in MPI's start-up
        assert result.returncode == 9 and "SpawnError rank=1 exitcode=1" in result.stdout, output
        assert "ValueError: rank 1 fails before init" in result.stdout, output
    if how == "segv":
        assert result.returncode == 9 and "SpawnError rank=1 exitcode=11" in result.stdout, output
        assert "was killed by signal 11 (SIGSEGV)" in result.stdout and "in train" in result.stdout, output
    assert_gone([int(p) for p in re.findall(r"started pid=(\d+)", output)])


def test_ctrl_c_stops_the_job_and_removes_its_folder(tmp_path):
    (tmp_path / "tmp").mkdir()
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    log = tmp_path / "output.txt"
    with open(log, "w") as out:
        # -X faulthandler: should the parent not end, SIGABRT makes it write where each thread is.
        # SIGINT's default action is restored for it: a test run started in the background by a shell
        # without job control inherits SIGINT ignored, and Python then installs no KeyboardInterrupt
        # handler, so the Ctrl-C this test sends would be ignored (as it was in two CI runs)
        parent = subprocess.Popen([sys.executable, "-X", "faulthandler", str(script), "loop"], stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp_path,
                                  env={**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYCOLL_TIMEOUT": "60"},
                                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while log.read_text().count("started pid=") < 2:
            assert parent.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        parent.send_signal(signal.SIGINT)  # the parent alone: it stops the job itself
        try:
            parent.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(parent.pid, signal.SIGABRT)
            time.sleep(2)
            tree = subprocess.run(["ps", "-o", "pid,ppid,stat,wchan:20,args", "-g", str(parent.pid)],
                                  capture_output=True, text=True).stdout
            os.killpg(parent.pid, signal.SIGKILL)  # its session: MPI's launcher and the ranks
            raise AssertionError(f"the parent did not end 30 s after Ctrl-C; its processes:\n{tree}\n"
                                 f"its output (with its threads' stacks):\n{log.read_text()[-6000:]}") from None
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.wait()
    output = log.read_text()
    assert parent.returncode != 0 and "KeyboardInterrupt" in output, output
    assert not list((tmp_path / "tmp").iterdir()), output
    assert_gone([int(p) for p in re.findall(r"started pid=(\d+)", output)])


def test_unpicklable_arguments_raise_picklingerror_as_paddles_spawn_does():
    import pickle
    import threading

    with pytest.raises(pickle.PicklingError, match="spawn: func and args must be picklable"):
        dist.spawn(print, args=(threading.Lock(),), nprocs=2)  # paddle's and torch's: PicklingError (a TypeError too)
