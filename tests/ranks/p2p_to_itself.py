"""A batch_isend_irecv whose transfers include this rank itself (a ring exchange run on one rank,
as NCCL's grouped calls allow; a probe's program was refused): each rank sends to itself and to
the next rank and receives from itself and from the previous one. A plain isend to itself is
refused, naming the batch. One or more ranks."""
import numpy as np

import pycoll
import pycoll.distributed as dist
from expect import expect

dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
sent = pycoll.to_tensor(np.full(3, rank, np.float32))
own, previous = pycoll.zeros([3]), pycoll.zeros([3])
ops = [dist.P2POp(dist.isend, sent, rank), dist.P2POp(dist.isend, sent, (rank + 1) % world),
       dist.P2POp(dist.irecv, own, rank), dist.P2POp(dist.irecv, previous, (rank - 1) % world)]
for task in dist.batch_isend_irecv(ops):
    task.wait()
assert own.numpy().tolist() == [rank] * 3 and previous.numpy().tolist() == [(rank - 1) % world] * 3, (own, previous)
expect(ValueError, ["isend: dst=", "is this rank itself", "batch_isend_irecv"], dist.isend, sent, rank)
print(f"p2p to itself OK rank={rank}", flush=True)
