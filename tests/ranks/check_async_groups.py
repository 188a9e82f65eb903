"""A valid program on MPI under PYCOLL_CHECK=1: rank 0 starts a non-blocking all_reduce on group A,
then a blocking one on group B; rank 1 makes the same calls in the other order. Both must complete
with the right values (a comparison that blocked before the non-blocking call deadlocked). Two
ranks. (NCCL asks for one order of calls across communicators on every rank, so this program is
MPI's only.)"""
import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
group_a, group_b = dist.new_group([0, 1]), dist.new_group([0, 1])
for step in range(3):
    a, b = np.full(4, rank + 1.0, np.float32), np.full(4, 10.0 * (rank + 1), np.float32)
    if rank == 0:
        task = dist.all_reduce(a, group=group_a, sync_op=False)
        dist.all_reduce(b, group=group_b)
    else:
        dist.all_reduce(b, group=group_b)
        task = dist.all_reduce(a, group=group_a, sync_op=False)
    task.wait()
    assert a.tolist() == [3.0] * 4 and b.tolist() == [30.0] * 4, (step, a, b)
print(f"OK rank={rank}", flush=True)
