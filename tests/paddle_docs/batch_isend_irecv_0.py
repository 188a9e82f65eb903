import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
rank = dist.get_rank()
world_size = dist.get_world_size()
send_t = pycoll.arange(2) + rank
# pycoll.tensor([0, 1])  # Rank-0
# pycoll.tensor([1, 2])  # Rank-1
recv_t = pycoll.empty(shape=[2], dtype=send_t.dtype)
send_op = dist.P2POp(dist.isend, send_t, (rank + 1) % world_size)
recv_op = dist.P2POp(dist.irecv, recv_t, (rank - 1 + world_size) % world_size)
tasks = dist.batch_isend_irecv([send_op, recv_op])
for task in tasks:
    task.wait()
print(recv_t)
# pycoll.tensor([1, 2])     # Rank-0
# pycoll.tensor([0, 1])     # Rank-1
