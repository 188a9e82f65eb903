"""A receive in flight across a barrier (a probe's program, valid on paddle's NCCL groups, where
sends and receives run on their own communicators): rank 1 posts irecv, both ranks pass a barrier,
then rank 0 sends and rank 1 waits. The barrier once waited for the receive first, which rank 0's
send after the barrier could never complete: the stall notices ended the job as a deadlock. A
collective in flight is still waited for (the barrier's promise: the group's earlier collectives
are done). Two ranks."""
import numpy as np

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
summed = pycoll.full([2], float(rank + 1))
task = dist.all_reduce(summed, sync_op=False)
if rank == 1:
    received = pycoll.zeros([4])
    receiving = dist.irecv(received, src=0)
    dist.barrier()
    assert summed.numpy().tolist() == [3.0, 3.0], summed  # complete before the barrier returned
    receiving.wait()
    assert received.numpy().tolist() == [1.0, 2.0, 3.0, 4.0], received
else:
    dist.barrier()
    assert summed.numpy().tolist() == [3.0, 3.0], summed
    dist.send(pycoll.to_tensor(np.array([1, 2, 3, 4], np.float32)), dst=1)
task.wait()
print(f"p2p beside barrier OK rank={rank}", flush=True)
