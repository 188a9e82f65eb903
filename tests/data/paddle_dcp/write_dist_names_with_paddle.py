"""How dist_names/ was written: by paddle 3.3.1's CPU build on 2 ranks (not a test):

    cd tests/data/paddle_dcp && python -m paddle.distributed.launch --nproc_per_node 2 write_dist_names_with_paddle.py .

dist_names/  save_state_dict of a shard_optimizer(AdamW) state after two steps of a Linear(4, 2)
             (all ones) on [[0..3], [4..7]], its weight sharded Shard(1): paddle renames a
             shard_tensor'd parameter '<name>.dist', so its state keys are
             'linear_0.w_0.dist_moment1_0'... (the bias's keep 'linear_0.b_0_...').
"""
import os
import sys

import numpy as np
import paddle
import paddle.distributed as dist

dist.init_parallel_env()
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
net = paddle.nn.Linear(4, 2)
for p in net.parameters():
    p.set_value(paddle.ones(p.shape))
net.weight = dist.shard_tensor(net.weight, mesh, [dist.Shard(1)])
opt = dist.shard_optimizer(paddle.optimizer.AdamW(learning_rate=0.1, parameters=net.parameters()))
x = paddle.to_tensor(np.arange(8, dtype="float32").reshape(2, 4))
for _ in range(2):
    net(x).sum().backward()
    opt.step()
    opt.clear_grad()
dist.save_state_dict(opt.state_dict(), os.path.join(sys.argv[1], "dist_names"))
