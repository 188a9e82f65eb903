"""fleet.distributed_model on dp_degree=2 x mp_degree=2 (4 ranks): the TensorParallel it returns
broadcasts each parameter once per group at wrap (its model-parallel broadcast, then the
DataParallel it wraps the layers in, whose own start is the data-parallel one: no second
data-parallel broadcast), and the replicated weights, made different on every rank on purpose,
end as global rank 0's (the model-parallel group's first rank's, then the data-parallel
group's)."""
import collections

import numpy as np

import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import ColumnParallelLinear, TensorParallel

dist.init_parallel_env()
rank = dist.get_rank()
strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 2, "mp_degree": 2}
fleet.init(is_collective=True, strategy=strategy)
model = nn.Sequential(ColumnParallelLinear(4, 4, has_bias=True, gather_output=True), nn.Linear(4, 2))
replicated = model[1].weight
replicated.set_value(np.full((4, 2), rank, "float32"))
seen = collections.Counter()
real_broadcast = dist.broadcast


def counting_broadcast(tensor, src, group=None, sync_op=True):
    seen[(id(tensor), tuple(group.ranks) if group is not None else None)] += 1
    return real_broadcast(tensor, src, group, sync_op)


dist.broadcast = counting_broadcast
wrapped = fleet.distributed_model(model)
dist.broadcast = real_broadcast
assert type(wrapped) is TensorParallel
twice = {key: n for key, n in seen.items() if n > 1}
assert not twice, f"broadcast more than once over one group: {twice}"
dp_ranks = tuple(fleet.get_hybrid_communicate_group().get_data_parallel_group().ranks)
assert all((id(p), dp_ranks) in seen for p in model.parameters())  # every parameter once over dp
np.testing.assert_array_equal(replicated.numpy(), np.zeros((4, 2), "float32"))  # global rank 0's
print(f"tensor parallel wrap OK rank={rank} broadcasts={sum(seen.values())}", flush=True)
