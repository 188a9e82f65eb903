"""fleet's model-parallel defaults on 2 ranks, against plain layers in the same process.

``dp``: dp_degree=2, mp_degree=1. The parallel layers default to the hcg's model-parallel group,
of one rank: they are whole (paddle's: ColumnParallelLinear(6, 8) has weight [6, 8]), and a model
of all four (VocabParallelEmbedding, ColumnParallelLinear, RowParallelLinear,
ParallelCrossEntropy) trained on half a batch per rank follows the plain model trained on the
whole batch.

``mp``: mp_degree=2, nothing seeded. ``fleet.distributed_model`` returns a TensorParallel
(``_layers`` the model, state_dict keys ``_layers.``-prefixed, as paddle 3.3.1's); the replicated
parameters, made different on purpose, are rank 0's on both ranks after the wrap; each forward
replaces rank 1's inputs by rank 0's (in place), unless ``need_broadcast_data`` is False; one
training step follows the plain model built from the gathered blocks; the class-split softmax
cross-entropy returns its softmax on request."""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
import pycoll.nn.functional as F
from fleet_afresh import init_afresh
from pycoll.distributed import fleet
from pycoll.distributed.fleet.layers.mpu.mp_ops import _c_softmax_with_cross_entropy
from pycoll.distributed.fleet.meta_parallel import (ColumnParallelLinear, ParallelCrossEntropy, RowParallelLinear,
                                                    TensorParallel, VocabParallelEmbedding)

TOL = dict(rtol=1e-5, atol=1e-6)


def start(**hybrid):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = hybrid
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    return strategy, fleet.get_hybrid_communicate_group()


class Split(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = VocabParallelEmbedding(10, 4)
        self.col = ColumnParallelLinear(4, 8, has_bias=True, gather_output=False)
        self.row = RowParallelLinear(8, 6, has_bias=True, input_is_parallel=True)
        self.loss = ParallelCrossEntropy()

    def forward(self, ids, label):
        return self.loss(self.row(pycoll.tanh(self.col(self.emb(ids)))), label).mean()


class Plain(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.col = nn.Linear(4, 8)
        self.row = nn.Linear(8, 6)

    def forward(self, ids, label):
        return F.cross_entropy(self.row(pycoll.tanh(self.col(self.emb(ids)))), label)


def data_parallel(rank):
    _, hcg = start(dp_degree=2)
    assert hcg.get_model_parallel_world_size() == 1
    model, ref = Split(), Plain()
    for layer in (model.emb, model.col, model.row, model.loss):
        assert layer.group is hcg.get_model_parallel_group() and layer.nranks == 1, layer
    shapes = [list(p.shape) for p in model.parameters()]
    assert shapes == [list(p.shape) for p in ref.parameters()] == [[10, 4], [4, 8], [8], [8, 6], [6]], shapes
    for i, (p, q) in enumerate(zip(model.parameters(), ref.parameters())):
        value = np.random.RandomState(i).uniform(-0.5, 0.5, p.shape).astype("float32")
        p.set_value(value)
        q.set_value(value)
    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=0.5, parameters=model.parameters()))
    model = fleet.distributed_model(model)
    assert isinstance(model, pycoll.DataParallel), type(model)
    ref_opt = pycoll.optimizer.SGD(learning_rate=0.5, parameters=ref.parameters())
    data = np.random.RandomState(7)
    for step in range(3):
        ids, label = data.randint(0, 10, (8, 3)), data.randint(0, 6, (8, 3, 1))
        mine = slice(rank * 4, rank * 4 + 4)
        loss = model(pycoll.to_tensor(ids[mine]), pycoll.to_tensor(label[mine]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        ref_loss = ref(pycoll.to_tensor(ids), pycoll.to_tensor(label))
        ref_loss.backward()
        ref_opt.step()
        ref_opt.clear_grad()
        mean = loss.detach().clone()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        np.testing.assert_allclose(float(mean), float(ref_loss), err_msg=f"step {step}", **TOL)
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), err_msg=f"step {step}: {name}", **TOL)


class Tensor(nn.Layer):
    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(8, 8)  # replicated
        self.col = ColumnParallelLinear(8, 16, has_bias=True, gather_output=False)
        self.row = RowParallelLinear(16, 4, has_bias=True, input_is_parallel=True)

    def forward(self, x):
        return self.row(F.relu(self.col(self.pre(x))))


def gathered(t, group):
    parts = []
    dist.all_gather(parts, t.detach().clone(), group=group)
    return [p.numpy() for p in parts]


def tensor_parallel(rank):
    strategy, hcg = start(mp_degree=2)
    group = hcg.get_model_parallel_group()
    inner = Tensor()  # unseeded: fleet.init drew each rank's seed at random, as paddle's does
    replicated = [n for n, p in inner.named_parameters() if not getattr(p, "is_distributed", False)]
    assert replicated == ["pre.weight", "pre.bias", "row.bias"], replicated
    for name in replicated:  # make sure they differ before the wrap
        p = dict(inner.named_parameters())[name]
        p.set_value(p.numpy() + rank)
    before = {n: gathered(p, group)[0] for n, p in inner.named_parameters() if n in replicated}
    model = fleet.distributed_model(inner)
    assert isinstance(model, TensorParallel) and type(model).__name__ == "TensorParallel" and model._layers is inner
    keys = list(model.state_dict())
    assert keys == ["_layers." + k for k in inner.state_dict()] and keys[0] == "_layers.pre.weight", keys
    for name, p in inner.named_parameters():
        mine, other = gathered(p, group)
        if name in replicated:
            np.testing.assert_array_equal(mine, before[name], err_msg=name)
            np.testing.assert_array_equal(other, before[name], err_msg=name)
        elif name.endswith("weight"):  # split blocks stay each rank's own (the biases start at zero)
            assert mine.shape == other.shape and not np.array_equal(mine, other), name

    ref_pre, ref_col, ref_row = nn.Linear(8, 8), nn.Linear(8, 16), nn.Linear(16, 4)  # the blocks gathered
    ref_pre.weight.set_value(inner.pre.weight.numpy())
    ref_pre.bias.set_value(inner.pre.bias.numpy())
    ref_col.weight.set_value(np.concatenate(gathered(inner.col.weight, group), axis=1))
    ref_col.bias.set_value(np.concatenate(gathered(inner.col.bias, group)))
    ref_row.weight.set_value(np.concatenate(gathered(inner.row.weight, group), axis=0))
    ref_row.bias.set_value(inner.row.bias.numpy())

    def ref_forward(x):
        return ref_row(F.relu(ref_col(ref_pre(x))))

    def inputs(r):
        return np.random.RandomState(r).standard_normal((3, 8)).astype("float32")

    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters()))
    ref_params = ref_pre.parameters() + ref_col.parameters() + ref_row.parameters()
    ref_opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=ref_params)
    x = pycoll.to_tensor(inputs(rank))
    out = model(x)
    np.testing.assert_array_equal(x.numpy(), inputs(0))  # rank 1's own input replaced, in place
    ref_out = ref_forward(pycoll.to_tensor(inputs(0)))
    np.testing.assert_allclose(out.numpy(), ref_out.numpy(), **TOL)
    (out ** 2).mean().backward()
    opt.step()
    (ref_out ** 2).mean().backward()
    ref_opt.step()
    np.testing.assert_allclose(inner.pre.weight.numpy(), ref_pre.weight.numpy(), **TOL)
    np.testing.assert_allclose(inner.col.weight.numpy(), np.split(ref_col.weight.numpy(), 2, axis=1)[rank], **TOL)
    np.testing.assert_allclose(inner.row.weight.numpy(), np.split(ref_row.weight.numpy(), 2, axis=0)[rank], **TOL)

    strategy.hybrid_configs["mp_configs"].need_broadcast_data = False  # paddle's switch: inputs left as they are
    x = pycoll.to_tensor(inputs(rank))
    with pycoll.no_grad():
        model(x)
    np.testing.assert_array_equal(x.numpy(), inputs(rank))

    # paddle's _c_softmax_with_cross_entropy(..., return_softmax=True): (loss, this rank's columns
    # of the softmax over all classes, without gradient)
    logits, label = np.random.RandomState(3).standard_normal((4, 6)).astype("float32"), np.array([[0], [5], [2], [3]])
    mine = pycoll.to_tensor(np.split(logits, 2, axis=1)[rank], stop_gradient=False)
    loss, softmax = _c_softmax_with_cross_entropy(mine, pycoll.to_tensor(label), group, return_softmax=True)
    exps = np.exp(logits - logits.max(1, keepdims=True))
    whole = exps / exps.sum(1, keepdims=True)
    np.testing.assert_allclose(softmax.numpy(), np.split(whole, 2, axis=1)[rank], **TOL)
    np.testing.assert_allclose(loss.numpy()[:, 0], -np.log(whole[np.arange(4), label[:, 0]]), **TOL)
    assert softmax.stop_gradient
    loss.sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), np.split(whole - np.eye(6)[label[:, 0]], 2, axis=1)[rank], **TOL)


dist.init_parallel_env()
rank = dist.get_rank()
{"dp": data_parallel, "mp": tensor_parallel}[sys.argv[1]](rank)
print(f"OK rank={rank}", flush=True)
