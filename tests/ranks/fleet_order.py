"""fleet's optimizer on 2 ranks: with sharding_degree=2, distributed_optimizer before
distributed_model (or without it) trains as the usual order does, and as paddle 3.3.1 does (its losses and
weight sums, measured on its CPU build with this script's data, are written below); what
distributed_optimizer returns is paddle's HybridParallelOptimizer (``_inner_opt``: the sharding
optimizer, or the user's optimizer under plain data parallelism, also under gradient merge);
strategy.amp with use_pure_bf16 decorates the model at O2 (on a simulated GPU place, where
pycoll.amp.decorate says what O2 does there), plain amp does not."""
import importlib
import warnings

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_optimizers import (DygraphShardingOptimizer, GradientMergeOptimizer,
                                                      HybridParallelOptimizer)

from fleet_afresh import init_afresh

precision = importlib.import_module("pycoll.amp.auto_cast")  # the module (pycoll.amp.auto_cast is the class)

# paddle 3.3.1, 2 CPU ranks, this data: (loss rank 0, loss rank 1, sum of the weights) per step
PADDLE = [(5.320546, 5.547751, -1.194566), (3.923206, 4.074795, -2.238291), (2.736167, 2.823920, -3.337120)]


def start(**hybrid):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = hybrid
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    return strategy


def train(order):
    """``order``: 'first' (the optimizer wrapped first), 'usual' (the model first) or 'only' (the
    optimizer alone, as paddle allows: its gradients averaged at each step, the whole state kept)."""
    start(dp_degree=1, sharding_degree=2)
    model = pycoll.nn.Sequential(pycoll.nn.Linear(4, 8), pycoll.nn.Tanh(), pycoll.nn.Linear(8, 1))
    for i, p in enumerate(model.parameters()):
        p.set_value(np.random.RandomState(i).uniform(-0.5, 0.5, p.shape).astype("float32"))
    opt = pycoll.optimizer.Adam(learning_rate=0.05, parameters=model.parameters())
    if order == "usual":
        model = fleet.distributed_model(model)
        opt = fleet.distributed_optimizer(opt)
    else:
        opt = fleet.distributed_optimizer(opt)
        assert isinstance(opt, HybridParallelOptimizer) and not isinstance(opt._inner_opt, DygraphShardingOptimizer)
        if order == "first":
            model = fleet.distributed_model(model)
    assert isinstance(opt._inner_opt, DygraphShardingOptimizer) == (order != "only"), type(opt._inner_opt)
    data = np.random.RandomState(0).rand(8, 4).astype("float32")
    x, y = data[rank * 4:(rank + 1) * 4], data.sum(1, keepdims=True)[rank * 4:(rank + 1) * 4]
    seen = []
    for _ in range(3):
        loss = pycoll.nn.functional.mse_loss(model(pycoll.to_tensor(x)), pycoll.to_tensor(y))
        loss.backward()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            opt.step()
        assert any("without fleet.distributed_model(model)" in str(w.message) for w in said) == (
            order == "only" and not seen), [str(w.message) for w in said]  # said once, at the first step
        opt.clear_grad()
        seen.append((float(loss), float(sum(p.numpy().sum() for p in model.parameters()))))
    return seen


dist.init_parallel_env()
rank = dist.get_rank()
first, usual, only = train("first"), train("usual"), train("only")
np.testing.assert_allclose(first, usual, rtol=0, atol=1e-7)
for seen in (first, only):
    np.testing.assert_allclose(seen, [(step[rank], step[2]) for step in PADDLE], rtol=1e-5, atol=0)

# plain data parallelism: the user's optimizer inside, its attributes reachable; under gradient merge too
start(dp_degree=2)
layer = pycoll.nn.Linear(2, 1)
sgd = pycoll.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters())
opt = fleet.distributed_optimizer(sgd)
assert type(opt) is HybridParallelOptimizer and opt._inner_opt is sgd
assert opt._learning_rate == 0.1 and opt._parameter_list == sgd._parameter_list and opt.get_lr() == 0.1
strategy = start(dp_degree=2)
strategy.gradient_merge = True
strategy.gradient_merge_configs = {"k_steps": 2}
merged = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters()),
                                     strategy)
assert isinstance(merged, GradientMergeOptimizer) and isinstance(merged._inner_opt, pycoll.optimizer.SGD)

# strategy.amp: O2 for pure bf16 (decorate, on a GPU place, says O2 computes in float32 here), nothing for O1
amp_strategy = start(dp_degree=2)
amp_strategy.amp = True
precision_on_accelerator = precision.on_accelerator
precision.on_accelerator = lambda: True  # what a GPU place answers
try:
    for pure, said in ((None, False), ("use_pure_bf16", True)):
        if pure:
            amp_strategy.amp_configs = {pure: True}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fleet.distributed_model(pycoll.nn.Linear(2, 2))
        assert any("decorate(level='O2')" in str(w.message) for w in caught) == said, (pure, caught)
finally:
    precision.on_accelerator = precision_on_accelerator
print(f"OK rank={rank}", flush=True)
