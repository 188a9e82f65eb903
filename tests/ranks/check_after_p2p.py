"""PYCOLL_CHECK on 3 ranks after point-to-point calls that only ranks 0 and 1 make: the next
barrier is the same call on every rank (no false alarm), and a real mismatch after it (rank 2
broadcasts where the others all-reduce) is still reported on every rank."""
import numpy as np

import pycoll.distributed as dist
from pycoll import CollectiveError

dist.init_parallel_env()
rank = dist.get_rank()
if rank == 0:
    dist.send(np.ones(2), dst=1)
    dist.isend(np.ones(2), dst=1).wait()
elif rank == 1:
    got = np.zeros(2)
    dist.recv(got, src=0)
    dist.irecv(got, src=0).wait()
dist.barrier()
x = np.ones(3)
dist.all_reduce(x)
assert x.tolist() == [3.0] * 3, x
try:
    if rank == 2:
        dist.broadcast(x, src=0)
    else:
        dist.all_reduce(x)
    raise AssertionError("the mismatch was not reported")
except CollectiveError as exc:
    assert "called different collectives" in str(exc), exc
    assert "broadcast" in str(exc) and "all_reduce" in str(exc), exc
print(f"check after p2p OK rank={rank}", flush=True)
