# doctest: +REQUIRES(env: DISTRIBUTED)
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
local_rank = dist.get_rank()
if local_rank == 0:
    data = pycoll.to_tensor([[4, 5, 6], [4, 5, 6]])
else:
    data = pycoll.to_tensor([[1, 2, 3], [1, 2, 3]])
task = dist.stream.broadcast(data, src=1, sync_op=False)
task.wait()  # type: ignore[union-attr]
out = data.numpy()
print(out)
# [[1, 2, 3], [1, 2, 3]] (2 GPUs)
