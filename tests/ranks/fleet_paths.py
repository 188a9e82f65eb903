"""paddle's expert-parallel exchanges and fleet.init's degree check on 2 ranks.

global_scatter / global_gather: the example of paddle 3.3.1's moe_utils docstring (paddle's CPU
build has no kernel for them: "Do not support global scatter op for cpu kernel now"), its outputs
and gradients written here as the docstring states them, which follow by hand from the counts.
fleet.init with an explicit dp_degree=1 on 2 ranks (mp, pp, sharding 1) fails the product check,
as paddle's topology assertion does ("nranks: 2, mp_num: 1, ... dp_num: 1"). A PipelineLayer at
pp_degree 1 trains through train_batch (paddle's CPU build cannot make a PipelineLayer, so the steps
are checked against NumPy) as paddle's NoPipelineParallel, read from its source: a MetaParallelBase
beside PipelineParallel, not one of its kind, with paddle's attributes (PaddleNLP's
`isinstance(model, PipelineParallel) and model._sharding_comm_overlap` check), taking a plain
optimizer, fleet's group when hcg is left None, and pp_configs.delay_scale_loss (the same step).
sequence_parallel_utils' four collectives on a 2-rank mp group, by hand; ScatterOp's and
GatherOp's values and gradients are those paddle's CPU build gives for the same inputs (its gloo
group fails AllGatherOp with an OSError and has no reduce_scatter)."""
import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import fleet
from fleet_afresh import init_afresh
from pycoll.distributed.fleet.base import topology as tp
from pycoll.distributed.fleet.meta_parallel import LayerDesc, PipelineLayer, PipelineParallel
from pycoll.distributed.fleet import meta_parallel
from pycoll.distributed.fleet.utils import sequence_parallel_utils as spu
from pycoll.distributed.utils import moe_utils

dist.init_parallel_env()
rank = dist.get_rank()

rows = np.arange(1, 11, dtype="float32").reshape(5, 2)  # [[1, 2], [3, 4], ..., [9, 10]] on both ranks
x = pycoll.to_tensor(rows, stop_gradient=False)
counts = pycoll.to_tensor([2, 1, 1, 1] if rank == 0 else [1, 1, 2, 1], dtype="int64")  # 2 experts a rank
out = moe_utils.global_scatter(x, counts, counts)
expected = [[1, 2], [3, 4], [1, 2], [5, 6], [3, 4]] if rank == 0 else [[7, 8], [5, 6], [7, 8], [9, 10], [9, 10]]
assert out.numpy().tolist() == expected, out.numpy()
(out * out).sum().backward()  # each row of x went out once and its gradient comes back: 2 x
assert x.grad.numpy().tolist() == (2 * rows).tolist(), x.grad.numpy()
back = moe_utils.global_gather(out, counts, counts)
assert back.numpy().tolist() == rows.tolist(), back.numpy()

# uneven counts, 1 expert a rank: rank 0 sends 1 row to itself and 2 to rank 1, rank 1 sends 3 to rank 0, 0 to itself
mine = pycoll.to_tensor(np.arange(3, dtype="float32")[:, None] + 10 * rank, stop_gradient=False)
local = pycoll.to_tensor([1, 2] if rank == 0 else [3, 0], dtype="int64")
remote = pycoll.to_tensor([1, 3] if rank == 0 else [2, 0], dtype="int64")
got = moe_utils.global_scatter(mine, local, remote)
assert got.numpy()[:, 0].tolist() == ([0, 10, 11, 12] if rank == 0 else [1, 2]), got.numpy()
(got * pycoll.to_tensor(np.arange(got.shape[0], dtype="float32")[:, None] + 1)).sum().backward()
assert mine.grad.numpy()[:, 0].tolist() == ([1, 1, 2] if rank == 0 else [2, 3, 4]), mine.grad.numpy()
assert moe_utils.global_gather(got, local, remote).numpy().tolist() == mine.numpy().tolist()
try:
    moe_utils.global_scatter(mine, remote, local)  # rank 0's counts send 4 rows of its 3
    raise AssertionError("global_scatter took counts that do not add up to x's rows")
except ValueError as e:
    assert "x has 3 rows" in str(e) or "sends" in str(e), e

strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1}
try:
    fleet.init(is_collective=True, strategy=strategy)
    raise AssertionError("fleet.init took dp_degree=1 on 2 ranks")
except ValueError as e:
    assert "dp_degree=1 x pp_degree=1 x sharding_degree=1 x sep_degree=1 x mp_degree=1 = 1, but the job has 2 ranks" in str(e), e
strategy.hybrid_configs = {"dp_degree": -1}
fleet.init(is_collective=True, strategy=strategy)
hcg = fleet.get_hybrid_communicate_group()
assert hcg.get_data_parallel_world_size() == 2 and tp._HYBRID_PARALLEL_GROUP is hcg

# a PipelineLayer at pp_degree 1 trains through train_batch (paddle's NoPipelineParallel), the
# data-parallel gradients averaged: SGD steps on both ranks' rows, by NumPy
strategy.pipeline_configs = {"micro_batch_size": 2, "accumulate_steps": 2}
layer = PipelineLayer([LayerDesc(pycoll.nn.Linear, 3, 2)], num_stages=1, loss_fn=pycoll.nn.MSELoss())
w0, b0 = np.random.RandomState(0).uniform(-1, 1, [3, 2]).astype("float32"), np.array([0.5, -0.5], "float32")
layer.parameters()[0].set_value(w0 if rank == 0 else w0 * 0)  # broadcast from dp rank 0 at wrapping
layer.parameters()[1].set_value(b0)
model = fleet.distributed_model(layer)
# paddle's classes: NoPipelineParallel is a MetaParallelBase beside PipelineParallel, not one of its kind
assert isinstance(model, meta_parallel.NoPipelineParallel) and not isinstance(model, PipelineParallel), type(model)
assert not issubclass(meta_parallel.NoPipelineParallel, PipelineParallel)
assert isinstance(model, meta_parallel.MetaParallelBase) and model._layers is layer and model._hcg is hcg
assert all(issubclass(kind, meta_parallel.MetaParallelBase) for kind in (
    meta_parallel.TensorParallel, meta_parallel.ShardingParallel, meta_parallel.PipelineParallelWithInterleave))
assert issubclass(meta_parallel.PipelineParallelWithInterleave, PipelineParallel)
# the attributes paddle's NoPipelineParallel sets and trainers read, with paddle's values here
assert (model.micro_batch_size, model.accumulate_steps, model.total_loss, model.loss_fn_idx) == (2, 2, None, 0)
assert (model._dp_comm_overlap, model._sharding_comm_overlap, model._delay_scale_loss) == (False, False, False)
assert model.use_data_parallel and not model.use_model_parallel and model.dp_group is hcg.get_data_parallel_group()
assert model.is_pipeline_last_stage()
# PaddleNLP's check after distributed_model: False for a NoPipelineParallel, so the hook is not asked for
assert not (isinstance(model, PipelineParallel) and model._sharding_comm_overlap > 0)
data = [np.arange(12, dtype="float32").reshape(4, 3) / 10 + r for r in range(2)]
labels = [np.full([4, 2], r, "float32") for r in range(2)]
batch = [pycoll.to_tensor(data[rank]), pycoll.to_tensor(labels[rank])]


def sgd_step(w, b, lr=0.1):
    """This rank's mean squared error at (w, b) and (w, b) after one SGD step on both ranks' mean gradient."""
    err = [d @ w + b - t for d, t in zip(data, labels)]
    grad_w = sum(d.T @ e * 2 / e.size for d, e in zip(data, err)) / 2
    grad_b = sum(e.sum(0) * 2 / e.size for e in err) / 2
    return float((err[rank] ** 2).mean()), w - lr * grad_w, b - lr * grad_b


def check_step(loss, w, b):
    want, w, b = sgd_step(w, b)
    assert abs(float(loss) - want) < 1e-5, (float(loss), want)
    np.testing.assert_allclose(layer.parameters()[0].numpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.parameters()[1].numpy(), b, rtol=1e-5, atol=1e-6)
    return w, b


opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(0.1, parameters=layer.parameters()))
w1, b1 = check_step(model.train_batch(batch, opt), w0, b0)
# a plain optimizer, as paddle's NoPipelineParallel.train_batch takes (PipelineParallel's refuses it)
w2, b2 = check_step(model.train_batch(batch, pycoll.optimizer.SGD(0.1, parameters=layer.parameters())), w1, b1)
# paddle's eval_batch: the loss, compute_loss or not
assert abs(float(model.eval_batch(batch)) - sgd_step(w2, b2)[0]) < 1e-5
# hcg left None (paddle's default): fleet's hybrid communicate group, so the gradients are still averaged
alone = meta_parallel.NoPipelineParallel(layer, strategy)
assert alone._hcg is hcg and alone.use_data_parallel
w3, b3 = check_step(alone.train_batch(batch, opt), w2, b2)
# pp_configs.delay_scale_loss: the gradients divided by accumulate_steps instead of the losses; the same step
strategy.hybrid_configs["pp_configs"].delay_scale_loss = True
delayed = meta_parallel.NoPipelineParallel(layer, strategy, hcg)
assert delayed._delay_scale_loss
check_step(delayed.train_batch(batch, opt), w3, b3)
strategy.hybrid_configs["pp_configs"].delay_scale_loss = False

# sequence parallelism's collectives over the model-parallel group, along dim 0, by hand
strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"mp_degree": 2}
init_afresh(strategy)  # a second fleet.init would keep the first groups
whole = np.arange(8, dtype="float32").reshape(4, 1, 2)  # [s, b, h], alike on both ranks
base = np.arange(8, dtype="float32").reshape(4, 1, 2)
weight = base * (rank + 1)  # differs by rank
each_own_half = np.concatenate([base[:2], 2 * base[2:]])  # rank 0's weight on its half, rank 1's on its
half = slice(2 * rank, 2 * rank + 2)
x = pycoll.to_tensor(whole, stop_gradient=False)
out = spu.ScatterOp.apply(x)
assert out.numpy().tolist() == whole[half].tolist()
(out * pycoll.to_tensor(weight[half])).sum().backward()  # gradient: both ranks' parts, gathered
assert x.grad.numpy().tolist() == each_own_half.tolist(), x.grad.numpy()
part = pycoll.to_tensor(whole[half] + 10 * rank, stop_gradient=False)
gathered = spu.AllGatherOp.apply(part)
assert gathered.numpy().tolist() == np.concatenate([whole[:2], whole[2:] + 10]).tolist()
(gathered * pycoll.to_tensor(weight)).sum().backward()  # gradient: the ranks' weights summed, this part
assert part.grad.numpy().tolist() == (3 * base)[half].tolist(), part.grad.numpy()
mine = pycoll.to_tensor(whole * (rank + 1), stop_gradient=False)
reduced = spu.ReduceScatterOp.apply(mine)
assert reduced.numpy().tolist() == (3 * whole)[half].tolist()
(reduced * pycoll.to_tensor(weight[half])).sum().backward()
assert mine.grad.numpy().tolist() == each_own_half.tolist(), mine.grad.numpy()
back = spu.GatherOp.apply(part)
(back * pycoll.to_tensor(weight)).sum().backward()  # this rank's part of its own gradient, added to part.grad
assert part.grad.numpy().tolist() == (3 * base + weight)[half].tolist(), part.grad.numpy()
print(f"OK rank={rank}", flush=True)
