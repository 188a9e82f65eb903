# doctest: +REQUIRES(env: DISTRIBUTED)
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
gather_list = [] # type: ignore[var-annotated]
if dist.get_rank() == 0:
    data = pycoll.to_tensor([1, 2, 3])
    dist.stream.gather(data, gather_list, dst=0)
else:
    data = pycoll.to_tensor([4, 5, 6])
    dist.stream.gather(data, gather_list, dst=0)
print(gather_list)
# [[1, 2, 3], [4, 5, 6]] (2 GPUs, out for rank 0)
# [] (2 GPUs, out for rank 1)
