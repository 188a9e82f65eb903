"""Sequence parallelism on 2 ranks (fleet.init with mp_degree=2) against the same block without
any parallelism, run here too in one process on the whole sequence.

The Megatron-style block: ScatterOp (the sequence split), a LayerNorm marked sequence-parallel,
ColumnSequenceParallelLinear -> tanh -> RowSequenceParallelLinear, a residual, GatherOp. Each
case trains a few optimizer steps, ``accumulation_steps`` backwards a step, with
register_sequence_parallel_allreduce_hooks; the loss of every backward and every parameter after
each step must equal the plain block's (each rank's blocks of the split weights against the
plain weights' blocks). Cases: SGD with one backward a step (a hook per parameter), AdamW with
two (one fused hook), and two with MixPrecisionLayer / MixPrecisionOptimizer registered after the
hooks (the hooks then sum main_grad, whichever hook runs first). Without the hooks the LayerNorm's
gradient is this rank's part only (checked to differ)."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.fleet.utils import hybrid_parallel_util
from pycoll.distributed.fleet.utils import mix_precision_utils as mpu
from pycoll.distributed.fleet.utils import sequence_parallel_utils as spu

S, B, H, FFN = 4, 2, 4, 8
TOL = dict(rtol=1e-6, atol=1e-6)

strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 2}
fleet.init(is_collective=True, strategy=strategy)
rank = fleet.get_hybrid_communicate_group().get_model_parallel_rank()
cols, rows = slice(rank * FFN // 2, (rank + 1) * FFN // 2), slice(rank * FFN // 2, (rank + 1) * FFN // 2)
init = np.random.RandomState(0)
FULL = {"norm.weight": 1 + init.uniform(-0.5, 0.5, [H]), "norm.bias": init.uniform(-0.5, 0.5, [H]),
        "col.weight": init.uniform(-0.5, 0.5, [H, FFN]), "col.bias": init.uniform(-0.5, 0.5, [FFN]),
        "row.weight": init.uniform(-0.5, 0.5, [FFN, H]), "row.bias": init.uniform(-0.5, 0.5, [H])}
FULL = {k: v.astype("float32") for k, v in FULL.items()}
MINE = {"col.weight": (slice(None), cols), "col.bias": (cols,), "row.weight": (rows, slice(None))}  # this rank's block


class Block(nn.Layer):
    def __init__(self, parallel):
        super().__init__()
        self.parallel = parallel
        self.norm = nn.LayerNorm(H)
        if parallel:
            self.col = spu.ColumnSequenceParallelLinear(H, FFN, has_bias=True, gather_output=False)
            self.row = spu.RowSequenceParallelLinear(FFN, H, has_bias=True, input_is_parallel=True)
            spu.mark_as_sequence_parallel_parameter(self.norm.weight)
            spu.mark_as_sequence_parallel_parameter(self.norm.bias)
        else:
            self.col, self.row = nn.Linear(H, FFN), nn.Linear(FFN, H)
        for name, p in self.named_parameters():
            p.set_value(FULL[name][MINE[name]] if parallel and name in MINE else FULL[name])

    def forward(self, x):
        if self.parallel:
            x = spu.ScatterOp.apply(x)
        hidden = self.col(self.norm(x))
        if self.parallel:
            assert hidden.shape == [S, B, FFN // 2], hidden.shape  # the whole sequence, this rank's columns
        out = self.row(pycoll.tanh(hidden))
        if self.parallel:
            assert out.shape == [S // 2, B, H], out.shape  # this rank's half of the sequence
        out = out + x
        return spu.GatherOp.apply(out) if self.parallel else out


def train(parallel, make_opt, steps, accumulation_steps, fuse, mix):
    model = Block(parallel)
    if parallel:
        spu.register_sequence_parallel_allreduce_hooks(model, accumulation_steps, fuse)
    params = model.parameters()
    opt = make_opt(params)
    if mix:  # after the hooks, as paddle's trainers wrap
        model, opt = mpu.MixPrecisionLayer(model), mpu.MixPrecisionOptimizer(opt)
    data = np.random.RandomState(1)
    losses, states = [], []
    for _ in range(steps):
        for _ in range(accumulation_steps):
            x = pycoll.to_tensor(data.uniform(-1, 1, [S, B, H]).astype("float32"))
            target = pycoll.to_tensor(data.uniform(-1, 1, [S, B, H]).astype("float32"))
            loss = ((model(x) - target) ** 2).mean()
            loss.backward()
            losses.append(float(loss))
        opt.step()
        opt.clear_grad()
        states.append({name: p.numpy().copy() for name, p in zip(FULL, params)})
    return losses, states


def check(make_opt, steps=3, accumulation_steps=1, fuse=False, mix=False):
    case = dict(steps=steps, accumulation_steps=accumulation_steps, fuse=fuse, mix=mix)
    got_losses, got = train(True, make_opt, **case)
    want_losses, want = train(False, make_opt, **case)
    np.testing.assert_allclose(got_losses, want_losses, **TOL)
    for step, (mine, whole) in enumerate(zip(got, want)):
        for name in FULL:
            expected = whole[name][MINE[name]] if name in MINE else whole[name]
            np.testing.assert_allclose(mine[name], expected, **TOL, err_msg=f"{case} step {step}: {name}")


check(lambda params: pycoll.optimizer.SGD(learning_rate=0.2, parameters=params))
check(lambda params: pycoll.optimizer.AdamW(learning_rate=0.05, parameters=params), accumulation_steps=2, fuse=True)
check(lambda params: pycoll.optimizer.SGD(learning_rate=0.2, parameters=params), accumulation_steps=2, mix=True)
check(lambda params: pycoll.optimizer.AdamW(learning_rate=0.05, parameters=params), steps=2, fuse=True, mix=True)

# without the hooks each rank's LayerNorm gradient is its half of the sequence's
model, plain = Block(True), Block(False)
x = pycoll.to_tensor(np.random.RandomState(2).uniform(-1, 1, [S, B, H]).astype("float32"))
model(x).sum().backward()
plain(x).sum().backward()
assert not np.allclose(model.norm.weight.grad.numpy(), plain.norm.weight.grad.numpy(), rtol=1e-3)
partial = model.norm.weight.grad.numpy().copy()
dist.all_reduce(partial, group=fleet.get_hybrid_communicate_group().get_model_parallel_group())
np.testing.assert_allclose(partial, plain.norm.weight.grad.numpy(), **TOL)
assert spu.is_sequence_parallel_parameter(model.row.bias) and not spu.is_sequence_parallel_parameter(model.row.weight)
assert model.col.weight.split_axis == 1 and model.row.weight.split_axis == 0 and model.col.bias.split_axis == 0

# paddle's module functions (no autograd) and its refusals of what sequence parallelism cannot take
whole = np.arange(8, dtype="float32").reshape(4, 2)
assert spu.scatter(pycoll.to_tensor(whole)).numpy().tolist() == whole[rank * 2:rank * 2 + 2].tolist()
assert spu.all_gather(pycoll.to_tensor(whole[:1] + rank)).numpy().tolist() == [[0, 1], [1, 2]]
assert spu.reduce_scatter(pycoll.to_tensor(whole * (rank + 1))).numpy().tolist() == (3 * whole)[rank * 2:rank * 2 + 2].tolist()
for make, message in [(lambda: spu.ColumnSequenceParallelLinear(4, 8, gather_output=True), "gather_output=True; with "),
                      (lambda: spu.ColumnSequenceParallelLinear(4, 7, gather_output=False), "out_features=7 does not divide"),
                      (lambda: spu.RowSequenceParallelLinear(8, 4), "input_is_parallel=False; with sequence"),
                      (lambda: Block(True).row(pycoll.ones([4, 2, 8])), "its last axis must be in_features / 2 (4)")]:
    try:
        make()
        raise AssertionError(f"took what it must refuse: {message}")
    except ValueError as e:
        assert message in str(e), e
# data parallelism over main grads, as paddle's trainers do it (no_sync, then fused_allreduce_gradients,
# which reads main_grad): each rank's float32 main_grad becomes the ranks' average, .grad stays None
dense = mpu.MixPrecisionLayer(nn.Linear(3, 2))
feed = np.random.RandomState(10 + rank).uniform(-1, 1, [5, 3]).astype("float32")
dense(pycoll.to_tensor(feed)).sum().backward()
feeds = [np.random.RandomState(10 + r).uniform(-1, 1, [5, 3]).astype("float32") for r in range(2)]
hybrid_parallel_util.fused_allreduce_gradients(list(dense.parameters()), None)
np.testing.assert_allclose(dense._layers.weight.main_grad.numpy(),
                           np.mean([f.sum(0)[:, None].repeat(2, 1) for f in feeds], axis=0), **TOL)
np.testing.assert_allclose(dense._layers.bias.main_grad.numpy(), [5.0, 5.0], **TOL)
assert dense._layers.weight.grad is None

layer = spu.ColumnSequenceParallelLinear(4, 8, gather_output=False)
assert layer.bias is None and layer.weight.shape == [4, 4] and layer.world_size == 2  # paddle's has_bias=None: none

print(f"OK rank={dist.get_rank()}")
