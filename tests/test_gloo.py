"""paddle's gloo_* calls among plain processes (multiprocessing children, no launcher): they meet
in gloo_init_parallel_env, each gloo_barrier holds every process until all arrive, and rank 0
(which serves the store) outlives the others' last request."""
import multiprocessing
import time

import pytest

import pycoll.distributed as dist
from conftest import free_port


def _member(rank, nranks, endpoint, arrivals):
    dist.gloo_init_parallel_env(rank, nranks, endpoint)
    time.sleep(0.3 * rank)  # the last rank arrives late: nobody may pass the barrier before it
    arrivals.put((rank, "before", time.monotonic()))
    dist.gloo_barrier()
    arrivals.put((rank, "after", time.monotonic()))
    dist.gloo_barrier()
    dist.gloo_release()
    dist.gloo_release()  # paddle's: once left, nothing to do


@pytest.mark.timeout(60)
def test_processes_meet_at_each_barrier_and_release():
    nranks, endpoint = 3, f"127.0.0.1:{free_port()}"
    context = multiprocessing.get_context("spawn")
    arrivals = context.Queue()
    procs = [context.Process(target=_member, args=(r, nranks, endpoint, arrivals)) for r in range(nranks)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(50)
    assert [p.exitcode for p in procs] == [0] * nranks
    events = [arrivals.get(timeout=5) for _ in range(2 * nranks)]
    last_arrival = max(t for _, what, t in events if what == "before")
    assert all(t >= last_arrival for _, what, t in events if what == "after"), events


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="rank_num must be an int >= 2"):
        dist.gloo_init_parallel_env(0, 1, "127.0.0.1:1")
    with pytest.raises(ValueError, match=r"rank_id must be an int in \[0, 2\)"):
        dist.gloo_init_parallel_env(2, 2, "127.0.0.1:1")
    with pytest.raises(ValueError, match="server_endpoint must be 'ip:port'"):
        dist.gloo_init_parallel_env(0, 2, "localhost")
    with pytest.raises(RuntimeError, match="call gloo_init_parallel_env"):
        dist.gloo_barrier()
