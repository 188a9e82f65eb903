"""2-way model parallel x 2-way data parallel on 4 ranks against one process (float64).

Model-parallel groups [0, 1] and [2, 3] each hold one copy of an MLP split over their two ranks
(ColumnParallelLinear -> tanh -> RowParallelLinear(input_is_parallel=True)); data-parallel groups
[0, 2] and [1, 3] join the ranks that hold the same blocks, under DataParallel(group=dp). Each
copy trains on half of every global batch; every rank also trains the unsplit MLP on the whole
batch and checks, at every step, the loss, the gathered gradients and the gathered parameters.
Before that: DataParallel's wrap-time broadcast and model check over a sub-group.

With ``fleet`` the same job is set up through paddle's fleet API: ``fleet.init`` with
dp_degree=2 x mp_degree=2 builds the groups, the layers take fleet's model-parallel group by
default, ``fleet.distributed_model`` wraps the model and ``fleet.distributed_optimizer`` makes
the optimizer's global-norm gradient clip span the model-parallel group.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.nn import Parameter
from pycoll.parallel.mp_layers import ColumnParallelLinear, RowParallelLinear

TOL = dict(rtol=1e-10, atol=1e-12)
MP = 2


class SplitMLP(nn.Layer):
    def __init__(self, group):
        super().__init__()
        self.fc1 = ColumnParallelLinear(6, 8, has_bias=True, gather_output=False, mp_group=group)
        self.fc2 = RowParallelLinear(8, 3, input_is_parallel=True, group=group)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.fc1(x)))


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.fc1(x)))


def to_float64(model):
    """Swap every parameter for a float64 copy that keeps its name and attributes."""
    for layer in model.sublayers(include_self=True):
        for key, p in list(layer._parameters.items()):
            q = Parameter(p.numpy().astype(np.float64), name=p.name)
            q.__dict__.update(p.__dict__)
            setattr(layer, key, q)


SPLIT_AXIS = {"fc1.weight": 1, "fc1.bias": 0, "fc2.weight": 0, "fc2.bias": None}


def whole(name, tensor, group):
    """The unsplit value of a (block of a) parameter or gradient."""
    if SPLIT_AXIS[name] is None:
        return tensor.numpy()
    parts = []
    dist.all_gather(parts, tensor, group=group)
    return np.concatenate([t.numpy() for t in parts], axis=SPLIT_AXIS[name])


def compare(model, ref, group, what, step):
    """``what`` is "value" (the parameters) or "grad"."""
    pick = (lambda t: t) if what == "value" else (lambda t: t.grad)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        got = whole(name, pick(p), group)
        np.testing.assert_allclose(got, pick(q).numpy(), err_msg=f"step {step}: {what} of {name}", **TOL)


def check_subgroup_model_check(rank, dp):
    """Ranks 1 and 3 wrap different models over their data group: both get the error, naming the
    global ranks; ranks 0 and 2 wrap the same model and go on."""
    bad = nn.Linear(4, 5 if rank == 3 else 4)
    try:
        pycoll.DataParallel(bad, group=dp)
    except ValueError as e:
        assert rank in (1, 3), f"rank {rank} wraps a matching model but got: {e}"
        assert "rank 1 has [[4, 4], 'float32', 'averaged'], rank 3 has [[4, 5], 'float32', 'averaged']" in str(e), e
    else:
        assert rank in (0, 2), f"rank {rank}: a mismatched model was accepted"


def main():
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 4, "this worker runs on 4 ranks"
    use_fleet = sys.argv[1:] == ["fleet"]
    if use_fleet:
        from pycoll.distributed import fleet

        strategy = fleet.DistributedStrategy()
        strategy.hybrid_configs = {"dp_degree": 2, "mp_degree": MP}
        strategy.fuse_grad_size_in_MB = 0.0001
        fleet.init(is_collective=True, strategy=strategy)
        hcg = fleet.get_hybrid_communicate_group()
        mp, dp = hcg.get_model_parallel_group(), hcg.get_data_parallel_group()
        assert (hcg.get_model_parallel_rank(), hcg.get_data_parallel_rank()) == (rank % MP, rank // MP)
        assert mp.ranks == [rank - rank % MP, rank - rank % MP + 1] and dp.ranks == [rank % MP, rank % MP + 2]
        assert hcg.get_parallel_mode() == dist.ParallelMode.TENSOR_PARALLEL and fleet.worker_num() == 4
        # dist.split over fleet's model-parallel group: num_partitions is its size, not the world's
        assert dist.split(pycoll.ones([2, 6]), [6, 8], "linear", axis=1, num_partitions=MP).shape == [2, 8]
        try:
            dist.split(pycoll.ones([2, 6]), [6, 8], "linear", axis=1, num_partitions=4, name="too_wide")
        except ValueError as exc:
            assert "fleet's model-parallel group (2 ranks, mp_degree)" in str(exc), exc
        else:
            raise AssertionError("num_partitions beyond the model-parallel group must be refused")
    else:
        mp_groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        dp_groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]
        mp, dp = mp_groups[rank // MP], dp_groups[rank % MP]
    dp_rank, dp_size = dist.get_rank(dp), dist.get_world_size(dp)

    check_subgroup_model_check(rank, dp)

    pycoll.seed(3)
    model = SplitMLP(None if use_fleet else mp)
    pycoll.seed(3)
    ref = MLP()
    compare(model, ref, mp, "value", "init")  # seeded blocks gather to the plain weights
    to_float64(model)
    to_float64(ref)
    bias_rng = np.random.default_rng(1)  # non-zero biases, so "added once" is tested
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        if name.endswith("bias"):
            value = bias_rng.standard_normal(q.shape)
            q.set_value(value)
            p.set_value(value if SPLIT_AXIS[name] is None else np.split(value, MP)[dist.get_rank(mp)])
    if dp_rank == 1:  # DataParallel must overwrite these with the data group's first rank's values
        for p in model.parameters():
            p.set_value(p.numpy() + 1.0)
    if use_fleet:
        dp_model = fleet.distributed_model(model)
        assert isinstance(dp_model, fleet.meta_parallel.TensorParallel) and dp_model._layers is model
    else:
        dp_model = pycoll.DataParallel(model, group=dp, comm_buffer_size=0.0001, last_comm_buffer_size=0.0001)
    if not use_fleet:  # fleet's buckets follow fuse_grad_size_in_MB, its last one paddle's 1 MB
        assert len(dp_model._reducer.buckets) >= 2, dp_model._reducer.bucket_indices()
    compare(model, ref, mp, "value", "after wrapping")

    # through fleet, gradient clipping by global norm: the norm spans the model-parallel group
    clip = pycoll.nn.ClipGradByGlobalNorm(0.05) if use_fleet else None
    opt = pycoll.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=dp_model.parameters(), grad_clip=clip)
    if use_fleet:
        opt = fleet.distributed_optimizer(opt)
    ref_opt = pycoll.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=ref.parameters(), grad_clip=clip)
    data = np.random.default_rng(11)
    for step in range(5):
        x, y = data.standard_normal((8, 6)), data.standard_normal((8, 3))
        xs, ys = np.split(x, dp_size)[dp_rank], np.split(y, dp_size)[dp_rank]
        loss = ((dp_model(pycoll.to_tensor(xs)) - pycoll.to_tensor(ys)) ** 2).mean()
        loss.backward()
        ref_loss = ((ref(pycoll.to_tensor(x)) - pycoll.to_tensor(y)) ** 2).mean()
        ref_loss.backward()
        global_loss = loss.detach().clone()
        dist.all_reduce(global_loss, op=dist.ReduceOp.AVG, group=dp)
        np.testing.assert_allclose(float(global_loss), float(ref_loss), err_msg=f"step {step}: loss", **TOL)
        compare(model, ref, mp, "grad", step)
        opt.step()
        opt.clear_grad()
        ref_opt.step()
        ref_opt.clear_grad()
        compare(model, ref, mp, "value", step)
    print(f"mp hybrid OK rank={rank} fleet={use_fleet} final_loss={float(global_loss):.8f}", flush=True)


if __name__ == "__main__":
    main()
