# doctest: +REQUIRES(env: DISTRIBUTED)
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
# all_to_all with equal split sizes
out_tensor_list = [] # type: ignore[var-annotated]
if dist.get_rank() == 0:
    data1 = pycoll.to_tensor([[1, 2, 3], [4, 5, 6]])
    data2 = pycoll.to_tensor([[7, 8, 9], [10, 11, 12]])
else:
    data1 = pycoll.to_tensor([[13, 14, 15], [16, 17, 18]])
    data2 = pycoll.to_tensor([[19, 20, 21], [22, 23, 24]])
task = dist.stream.alltoall(out_tensor_list, [data1, data2], sync_op=False)
task.wait()  # type: ignore[union-attr]
print(out_tensor_list)
# [[[1, 2, 3], [4, 5, 6]], [[13, 14, 15], [16, 17, 18]]]    (2 GPUs, out for rank 0)
# [[[7, 8, 9], [10, 11, 12]], [[19, 20, 21], [22, 23, 24]]] (2 GPUs, out for rank 1)
# all_to_all with unequal split sizes
if dist.get_rank() == 0:
    data1 = pycoll.to_tensor([[1, 2, 3], [4, 5, 6]])       # shape: (2, 3)
    data2 = pycoll.to_tensor([7])                          # shape: (1, )
    out_data1 = pycoll.empty((2, 3), dtype=data1.dtype)
    out_data2 = pycoll.empty((3, 2), dtype=data1.dtype)
else:
    data1 = pycoll.to_tensor([[8, 9], [10, 11], [12, 13]]) # shape: (3, 2)
    data2 = pycoll.to_tensor([[14, 15, 16, 17]])           # shape: (1, 4)
    out_data1 = pycoll.empty((1,), dtype=data1.dtype)
    out_data2 = pycoll.empty((1, 4), dtype=data1.dtype)
dist.alltoall([out_data1, out_data2], [data1, data2])
print([out_data1, out_data2])
# [[[1, 2, 3], [4, 5, 6]], [[8, 9], [10, 11], [12, 13]]]  (2 GPUs, out for rank 0)
# [[7], [[14, 15, 16, 17]]]                               (2 GPUs, out for rank 1)
