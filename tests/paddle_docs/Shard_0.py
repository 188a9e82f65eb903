import pycoll
import pycoll.distributed as dist
mesh = dist.ProcessMesh([[2, 4, 5], [0, 1, 3]], dim_names=['x', 'y'])
a = pycoll.to_tensor([[1,2,3],[5,6,7]])
# distributed tensor
d_tensor = dist.shard_tensor(a, mesh, [dist.Shard(0), dist.Shard(1)])
