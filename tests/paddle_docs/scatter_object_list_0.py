import pycoll.distributed as dist
dist.init_parallel_env()
out_object_list = [] # type: ignore
if dist.get_rank() == 0:
    in_object_list = [{'foo': [1, 2, 3]}, {'foo': [4, 5, 6]}]
else:
    in_object_list = [{'bar': [1, 2, 3]}, {'bar': [4, 5, 6]}]
dist.scatter_object_list(out_object_list, in_object_list, src=1)
print(out_object_list)
# [{'bar': [1, 2, 3]}] (2 GPUs, out for rank 0)
# [{'bar': [4, 5, 6]}] (2 GPUs, out for rank 1)
