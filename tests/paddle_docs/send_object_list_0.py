# doctest: +REQUIRES(env: DISTRIBUTED)
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
if dist.get_rank() == 0:
    data = ["hello", {"key": 100}, [1, 2, 3]]
    dist.send_object_list(data, dst=1)
else:
    data = [None] * 3  # type: ignore
    dist.recv_object_list(data, src=0)
print(data)
# ["hello", {"key": 100}, [1, 2, 3]] (2 GPUs)
