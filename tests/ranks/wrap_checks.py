"""Wrap-time checks on 2 ranks: models that differ between the ranks (a buffer's shape, the
layers, a replicated weight under TensorParallel, a parameter frozen on one rank, the bucket
sizes) or have nothing to train are refused on EVERY
rank by a ValueError that starts with the wrapping API and names the differing entries, and the
job goes on; parameters marked no_sync stay each rank's own; fleet.init
called again keeps its first groups; shard_dataloader reads a batch that does not split over
dp as paddle does."""
import logging

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.distributed.parallel
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import ColumnParallelLinear
from pycoll.distributed.sharding import group_sharded_parallel

dist.init_parallel_env()
rank = dist.get_rank()


def refused(call, words):
    try:
        call()
    except ValueError as e:
        assert all(w in str(e) for w in words), e
    else:
        raise AssertionError(f"{call} was not refused")
    x = np.ones(1, "float32")
    dist.all_reduce(x)  # every rank raised before sending anything: the job goes on
    assert x[0] == 2.0, x


def with_buffer():
    m = nn.Sequential(nn.Linear(4, 4))
    m.register_buffer("stat", pycoll.ones([3 + rank]))
    return pycoll.DataParallel(m)


refused(with_buffer, ["DataParallel: the ranks wrap different models",
                      "buffer stat: rank 0 has [[3], 'float32'], rank 1 has [[4], 'float32']"])


def frozen():
    m = nn.Linear(2, 2)
    for p in m.parameters():
        p.stop_gradient = True
    return pycoll.DataParallel(m)


refused(frozen, ["DataParallel: layers has no parameter to train"])  # paddle: an AssertionError


def frozen_on_one_rank():  # the buckets would differ: paddle's gloo aborts in the first step
    m = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
    m[0].weight.stop_gradient = rank == 1
    return pycoll.DataParallel(m)


refused(frozen_on_one_rank, ["DataParallel: the ranks wrap different models",
                             "0.weight: rank 0 has [[4, 4], 'float32', 'averaged'], "
                             "rank 1 has [[4, 4], 'float32', 'frozen']"])
refused(lambda: pycoll.DataParallel(nn.Linear(4, 1), comm_buffer_size=25 - 25 * rank),
        ["DataParallel arguments: rank 0 has {'comm_buffer_size': 25,", "rank 1 has {'comm_buffer_size': 0,"])

# paddle's no_sync mark: a rank's own parameter (an MoE expert) is neither broadcast nor averaged,
# and a non-persistable buffer is not broadcast (as on paddle 3.3.1, 2 CPU ranks); buffers of 0 MB
# (one parameter each) train as paddle's do
m = nn.Linear(2, 1)
m.weight.set_value(pycoll.full([2, 1], float(rank + 1)))
m.weight.no_sync = True
m.register_buffer("tmp", pycoll.full([1], float(rank)), persistable=False)
dm = pycoll.DataParallel(m, comm_buffer_size=0, last_comm_buffer_size=0)
assert m.weight.numpy().ravel().tolist() == [rank + 1] * 2 and m.tmp.numpy().tolist() == [rank]
(dm(pycoll.full([1, 2], float(rank + 1))).sum() * (rank + 1)).backward()
assert m.weight.grad.numpy().ravel().tolist() == [(rank + 1.0) ** 2] * 2, m.weight.grad  # its own
assert m.bias.grad.numpy().tolist() == [1.5], m.bias.grad  # (1 + 2) / 2
dist.parallel.sync_params_buffers(m)
assert m.weight.numpy().ravel().tolist() == [rank + 1] * 2 and m.tmp.numpy().tolist() == [rank]


def sharded_different():
    m = nn.Linear(4, 4 + rank)
    return group_sharded_parallel(m, pycoll.optimizer.AdamW(parameters=m.parameters()), "os_g")


refused(sharded_different, ["group_sharded_parallel: the ranks wrap different models",
                            "weight: rank 0 has [[4, 4], 'float32', 'averaged'], rank 1 has [[4, 5], 'float32', 'averaged']"])

# shard_dataloader: 12 samples, batch_size 3 and 5 over dp=2 -> int(bs / 2) rows per rank through a
# DistributedBatchSampler. Rows measured on paddle 3.3.1 CPU (2 ranks): bs 3 rank 0 0,2,4,..,10,
# rank 1 1,3,..,11 (batch_size 1); bs 5 rank 0 [0,1],[4,5],[8,9], rank 1 [2,3],[6,7],[10,11] (batch_size 2)
class Rows(pycoll.io.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return np.full([2], float(i), "float32"), np.array([float(i)], "float32")


mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])
expected = {3: [[2 * i + rank] for i in range(6)], 5: [[4 * i + 2 * rank, 4 * i + 2 * rank + 1] for i in range(3)]}
for bs, rows in expected.items():
    loader = dist.shard_dataloader(pycoll.io.DataLoader(Rows(), batch_size=bs), meshes=[mesh], shard_dims="dp")
    got = [(list(x.shape), x._local_value().numpy()[:, 0].tolist()) for x, _ in loader]
    assert got == [([2 * len(r), 2], r) for r in rows], (bs, got)
    assert loader.batch_size == bs // 2

strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 2}
fleet.init(is_collective=True, strategy=strategy)


class Model(nn.Layer):
    def __init__(self, plain_shape, buffer_size=2):
        super().__init__()
        self.c = ColumnParallelLinear(4, 8, has_bias=True, gather_output=False)
        self.plain = nn.Linear(*plain_shape, bias_attr=False)
        self.register_buffer("stat", pycoll.zeros([buffer_size]))


refused(lambda: fleet.distributed_model(Model((2, 4) if rank == 0 else (4, 2))),
        ["TensorParallel: the ranks wrap different models",
         "plain.weight: rank 0 has [[2, 4], 'float32'], rank 1 has [[4, 2], 'float32']"])
refused(lambda: fleet.distributed_model(Model((2, 4), buffer_size=2 + rank)),
        ["TensorParallel: the ranks wrap different models", "buffer stat: rank 0 has [[2], 'float32']"])
pycoll.seed(10 + rank)
alike = Model((2, 4))
fleet.distributed_model(alike)  # alike in shapes: it wraps (the split weights keep their blocks)
theirs = []
dist.all_gather(theirs, alike.plain.weight.numpy())
np.testing.assert_array_equal(theirs[0], theirs[1])  # the replicated weight broadcast from rank 0

# a second fleet.init keeps the first groups (paddle's) and says so
said = []
handler = logging.Handler()
handler.emit = lambda record: said.append(record.getMessage())
logging.getLogger("pycoll").addHandler(handler)
hcg = fleet.get_hybrid_communicate_group()
again = fleet.DistributedStrategy()
again.hybrid_configs = {"dp_degree": 2, "mp_degree": 1}
fleet.init(is_collective=True, strategy=again)
assert fleet.get_hybrid_communicate_group() is hcg and hcg.get_model_parallel_world_size() == 2
assert any("hybrid parallel environment has been initialized" in s and "mp_degree=2" in s for s in said), said
print(f"wrap checks OK rank={rank}", flush=True)
