# doctest: +SKIP('run in distributed mode.')
import pycoll
import pycoll.distributed as dist
ckpt_path = "./checkpoint"
w1 = pycoll.arange(32).reshape([4, 8])
mesh = dist.ProcessMesh([0, 1])
sharded_w1 = dist.shard_tensor(w1, mesh, [dist.Shard(0)])
state_dict = {"w1": sharded_w1}
dist.save_state_dict(state_dict, ckpt_path) # save sharded checkpoint
# doctest: +SKIP('run in single-card mode.')
import pycoll
import pycoll.distributed as dist
ckpt_path = "./checkpoint"
unsharded_state_dict = dist.load_merged_state_dict(ckpt_path)  # load unsharded checkpoint
print(f"unsharded_state_dict:{unsharded_state_dict}")
# doctest: -SKIP
