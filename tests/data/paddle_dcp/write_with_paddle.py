"""How the checkpoints in this folder were written: by paddle 3.3.1's CPU build on 2 ranks (paddle is
not a dependency of pycoll or its tests; this script is not a test):

    cd tests/data/paddle_dcp && python -m paddle.distributed.launch --nproc_per_node 2 write_with_paddle.py .

placements/  save_state_dict of distributed tensors (Shard(0), Shard(1), Replicate), plain float16,
             bfloat16, int64 and 0-d tensors, an Adam state after one step and a Linear's weights
             (nested dicts);
sharded/     ShardedWeights split by hand (uneven rows, columns, one whole on both ranks);
replicas/    save_replicas=True (paddle lists every copy of a replicated block);
values.npz   every whole value, taken from the tensors themselves (bfloat16 as its bit patterns).
"""
import os
import sys

import numpy as np
import paddle
import paddle.distributed as dist
from paddle.distributed import ShardedWeight, save_state_dict

out = sys.argv[1]
dist.init_parallel_env()
rank = dist.get_rank()
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
W = np.arange(20, dtype="float32").reshape(5, 4) - 7.5
B = np.linspace(-1, 1, 6).astype("float32")
I = (np.arange(6, dtype="int64") * 1000003 - 2 ** 40).reshape(2, 3)
H = (np.arange(12, dtype="float32").reshape(3, 4) / 8 - 0.3).astype("float16")
BF = np.array([1.0, -2.5, 3.140625, 65280.0, 1e-3, -0.0], dtype="float32")
S = np.arange(12, dtype="float64").reshape(4, 3) * 0.25
C = np.arange(10, dtype="int32").reshape(2, 5) - 4

# an optimizer's state: Linear(4, 3) with known weights, one Adam step on loss = sum(x @ W0 + b0)
lin = paddle.nn.Linear(4, 3)
lin.weight.set_value(paddle.to_tensor((np.arange(12, dtype="float32").reshape(4, 3) - 5) / 10))
lin.bias.set_value(paddle.to_tensor(np.zeros(3, "float32")))
adam = paddle.optimizer.Adam(learning_rate=0.01, parameters=lin.parameters())
lin(paddle.to_tensor(np.arange(8, dtype="float32").reshape(2, 4) / 4)).sum().backward()
adam.step()
opt = {k: v for k, v in adam.state_dict().items() if isinstance(v, paddle.Tensor)}

bf = paddle.to_tensor(BF).astype("bfloat16")
state = {"w": dist.shard_tensor(paddle.to_tensor(W), mesh, [dist.Shard(0)]),
         "b": dist.shard_tensor(paddle.to_tensor(B), mesh, [dist.Replicate()]),
         "h": paddle.to_tensor(H),
         "i": dist.shard_tensor(paddle.to_tensor(I), mesh, [dist.Shard(1)]),
         "bf": bf,
         "step": paddle.to_tensor(np.int64(7)),
         "opt": opt,
         "model": {"weight": lin.weight, "bias": lin.bias}}
save_state_dict(state, os.path.join(out, "placements"))

rows = (0, 3) if rank == 0 else (3, 4)
cols = (0, 2) if rank == 0 else (2, 5)
sharded = {"s": ShardedWeight("s", paddle.to_tensor(S[rows[0]:rows[1]]), (rows[1] - rows[0], 3), (4, 3), (rows[0], 0)),
           "c": ShardedWeight("c", paddle.to_tensor(C[:, cols[0]:cols[1]]), (2, cols[1] - cols[0]), (2, 5),
                              (0, cols[0])),
           "r": ShardedWeight("r", paddle.to_tensor(B), (6,), (6,), (0,))}
save_state_dict(sharded, os.path.join(out, "sharded"))
save_state_dict({"w": state["w"], "b": state["b"]}, os.path.join(out, "replicas"), save_replicas=True)
dist.barrier()
if rank == 0:
    whole = {"w": W, "b": B, "h": H, "i": I, "bf": bf.numpy(), "step": np.int64(7), "s": S, "c": C, "r": B}
    assert whole["bf"].dtype == np.uint16  # paddle's numpy() of a bfloat16 tensor: its bit patterns
    whole.update({f"opt.{k}": v.numpy() for k, v in opt.items()})
    whole.update({"model.weight": lin.weight.numpy(), "model.bias": lin.bias.numpy()})
    np.savez_compressed(os.path.join(out, "values.npz"), **whole)
