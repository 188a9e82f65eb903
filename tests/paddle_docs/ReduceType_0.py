import pycoll
import pycoll.distributed as dist
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
a = pycoll.ones([10, 20])
# doctest: +REQUIRES(env:DISTRIBUTED)
# distributed tensor
d_tensor = dist.shard_tensor(a, mesh, [dist.Partial(dist.ReduceType.kRedSum)])
