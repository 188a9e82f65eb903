"""dist.spawn from a plain `python script.py`, as the seed uses it, and from an importable module."""
import numpy as np
import pytest

import pycoll.distributed as dist
from conftest import RANKS_DIR, run_python


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


def test_spawn_checks_its_arguments():
    for kwargs, words in [({"func": 3}, "callable"), ({"func": print, "args": [1]}, "tuple"),
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
            f.write(f"{dist.get_world_size()} {os.environ['CUDA_VISIBLE_DEVICES']} {dist.get_backend()}")
    dist.barrier(world)


def test_paddles_options_choose_the_gpus_the_rank_count_and_the_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,6")  # ranks run on the CPU here: no GPU is usable
    out = tmp_path / "placement.txt"
    dist.spawn(_write_placement, args=(str(out),), daemon=True, gpus="5,6", backend="gloo",
               start_method="fork", ips="127.0.0.1")
    assert out.read_text() == "2 5,6 GLOO"


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
