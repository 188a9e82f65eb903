# doctest: +SKIP('run in distributed mode')
import pycoll
import pycoll.distributed as dist
w1 = pycoll.arange(32).reshape([4, 8])
mesh = dist.ProcessMesh([0, 1])
sharded_w1 = dist.shard_tensor(w1, mesh, [dist.Shard(0), dist.Replicate()])
state_dict = {"w1": sharded_w1}
dist.save_state_dict(state_dict, "./checkpoint")
# doctest: -SKIP
