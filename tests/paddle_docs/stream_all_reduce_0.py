# doctest: +REQUIRES(env: DISTRIBUTED)
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
local_rank = dist.get_rank()
data = None
if local_rank == 0:
    data = pycoll.to_tensor([[4, 5, 6], [4, 5, 6]])
else:
    data = pycoll.to_tensor([[1, 2, 3], [1, 2, 3]])
task = dist.stream.all_reduce(data, sync_op=False)
task.wait()  # type: ignore[union-attr]
out = data
print(out)
