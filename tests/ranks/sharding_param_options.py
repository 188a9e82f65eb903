"""Sharding honours what the unsharded optimizer reads per parameter and per group: every way of
sharding (group_sharded_parallel at each level, fsdp's fully_shard, fleet's sharding degree:
argv[1] "gsp" or "fleet") trains to the same parameters as the unsharded optimizer on the same data.

- "attrs": ParamAttr(learning_rate=...) and ParamAttr(regularizer=...) act on each piece as on
  the whole parameter; a need_clip=False gradient stays out of ClipGradByGlobalNorm's norm.
- "groups": parameter groups clip apart (each group's own global norm; a group's own grad_clip).
- "lamb": Lamb's trust ratio is the whole parameter's, also with parameters whose count does not
  divide by the world size (some ranks hold an empty piece of the one-element bias).
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet, fsdp
from pycoll.distributed.sharding import group_sharded_parallel
from pycoll.regularizer import L2Decay

PATH = sys.argv[1]
dist.init_parallel_env()
rank = dist.get_rank()
if PATH == "fleet":
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, "sharding_degree": dist.get_world_size()}
    fleet.init(is_collective=True, strategy=strategy)


def net():
    pycoll.seed(3)
    return nn.Sequential(
        nn.Linear(3, 5, weight_attr=pycoll.ParamAttr(learning_rate=0.1),
                  bias_attr=pycoll.ParamAttr(regularizer=L2Decay(0.5))),
        nn.Tanh(),
        nn.Linear(5, 4, weight_attr=pycoll.ParamAttr(need_clip=False)),
        nn.Linear(4, 1))


def optimizer(case, model, how):
    layers = list(model.children())
    if case == "attrs":
        return pycoll.optimizer.Momentum(0.2, parameters=model.parameters(), grad_clip=nn.ClipGradByGlobalNorm(0.05))
    if case == "groups":
        groups = [{"params": layers[0].parameters()},
                  {"params": layers[2].parameters(), "grad_clip": nn.ClipGradByNorm(0.02)},
                  {"params": layers[3].parameters(), "learning_rate": 0.5}]
        return pycoll.optimizer.SGD(0.3, parameters=groups, grad_clip=nn.ClipGradByGlobalNorm(0.05))
    # the exclude function is given the user's parameter, as unsharded (a probe: it got a 1-D
    # piece, so the usual "1-D means a bias" rule excluded the weights too); p_g_os and fsdp hold
    # their parameters released between uses, shape and all, so there it must go by the name
    def bias(p):
        return p.name.endswith(".b_0") if how in ("p_g_os", "fsdp") else len(p.shape) == 1

    return pycoll.optimizer.Lamb(0.1, lamb_weight_decay=0.01, parameters=model.parameters(),
                                 exclude_from_weight_decay_fn=bias)


def train(case, how):
    model = net()
    layer = model
    if how == "fsdp":
        fsdp.fully_shard(model)
        opt = optimizer(case, model, how)
    else:
        opt = optimizer(case, model, how)
        if how == "fleet":
            model, opt = fleet.distributed_model(model), fleet.distributed_optimizer(opt)
        elif how != "plain":
            model, opt, _ = group_sharded_parallel(model, opt, how, segment_size=1)
    data = np.random.default_rng(11)  # the same batches on every rank: the unsharded run is the reference
    for _ in range(3):
        x = pycoll.to_tensor(data.standard_normal((6, 3)).astype(np.float32))
        (model(x) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    if how == "p_g_os":
        model.get_all_parameters()
    return {k: np.asarray(v.numpy()) for k, v in layer.state_dict().items()}


hows = ["fleet"] if PATH == "fleet" else ["os", "os_g", "p_g_os", "fsdp"]
for case in ["attrs", "groups", "lamb"]:
    want = train(case, "plain")
    for how in hows:
        got = train(case, how)
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=2e-5, atol=1e-6,
                                       err_msg=f"{case} sharded by {how}: {key} differs from unsharded")
        changed = {k for k in want if not np.allclose(want[k], net().state_dict()[k].numpy())}
        assert changed == set(want), f"{case}: the reference left {set(want) - changed} unchanged"
print(f"OK rank={rank}", flush=True)
