import pycoll
import pycoll.distributed as dist
from pycoll.distributed import Replicate, Shard
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
original_tensor = pycoll.rand([4, 1024, 512])
dist_tensor = dist.shard_tensor(original_tensor, mesh, [Shard(0)])
# dense_tensor's shape is the same as original_tensor
dense_tensor = dist.unshard_dtensor(dist_tensor)
