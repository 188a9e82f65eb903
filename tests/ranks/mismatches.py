"""Ranks that call collectives differently, run with ``PYCOLL_CHECK=1`` (argv[1] names the case):
every rank must raise a CollectiveError that lists each rank's call (a rank that refused its
call raises its own refusal, which its peers' error names), and the job goes on; ``sync_op``
(rank 1's call non-blocking, so already started) must end the job, naming both calls. Without
the check, ``later`` (a broadcast of 8 elements against 4, the group's 21st collective) is refused
on every rank all the same (the cpu engine compares each call's tensors, ``agreement.due``), and
the job goes on. Two ranks.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
case = sys.argv[1]
f32, i32 = np.float32, np.int32


def mismatched() -> None:
    """The case's call, which differs between rank 0 and rank 1."""
    if case == "dtype":
        dist.all_reduce(np.ones(4, f32 if rank == 0 else i32))
    elif case == "op":
        dist.all_reduce(np.ones(4, f32), op=dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MAX)
    elif case == "broadcast_dtype":
        dist.broadcast(np.ones(4, f32 if rank == 0 else i32), src=0)
    elif case == "scatter_src":
        dist.scatter(np.zeros(2, f32), [np.ones(2, f32)] * 2, src=rank)
    elif case == "all_gather_size":
        dist.all_gather([], np.ones(4 + 4 * rank, f32))
    elif case == "reduce_scatter_size":
        size = 4 + 4 * rank
        dist.reduce_scatter(np.zeros(size, f32), [np.ones(size, f32)] * 2)
    elif case == "alltoall_or_all_gather":  # the block sizes alltoall exchanges first must wait
        dist.alltoall([], [np.ones(3, f32)] * 2) if rank == 0 else dist.all_gather([], np.ones(3, f32))
    elif case == "long_shape":  # a description far longer than any fixed-size fingerprint
        dist.all_reduce(np.ones((1,) * 60, f32), op=dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MIN)
    elif case == "sync_op":  # MPI never matches a blocking collective with a non-blocking one
        dist.all_reduce(np.ones(4, f32), sync_op=rank == 0).wait()
    elif case == "refused":  # rank 0 refuses its call: it takes part in the comparison as refused
        dist.all_reduce(np.ones(4, f32), op="sum" if rank == 0 else dist.ReduceOp.SUM)


if case == "later":
    for _ in range(20):
        dist.broadcast(np.ones(1, f32), src=0)
    try:
        dist.broadcast(np.ones(8 if rank == 0 else 4, f32), src=0)
    except ValueError as exc:
        assert str(exc) == (
            "pycoll.distributed.broadcast: the ranks of world (ranks [0, 1]) gave different tensors (rank 0: float32 "
            "of 8 elements; rank 1: float32 of 4 elements); every rank must give the same dtype and number of "
            "elements; nothing was sent"), exc
    else:
        raise AssertionError(f"rank {rank}: a broadcast of 8 elements against 4 went through")
    x = np.full(3, rank + 1.0)
    dist.all_reduce(x)  # nothing was sent: the job goes on
    assert (x == 3.0).all(), x
    print(f"mismatch {case} OK rank={rank}", flush=True)
    sys.exit(0)

try:
    mismatched()
except pycoll.CollectiveError as exc:
    text = str(exc)
    assert "PYCOLL_CHECK: the ranks of world (ranks [0, 1]) called different collectives" in text, text
    assert "rank 0: " in text and "rank 1: " in text, text
except ValueError as exc:
    assert case == "refused" and rank == 0 and "op" in str(exc), exc
    text = ""
else:
    raise AssertionError(f"{case}: a mismatched collective went unnoticed on rank {rank}")
if case == "long_shape":
    assert "op=ReduceOp.SUM" in text and "op=ReduceOp.MIN" in text, text
if case == "refused" and rank == 1:
    assert "rank 0: all_reduce #1 refused (ValueError: " in text, text
x = np.full(3, rank + 1.0)
dist.all_reduce(x)  # nothing was sent: the job goes on
assert (x == 3.0).all(), x
print(f"mismatch {case} OK rank={rank}", flush=True)
