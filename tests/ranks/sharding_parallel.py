"""fleet.distributed_model with sharding_degree=2 (mp = pp = 1) on 2 ranks returns paddle's
``fleet.meta_parallel.ShardingParallel``: ``_layers`` the user's layer, state_dict keys under
``_layers.`` (paddle's MetaParallelBase keeps the layer as ``self._layers``), the layer's
parameters, train/eval reaching the layer; at stages 1, 2 and 3 it trains (Momentum through
fleet.distributed_optimizer, each rank on its half of every batch) as one process does on the
whole batch, and its eval forward gives that process's outputs."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import ShardingParallel
from fleet_afresh import init_afresh

TOL = dict(rtol=1e-6, atol=1e-6)
STEPS, BATCH = 3, 4


def net():
    pycoll.seed(21)
    return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))


dist.init_parallel_env()
rank = dist.get_rank()
data = np.random.default_rng(2)
batches = [data.standard_normal((2 * BATCH, 4)).astype("float32") for _ in range(STEPS)]
for stage in (1, 2, 3):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, "sharding_degree": 2}
    strategy.sharding_configs = {"stage": stage}
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    layer = net()
    model = fleet.distributed_model(layer)
    assert type(model) is ShardingParallel and model._layers is layer, type(model)
    assert list(model.state_dict()) == ["_layers.0.weight", "_layers.0.bias", "_layers.2.weight", "_layers.2.bias"]
    assert [id(p) for p in model.parameters()] == [id(p) for p in layer.parameters()]
    opt = fleet.distributed_optimizer(pycoll.optimizer.Momentum(learning_rate=0.1, parameters=model.parameters()))
    ref = net()
    ref_opt = pycoll.optimizer.Momentum(learning_rate=0.1, parameters=ref.parameters())
    for x in batches:
        loss = (model(pycoll.to_tensor(x[rank * BATCH:(rank + 1) * BATCH])) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        (ref(pycoll.to_tensor(x)) ** 2).mean().backward()
        ref_opt.step()
        ref_opt.clear_grad()
    model.eval()
    assert not layer.training and not layer[0].training
    with pycoll.no_grad():
        out = model(pycoll.to_tensor(batches[0]))
        np.testing.assert_allclose(out.numpy(), ref(pycoll.to_tensor(batches[0])).numpy(), err_msg=f"stage {stage}",
                                   **TOL)
    model.train()
    assert layer.training
    model.get_all_parameters()  # stage 3 holds pieces between uses
    for (key, value), q in zip(model.state_dict().items(), ref.parameters()):
        np.testing.assert_allclose(value.numpy(), q.numpy(), err_msg=f"stage {stage}: {key}", **TOL)
print(f"sharding parallel OK rank={rank}", flush=True)
