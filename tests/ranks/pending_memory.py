"""Non-blocking calls whose tasks and arrays the caller drops or keeps: the group must keep every
buffer alive until the engine is done (argv[1] names the case; every rank prints "OK rank=").

- ``kept``: reduce_scatter, all_gather and alltoall with every task and array kept: their
  results must be right (pycoll's own staging buffers must outlive the call);
- ``dropped``: many all_reduce calls on temporaries whose tasks are dropped at once, each
  followed by sentinel arrays of the same size: no sentinel may change, and the job must not
  crash; every dropped call's result still lands (checked through a strided view's copy-back);
- ``exit``: tasks left pending at the end of the script: the process waits for them at exit.
"""
import gc
import sys

import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
case = sys.argv[1]
COUNT = 16384  # 128 KiB of float64, the size at which the dropped-task corruption was seen
LARGE = 262144  # 1 MiB of float32: MPI reads a send buffer this large after the call returns

if case == "kept":
    for _ in range(10):
        out = np.zeros(LARGE, np.float32)
        parts = [np.full(LARGE, rank + i + 1.0, np.float32) for i in range(n)]
        t1 = dist.reduce_scatter(out, parts, sync_op=False)
        gathered = []
        t2 = dist.all_gather(gathered, np.full(LARGE, rank, np.float32), sync_op=False)
        received = []
        t3 = dist.alltoall(received, [np.full(LARGE, 10 * rank + j, np.float32) for j in range(n)],
                           sync_op=False)
        gc.collect()
        reuse = [np.full(n * LARGE, -1e34, np.float32) for _ in range(3)]  # takes freed memory
        for t in (t1, t2, t3):
            t.wait()
        del reuse
        expected = sum(r + rank + 1.0 for r in range(n))
        assert (out == expected).all(), (out[:4], expected)
        assert all((g == r).all() for r, g in enumerate(gathered))
        assert all((a == 10 * r + rank).all() for r, a in enumerate(received))
elif case == "dropped":
    views = []
    for step in range(200):
        dist.all_reduce(np.full(COUNT, 1.0), sync_op=False)  # task and array dropped at once
        base = np.full((COUNT, 2), -1.0)
        base[:, 0] = step + rank
        views.append(base)
        dist.all_reduce(base[:, 0], sync_op=False)  # a strided view: staged, copied back later
        gc.collect()
        sentinels = [np.full(COUNT, -7.0) for _ in range(4)]
        dist.all_reduce(np.ones(4))  # a later call retires what completed
        for s in sentinels:
            assert (s == -7.0).all(), f"step {step}: {int((s != -7.0).sum())} sentinel values changed"
    dist.barrier()  # every pending task is complete after it
    for step, base in enumerate(views):
        assert (base[:, 0] == sum(step + r for r in range(n))).all(), f"step {step}: result not delivered"
        assert (base[:, 1] == -1.0).all(), f"step {step}: the copy-back wrote outside the view"
elif case == "exit":
    keep = np.full(COUNT, rank + 1.0)
    task = dist.all_reduce(keep, sync_op=False)
    dist.all_reduce(np.full(COUNT, 2.0), sync_op=False)
    print(f"pending_memory exit OK rank={rank}", flush=True)
    sys.exit(0)
print(f"pending_memory {case} OK rank={rank}", flush=True)
