# doctest: +REQUIRES(env: DISTRIBUTED)
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
if dist.get_rank() == 0:
    data1 = pycoll.to_tensor([0, 1])
    data2 = pycoll.to_tensor([2, 3])
else:
    data1 = pycoll.to_tensor([4, 5])
    data2 = pycoll.to_tensor([6, 7])
dist.stream.reduce_scatter(data1, [data1, data2])
out = data1.numpy()
print(out)
# [4, 6]  (2 GPUs, out for rank 0)
# [8, 10] (2 GPUs, out for rank 1)
