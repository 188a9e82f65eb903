"""A user's mistake: the ranks reduce arrays of different sizes (256 KiB on rank 0, 128 KiB on
rank 1). argv[1] "first": on a group's first collectives (agreement.due) the ranks compare their
tensors first, and every rank refuses the call naming each rank's, the job going on. "later": past
them (the 9th), MPI must refuse it at once; the cpu engine choosing its MPI call by the local size
once made the ranks make different calls, which hung until PYCOLL_TIMEOUT."""
import sys

import numpy as np

import pycoll.distributed as dist
from pycoll.distributed import agreement

dist.init_parallel_env()
rank = dist.get_rank()
uneven = np.ones((1 << 16) if rank == 0 else (1 << 15), np.float32)
if sys.argv[1] == "first":
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
    raise SystemExit(0)
for _ in range(agreement.ALWAYS):
    dist.reduce(np.ones(4, np.float32), dst=0)
dist.reduce(uneven, dst=0)
print(f"reduce of different sizes returned on rank {rank}", flush=True)
