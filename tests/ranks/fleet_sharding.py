"""Sharding and gradient merge through fleet on 4 ranks train as one process does on the
whole batch: sharding_degree=4 at stage 2 with gradient merge (k=2), sharding_degree=4 at
stage 3, dp_degree=2 x sharding_degree=2 at stage 1 with gradient merge (k=3) and at stage 2
(k=2), and group_sharded_parallel at p_g_os with a dp_group; each rank
keeping the optimizer state of its share of its sharding group. Momentum, not Adam: Adam would
not notice gradients left unaveraged by the merge."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.sharding import group_sharded_parallel
from fleet_afresh import init_afresh

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
STEPS, BATCH = 6, 3


def net():
    pycoll.seed(11)
    return nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))


def batches():
    data = np.random.default_rng(5)
    return [data.standard_normal((n * BATCH, 4)).astype(np.float32) for _ in range(STEPS)]


def reference(k):
    """One process, one plain step per k steps, on the whole batch of every rank over those k
    steps (the mean over them is what gradient merge's average of k means is)."""
    model = net()
    opt = pycoll.optimizer.Momentum(learning_rate=0.05, parameters=model.parameters())
    data = batches()
    for first in range(0, STEPS, k):
        (model(pycoll.to_tensor(np.concatenate(data[first:first + k]))) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy() for p in model.parameters()]


report = []
for configs, stage, k in [({"sharding_degree": 4}, 2, 2), ({"sharding_degree": 4}, 3, 1),
                          ({"dp_degree": 2, "sharding_degree": 2}, 1, 3),
                          ({"dp_degree": 2, "sharding_degree": 2}, 2, 2)]:
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = configs
    strategy.sharding_configs = {"stage": stage}
    strategy.gradient_merge = k > 1
    strategy.gradient_merge_configs = {"k_steps": k}
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    hcg = fleet.get_hybrid_communicate_group()
    assert hcg.get_sharding_parallel_world_size() == configs["sharding_degree"]
    assert hcg.get_parallel_mode() == dist.ParallelMode.SHARDING_PARALLEL  # paddle's, dp beside or not
    # paddle's order, sharding inside data: rank = dp_index * sharding_degree + sharding_index
    degree = configs["sharding_degree"]
    assert hcg.get_sharding_parallel_group().ranks == list(range(rank - rank % degree, rank - rank % degree + degree))
    assert hcg.get_data_parallel_group().ranks == list(range(rank % degree, n, degree))
    model = fleet.distributed_model(net())
    opt = fleet.distributed_optimizer(pycoll.optimizer.Momentum(learning_rate=0.05, parameters=model.parameters()))
    for x in batches():
        (model(pycoll.to_tensor(x[rank * BATCH:(rank + 1) * BATCH])) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    if stage == 3:
        model.get_all_parameters()
    for p, q in zip(model.parameters(), reference(k)):
        np.testing.assert_allclose(p.numpy(), q, rtol=1e-5, atol=1e-5, err_msg=f"{configs} stage {stage}")
    state = sum(v.numpy().nbytes for v in opt.state_dict().values())
    shares = []
    dist.all_gather_object(shares, state, group=hcg.get_sharding_parallel_group())
    assert min(shares) > 0 and max(shares) < sum(shares), shares
    report.append(f"{'x'.join(f'{k[:-7]}{v}' for k, v in configs.items())}/stage{stage}/k{k}:state={state}")
# group_sharded_parallel inside data parallelism: p_g_os over the sharding group, dp_group beside
layer = net()
model, opt, _ = group_sharded_parallel(layer, pycoll.optimizer.Momentum(learning_rate=0.05, parameters=layer.parameters()),
                                       "p_g_os", group=hcg.get_sharding_parallel_group(),
                                       dp_group=hcg.get_data_parallel_group(), segment_size=0)
for x in batches():
    (model(pycoll.to_tensor(x[rank * BATCH:(rank + 1) * BATCH])) ** 2).mean().backward()
    opt.step()
    opt.clear_grad()
assert model.parameter_bytes() < sum(p.size for p in net().parameters()) * 4
model.get_all_parameters()
for p, q in zip(model.parameters(), reference(1)):
    np.testing.assert_allclose(p.numpy(), q, rtol=1e-5, atol=1e-5, err_msg="p_g_os with dp_group")
report.append("p_g_os+dp_group")
print(f"fleet sharding OK rank={rank} {' '.join(report)}", flush=True)
