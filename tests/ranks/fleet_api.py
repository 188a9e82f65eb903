"""paddle's collective helpers on 2 ranks, values as paddle 3.3.1's CPU build gives them where it
runs them: dist.all_gather into one tensor, fleet's worker queries and Fleet object,
hybrid_parallel_util's broadcasts, sync_params_buffers and fused_allreduce_gradients_with_group
(dp_degree=2), and broadcast_input_data over the model-parallel group (mp_degree=2; paddle runs
it on GPUs only)."""
import logging

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import fleet
from pycoll.distributed.fleet.utils import hybrid_parallel_util as hpu

from expect import expect
from fleet_afresh import init_afresh


class Lines(logging.Handler):
    """The messages pycoll's logger gives."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def start(**hybrid):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = hybrid
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    return fleet.get_hybrid_communicate_group()


hcg = start(dp_degree=2)
rank = dist.get_rank()

# all_gather into one tensor: the ranks' tensors stacked on axis 0 (paddle: any shape of that size)
x = pycoll.to_tensor(np.array([[rank, rank + 10, 7]], "float32"))
for shape in ([2, 1, 3], [2, 3], [6]):
    out = pycoll.zeros(shape)
    dist.all_gather(out, x)
    assert out.numpy().reshape(-1).tolist() == [0, 10, 7, 1, 11, 7], (shape, out.numpy())
out = pycoll.zeros([2, 1, 3])
dist.all_gather(out, x, sync_op=False).wait()
assert out.numpy().tolist() == [[[0, 10, 7]], [[1, 11, 7]]]
expect(ValueError, ["tensor_list is one tensor of shape [3, 3]", "shape [2, 1, 3]"],
       dist.all_gather, pycoll.zeros([3, 3]), x)

# the worker queries (paddle: rank, world_size, nranks, rank_in_node '0'/'1', one node, no device ids)
assert (fleet.rank(), fleet.world_size(), fleet.nranks(), fleet.node_num()) == (rank, 2, 2, 1)
assert fleet.rank_in_node() == fleet.local_rank() == str(rank)
assert fleet.local_device_ids() is None and fleet.world_device_ids() is None
assert fleet.fleet.worker_num() == 2 and isinstance(fleet.fleet, fleet.Fleet)

# parameters from the group's first rank (sync_params_buffers: from the rank given)
layer = pycoll.nn.Linear(2, 2)
for broadcast in (hpu.broadcast_dp_parameters, hpu.broadcast_mp_parameters, hpu.broadcast_sharding_parameters):
    layer.weight.set_value(np.full((2, 2), rank + 1, "float32"))
    broadcast(layer, hcg)
    # dp: rank 0's everywhere; mp and sharding groups are one rank each here: each keeps its own
    expected = 1 if broadcast is hpu.broadcast_dp_parameters else rank + 1
    assert layer.weight.numpy().tolist() == [[expected] * 2] * 2, (broadcast.__name__, layer.weight.numpy())
layer.weight.set_value(np.full((2, 2), rank + 1, "float32"))
hpu.sync_params_buffers(layer, hcg.get_data_parallel_group(), 1, False, True)
assert layer.weight.numpy().tolist() == [[2, 2], [2, 2]]

# gradients summed over the group times scale (default 1/size); paddle: [1.5, 3, 4.5] then [0.75, 1.5, 2.25]
w = pycoll.to_tensor(np.array([1.0, 2.0, 3.0], "float32"))
w.stop_gradient = False
(w * pycoll.to_tensor(np.array([1.0, 2.0, 3.0], "float32")) * (rank + 1)).sum().backward()
hpu.fused_allreduce_gradients_with_group([w], hcg.get_data_parallel_group())
assert w.grad.numpy().tolist() == [1.5, 3.0, 4.5], w.grad.numpy()
hpu.fused_allreduce_gradients_with_group([w], None, scale=0.25)
assert w.grad.numpy().tolist() == [0.75, 1.5, 2.25], w.grad.numpy()
hpu.fused_allreduce_gradients([w], hcg)  # equal gradients: their average
assert w.grad.numpy().tolist() == [0.75, 1.5, 2.25], w.grad.numpy()

# Fleet's paddle-style minimize: distributed_optimizer keeps the optimizer and returns the Fleet
sgd = pycoll.optimizer.SGD(learning_rate=1.0, parameters=[w])
assert fleet.fleet.distributed_optimizer(sgd) is fleet.fleet
_, pairs = fleet.fleet.minimize((w * 0).sum())
assert [p is w for p, _ in pairs] == [True] and w.numpy().tolist() == [0.25, 0.5, 0.75], w.numpy()

# collective_perf: paddle 3.3.1 documents it and runs nothing; pycoll times each size on the
# group paddle's implementation chose, logs paddle's lines and warns past the threshold
seen = Lines()
logging.getLogger("pycoll").addHandler(seen)
fleet.set_log_level("INFO")
timed = fleet.collective_perf("allreduce", round=3, size_and_time={1 << 12: 60.0, 1 << 10: 1e-12})
assert list(timed) == [4096, 1024] and all(t > 0 for t in timed.values()), timed
assert seen.lines[0].startswith("[AllReduceTest] nbytes 4096B test result: ") and \
    seen.lines[-1].startswith("[Perf Warning] AllReduce Test Timeout! "), seen.lines
assert len(seen.lines) == 3, "4 KiB took less than 60 s: no warning for it"
assert fleet.fleet.collective_perf("allgather", round=2, size_and_time={64: 1}) == {}
assert seen.lines[-1] == "allgather_perf is invalid, group invalid!", "the model-parallel group has one rank"
expect(ValueError, ["comm_type='alltoall'"], fleet.collective_perf, "alltoall")
expect(ValueError, ["round", "-1"], fleet.collective_perf, "reduce", round=-1)
expect(ValueError, ["size_and_time", "size 3"], fleet.collective_perf, "broadcast", size_and_time={3: 1.0})

# the model-parallel group's first rank's inputs, nested, in place (another shape taken too)
hcg = start(dp_degree=1, mp_degree=2)
assert list(fleet.collective_perf("reduce_scatter", round=2, size_and_time={4 * 5: None})) == [20], \
    "5 elements on 2 ranks: 4 are reduce-scattered"
assert list(fleet.collective_perf("allgather", round=2, size_and_time={4 * 3: None})) == [12]
assert fleet.collective_perf("reduce") == {} and seen.lines[-1] == "reduce_perf is invalid, group invalid!"
fleet.set_log_level("WARNING")
own = pycoll.to_tensor(np.full([2], rank, "float32"))
other_shape = pycoll.to_tensor(np.full([1 + rank], 5 + rank, "float32"))
inputs, kwargs = hpu.broadcast_input_data(hcg, own, [other_shape, rank], mask={"m": pycoll.ones([rank + 1])})
assert inputs[0] is own and own.numpy().tolist() == [0, 0]
assert inputs[1][0] is other_shape and other_shape.numpy().tolist() == [5] and inputs[1][1] == 0
assert kwargs["mask"]["m"].numpy().tolist() == [1.0]
print(f"OK rank={rank}", flush=True)
