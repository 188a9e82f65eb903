import pycoll.distributed as dist
dist.init_parallel_env()
if dist.get_rank() == 0:
    object_list = [{"foo": [1, 2, 3]}]
else:
    object_list = [{"bar": [4, 5, 6]}]
dist.broadcast_object_list(object_list, src=1)
print(object_list)
# [{"bar": [4, 5, 6]}] (2 GPUs)
