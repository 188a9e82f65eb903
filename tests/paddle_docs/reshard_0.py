import pycoll
import pycoll.distributed as dist
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
# dense tensor
a = pycoll.ones([10, 20])
# distributed tensor
d_tensor = dist.shard_tensor(a, mesh, [dist.Partial()])
out_d_tensor = dist.reshard(d_tensor, mesh, [dist.Replicate()])
print(out_d_tensor)
