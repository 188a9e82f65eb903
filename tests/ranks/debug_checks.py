"""PYCOLL_DEBUG and PYCOLL_STALL_WARN on a live job (argv[1]: "mismatch" or "stall").

Works on either backend: the tensors live on the rank's device."""
import sys
import time

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
x = pycoll.full([4], 1.0, "float32")
if sys.argv[1] == "mismatch":
    # every rank is about to call something different: all must say so, none may hang
    try:
        if rank == 0:
            dist.all_reduce(x)
        elif rank == 1:
            dist.broadcast(x, src=0)
        else:
            dist.all_reduce(pycoll.ones([3], "int32"), op=dist.ReduceOp.MAX)
    except pycoll.CollectiveError as exc:
        text = str(exc)
        assert "rank 0: all_reduce #1 float32[4] op=ReduceOp.SUM" in text, text
        assert "rank 1: broadcast #1 float32[4] root=0" in text, text
    else:
        raise AssertionError("a mismatched collective went unnoticed")
    dist.all_reduce(x)  # the job goes on: nothing was sent
    assert (x.numpy() == n).all()
else:
    if rank == 1:
        time.sleep(2.5)
    dist.all_reduce(x)
    assert (x.numpy() == n).all()
print(f"debug {sys.argv[1]} OK rank={rank}", flush=True)
