"""A model-parallel layer's split weight keeps what its ParamAttr says for the optimizer
(need_clip, learning-rate factor, regularizer), as the whole weight would: a need_clip=False
split weight steps unclipped and out of ClipGradByGlobalNorm's norm. The numbers are paddle
3.3.1's for the same program unsplit (data parallel); 2 ranks."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.regularizer import L2Decay

strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 2}
fleet.init(is_collective=True, strategy=strategy)
rank = dist.get_rank()
mpu = fleet.meta_parallel

attr = pycoll.ParamAttr(need_clip=False, learning_rate=0.5, regularizer=L2Decay(0.25))
split = mpu.RowParallelLinear(4, 2, weight_attr=attr, has_bias=False, input_is_parallel=False)
assert split.weight.is_distributed and split.weight.need_clip is False
assert split.weight.optimize_attr["learning_rate"] == 0.5 and split.weight.regularizer.coeff == 0.25

a = mpu.ColumnParallelLinear(2, 2, weight_attr=pycoll.ParamAttr(need_clip=False), has_bias=False, gather_output=True)
a.weight.set_value(np.eye(2, dtype="float32")[:, rank:rank + 1])
b = nn.Linear(2, 1, bias_attr=False)
b.weight.set_value(np.ones((2, 1), "float32"))
net = nn.Sequential(a, b)
opt = pycoll.optimizer.SGD(learning_rate=1.0, parameters=net.parameters(), grad_clip=nn.ClipGradByGlobalNorm(0.01))
model, opt = fleet.distributed_model(net), fleet.distributed_optimizer(opt)
model(pycoll.to_tensor([[1.0, 2.0]])).sum().backward()
opt.step()
np.testing.assert_allclose(a.weight.numpy(), np.array([[0.0, -1.0], [-2.0, -1.0]])[:, rank:rank + 1], rtol=1e-6)
np.testing.assert_allclose(b.weight.numpy().ravel(), [0.99553, 0.99106], rtol=1e-5)
print(f"OK rank={rank}", flush=True)
