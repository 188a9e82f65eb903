"""fleet's sep (segment) parallelism against one process (float64): ``python fleet_sep.py MP``.

``fleet.init`` with ``sep_degree=2`` (and ``mp_degree`` MP; ``dp_degree`` takes the rest of the
ranks): every rank checks its hybrid group's sep, data x sep and pipe x model groups against
the grid, and the topology's fused ranks. The ranks start from different weights;
``fleet.distributed_model`` (SegmentParallel, or TensorParallel beside model parallelism) gives
every rank the first rank's. Each data-parallel copy takes its share of every global batch, each
sep rank of it one half of every sequence, and its loss is its tokens' share of its copy's mean
loss. Backward leaves each sep rank its own share (paddle's); ``fleet.distributed_optimizer``'s
step averages the gradients over data and sums them over sep, giving the whole batch's, so after
every step each rank's weights equal those of the same model trained in one process on the
whole batch. Last, ``fused_allreduce_gradients(params, hcg)`` sums over sep and averages over
data, as paddle's.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.fleet.utils.hybrid_parallel_util import fused_allreduce_gradients

MP = int(sys.argv[1])
SEP = 2
BATCH, SEQ, WIDTH = 4, 8, 6
TOL = dict(rtol=1e-10, atol=1e-12)


class TokenMLP(nn.Layer):
    """Per-token layers (what sep splits: the sequence), column/row split over the model group."""

    def __init__(self):
        super().__init__()
        self.fc1 = fleet.meta_parallel.ColumnParallelLinear(WIDTH, 8, has_bias=True, gather_output=False)
        self.fc2 = fleet.meta_parallel.RowParallelLinear(8, 3, input_is_parallel=True)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.fc1(x)))


strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": -1, "mp_degree": MP, "sep_degree": SEP}
fleet.init(is_collective=True, strategy=strategy)
hcg = fleet.get_hybrid_communicate_group()
rank, world = dist.get_rank(), dist.get_world_size()
DP = world // (SEP * MP)
topo = hcg.topology()
coord = topo.get_coord(rank)
assert (hcg.get_sep_parallel_world_size(), hcg.get_sep_parallel_rank()) == (SEP, coord.sep)
assert hcg.get_data_parallel_world_size() == DP
assert hcg.get_parallel_mode() == (dist.ParallelMode.TENSOR_PARALLEL if MP > 1 else dist.ParallelMode.SEGMENT_PARALLEL)
line = lambda axes: sorted(r for r in range(world)  # noqa: E731 - the ranks sharing this rank's other axes
                           if all(getattr(topo.get_coord(r), a) == getattr(coord, a)
                                  for a in topo.get_hybrid_group_names() if a not in axes))
assert hcg.get_sep_parallel_group().ranks == line(["sep"]), hcg.get_sep_parallel_group().ranks
assert sorted(hcg.get_dp_sep_parallel_group().ranks) == line(["data", "sep"])
assert sorted(hcg.get_pp_mp_parallel_group().ranks) == line(["pipe", "model"])
assert hcg.get_sep_parallel_group_src_rank() == line(["sep"])[0]
assert topo.get_fused_ranks(["sep"]) == topo.get_comm_list("sep")
assert sorted(r for ranks in topo.get_fused_ranks(["data", "sep"]) for r in ranks) == list(range(world))
ranks, group = hcg.create_fuse_group(["data", "sep"])
assert ranks == sorted(hcg.get_dp_sep_parallel_group().ranks) and group.ranks == ranks

# -- training: every rank against one process on the whole batch ------------------------------
pycoll.seed(100 + rank)  # different weights everywhere: the wrap must make them agree
pycoll.set_default_dtype("float64")
model = fleet.distributed_model(TokenMLP())
assert isinstance(model, fleet.meta_parallel.SegmentParallel if MP == 1 else fleet.meta_parallel.TensorParallel)
optimizer = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters()))


def whole(name, value):
    """The unsplit weight ``name`` (gathered over the model group where it is split)."""
    if MP == 1 or value.ndim == 0 or not getattr(model._layers.state_dict()[name], "is_distributed", False):
        return value
    parts = []
    dist.all_gather(parts, pycoll.to_tensor(value), group=hcg.get_model_parallel_group())
    return np.concatenate([p.numpy() for p in parts], axis=value.ndim - 1 if "fc1" in name else 0)


reference = nn.Sequential(nn.Linear(WIDTH, 8), nn.Tanh(), nn.Linear(8, 3))
names = {"fc1.weight": "0.weight", "fc1.bias": "0.bias", "fc2.weight": "2.weight", "fc2.bias": "2.bias"}
state = {names[k]: pycoll.to_tensor(whole(k, v.numpy())) for k, v in model._layers.state_dict().items()}
reference.set_state_dict(state)
ref_optimizer = pycoll.optimizer.SGD(learning_rate=0.1, parameters=reference.parameters())
data = np.random.RandomState(0)
for step in range(3):
    x, target = data.randn(BATCH, SEQ, WIDTH), data.randn(BATCH, SEQ, 3)
    share, half = BATCH // DP, SEQ // SEP
    mine = (slice(coord.data * share, (coord.data + 1) * share), slice(coord.sep * half, (coord.sep + 1) * half))
    out = model(pycoll.to_tensor(x[mine]))
    loss = ((out - pycoll.to_tensor(target[mine])) ** 2).sum() / (share * SEQ * 3)  # its share of its copy's mean
    loss.backward()
    mine = model._layers.fc2.bias.grad.numpy()  # replicated on every rank: its sep ranks' shares differ
    shares = []
    dist.all_gather(shares, pycoll.to_tensor(mine), group=hcg.get_sep_parallel_group())
    assert not np.allclose(shares[0].numpy(), shares[1].numpy()), "backward must leave each sep rank its own share"
    optimizer.step()
    optimizer.clear_grad()
    ref_loss = ((reference(pycoll.to_tensor(x)) - pycoll.to_tensor(target)) ** 2).mean()
    ref_loss.backward()
    ref_optimizer.step()
    ref_optimizer.clear_grad()
    for name, value in model._layers.state_dict().items():
        np.testing.assert_allclose(whole(name, value.numpy()), reference.state_dict()[names[name]].numpy(), **TOL,
                                   err_msg=f"step {step}: {name}")

# -- fused_allreduce_gradients: summed over sep, averaged over data ---------------------------
param = pycoll.create_parameter([3], "float64")
param.grad = pycoll.full([3], float(rank + 1), dtype="float64")
fused_allreduce_gradients([param], hcg)
expected = sum(r + 1 for r in line(["data", "sep"])) / DP
np.testing.assert_allclose(param.grad.numpy(), [expected] * 3)
print(f"fleet sep OK rank={rank}")
