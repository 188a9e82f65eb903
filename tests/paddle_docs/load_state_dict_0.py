# doctest: +SKIP('run in distributed mode.')
import pycoll
import pycoll.distributed as dist
ckpt_path = "./checkpoint"
w1 = pycoll.arange(32).reshape([4, 8])
mesh = dist.ProcessMesh([0, 1])
sharded_w1 = dist.shard_tensor(w1, mesh, [dist.Shard(0)])
state_dict = {"w1": sharded_w1}
dist.save_state_dict(state_dict, ckpt_path)
w1_to_load = pycoll.zeros_like(w1)
sharded_w1_to_load = dist.shard_tensor(w1, mesh, [dist.Replicate()])
state_dict_to_load = {"w1": sharded_w1_to_load}
dist.load_state_dict(state_dict_to_load, ckpt_path)
print(f"state_dict_to_load:{state_dict_to_load}")
# doctest: -SKIP
