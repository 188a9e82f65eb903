"""A user's mistake: the ranks reduce arrays of different sizes (256 KiB on rank 0, 128 KiB on
rank 1). On a group's first collectives and past any number of them (argv[1] "first", "later":
the 21st; the cpu engine compares every call, agreement.due), every rank refuses the call before
anything is sent, naming each rank's tensor, and the job goes on. (The cpu engine once chose its
MPI call by the local size, which made the ranks make different calls: a hang until
PYCOLL_TIMEOUT; past the compared calls MPI then failed the call.)"""
import sys

import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
for _ in range(20 if sys.argv[1] == "later" else 0):
    dist.reduce(np.ones(4, np.float32), dst=0)
uneven = np.ones((1 << 16) if rank == 0 else (1 << 15), np.float32)
try:
    dist.reduce(uneven, dst=0)
except ValueError as exc:
    assert str(exc) == (
        "pycoll.distributed.reduce: the ranks of world (ranks [0, 1]) gave different tensors (rank 0: float32 of "
        "65536 elements, op=ReduceOp.SUM; rank 1: float32 of 32768 elements, op=ReduceOp.SUM); every rank must "
        "give the same dtype and number of elements and the same op; nothing was sent"), exc
else:
    raise AssertionError(f"rank {rank}: a reduce of different sizes went through")
assert uneven.tolist() == [1.0] * uneven.size  # nothing was sent
x = np.ones(2, np.float32)
dist.all_reduce(x)  # the job goes on
assert x.tolist() == [2.0, 2.0], x
print(f"sizes refused OK rank={rank}", flush=True)
