"""An Embedding(sparse=True) weight's gradient kept as rows (pycoll.tensor.RowsGrad, paddle's
SelectedRows): what reads it sees the dense gradient, and the optimizers that can update the rows
alone give the same parameters, bit for bit, as from the dense gradient. DataParallel averages
the rows as rows (pycoll.parallel.row_grads)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import pycoll as P
from conftest import assert_ok, launch_source
from pycoll import _graph
from pycoll.parallel import row_grads
from pycoll.tensor import RowsGrad


@pytest.fixture(autouse=True)
def _no_op_watchers(monkeypatch):
    """Auto-parallel, once used in a process, watches every op; the rows are then left dense (its
    placement rules see ordinary gradients). These tests want the rows."""
    monkeypatch.setattr(_graph, "_record_hooks", {})

OPTIMIZERS = {
    "sgd": lambda ps: P.optimizer.SGD(0.1, parameters=ps),
    "adam_lazy": lambda ps: P.optimizer.Adam(0.1, parameters=ps, lazy_mode=True),
    "adamw_lazy": lambda ps: P.optimizer.AdamW(0.1, parameters=ps, lazy_mode=True, weight_decay=0.1),
    "adam": lambda ps: P.optimizer.Adam(0.1, parameters=ps),
    "momentum": lambda ps: P.optimizer.Momentum(0.1, parameters=ps),
    "sgd_decay": lambda ps: P.optimizer.SGD(0.1, parameters=ps, weight_decay=0.01),
    "sgd_clip": lambda ps: P.optimizer.SGD(0.1, parameters=ps, grad_clip=P.nn.ClipGradByGlobalNorm(1.0)),
    "adam_lazy_clip": lambda ps: P.optimizer.Adam(0.1, parameters=ps, lazy_mode=True,
                                                  grad_clip=P.nn.ClipGradByNorm(0.5)),
    "sgd_clip_value": lambda ps: P.optimizer.SGD(0.1, parameters=ps, grad_clip=P.nn.ClipGradByValue(0.3)),
    "adagrad": lambda ps: P.optimizer.Adagrad(0.1, parameters=ps),
}


def _train(make_optimizer, read_grad, tied=False, set_to_zero=True, scale_grad_by_freq=False, steps=4):
    emb = P.nn.Embedding(50, 4, sparse=True, padding_idx=3, scale_grad_by_freq=scale_grad_by_freq)
    emb.weight.set_value(np.random.RandomState(0).randn(50, 4).astype("float32"))
    opt = make_optimizer(emb.parameters())
    rs = np.random.RandomState(1)
    for _ in range(steps):
        for _ in range(2):  # two backwards a step: the rows add up
            out = emb(P.to_tensor(rs.randint(0, 50, (6, 5))))
            loss = (out * out).sum()
            if tied:  # the weight used densely too: rows added into the dense gradient
                loss = loss + P.matmul(out, emb.weight, transpose_y=True).sum() * 0.01
            loss.backward()
        if read_grad:
            emb.weight.grad.numpy()  # makes it dense: the optimizer then takes the dense path
        opt.step()
        opt.clear_grad(set_to_zero=set_to_zero)
    return emb.weight.numpy().copy()


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("set_to_zero", [True, False])
def test_every_optimizer_steps_from_the_rows_as_from_the_dense_gradient(name, tied, set_to_zero):
    rows = _train(OPTIMIZERS[name], False, tied, set_to_zero)
    dense = _train(OPTIMIZERS[name], True, tied, set_to_zero)
    # a norm clip sums the squares of the rows alone, in another order than over the whole array
    np.testing.assert_allclose(rows, dense, rtol=1e-6 if "clip" in name else 0, atol=0)


def test_scale_grad_by_freq_divides_each_row_as_the_dense_gradient_does():
    np.testing.assert_array_equal(_train(OPTIMIZERS["sgd"], False, scale_grad_by_freq=True),
                                  _train(OPTIMIZERS["sgd"], True, scale_grad_by_freq=True))


def test_the_gradient_reads_as_the_dense_one_and_a_lazy_step_leaves_it_rows():
    ids = P.to_tensor([[1, 2], [2, 5]])
    sparse, dense = P.nn.Embedding(10, 3, sparse=True), P.nn.Embedding(10, 3)
    dense.weight.set_value(sparse.weight.numpy().copy())
    for emb in (sparse, dense):
        for _ in range(2):
            (emb(ids) * P.to_tensor([1.0, 2.0, 3.0])).sum().backward()
    grad = sparse.weight.grad
    assert isinstance(grad, RowsGrad) and grad.pending is not None
    assert grad.shape == [10, 3] and grad.dtype == P.float32  # read from the rows
    opt = P.optimizer.SGD(0.5, parameters=sparse.parameters())
    before = sparse.weight.numpy().copy()
    opt.step()
    assert RowsGrad._dense_slot.__get__(grad) is None  # the step never made the dense array
    changed = np.flatnonzero((sparse.weight.numpy() != before).any(axis=1)).tolist()
    assert changed == [1, 2, 5]
    np.testing.assert_array_equal(grad.numpy(), dense.weight.grad.numpy())  # now dense, and equal
    assert grad.pending is None
    found, = P.grad((sparse(ids) * 3).sum(), sparse.weight)
    np.testing.assert_array_equal(found.numpy(), P.grad((dense(ids) * 3).sum(), dense.weight)[0].numpy())
    sparse.clear_gradients()  # rows again: a read to log the gradient leaves the next steps rows
    assert grad.is_selected_rows() and sparse.weight.grad is grad
    assert not grad.numpy().any()


def test_rows_and_value_are_paddles_selected_rows_accessors_while_the_gradient_is_rows():
    emb = P.nn.Embedding(10, 3, sparse=True)
    emb(P.to_tensor([[1, 2], [2, 5]])).sum().backward()
    grad = emb.weight.grad
    assert grad.rows() == [1, 2, 2, 5]  # as paddle's: repeats kept, in lookup order
    assert grad.value().shape == [4, 3] and grad.value().numpy().tolist() == [[1.0] * 3] * 4
    assert grad.is_selected_rows()  # neither made it dense
    grad.numpy()
    with pytest.raises(RuntimeError, match=r"rows\(\): this gradient is dense now"):
        grad.rows()


def test_a_hook_on_the_weight_gets_the_dense_gradient():
    emb = P.nn.Embedding(6, 2, sparse=True)
    seen = []
    emb.weight.register_hook(lambda g: seen.append(g.shape) or g * 2)
    emb(P.to_tensor([0, 0, 4])).sum().backward()
    assert seen == [[6, 2]] and emb.weight.grad.numpy()[:, 0].tolist() == [4.0, 0, 0, 0, 2.0, 0]


def test_the_rows_are_copies_of_the_ids_and_the_gradient_a_program_reuses():
    # a probe: the pending rows kept views of the ids and of the upstream gradient, so refilling
    # one batch buffer (or the seed) before the step moved the wrong rows by the wrong amounts
    emb = P.nn.Embedding(6, 1, sparse=True)
    emb.weight.set_value(np.zeros([6, 1], "float32"))
    opt = P.optimizer.SGD(1.0, parameters=emb.parameters())
    buffer, seed = np.array([0, 1]), np.ones([2, 1], "float32")
    ids, grad = P.from_numpy(buffer), P.from_numpy(seed)  # share the arrays' memory
    for batch, scale in (([0, 1], 1.0), ([4, 5], 10.0)):
        buffer[:] = batch
        seed[:] = scale
        emb(ids).backward(grad)
    buffer[:] = [2, 3]
    seed[:] = 100.0
    assert emb.weight.grad.is_selected_rows()
    opt.step()
    assert emb.weight.numpy()[:, 0].tolist() == [-1.0, -1.0, 0.0, 0.0, -10.0, -10.0]
    assert emb.weight.grad.numpy()[:, 0].tolist() == [1.0, 1.0, 0.0, 0.0, 10.0, 10.0]
    assert not emb.weight.grad.is_selected_rows() and emb.weight.grad.is_dense()  # read: dense now


@pytest.mark.parametrize("name", ["sgd_clip", "adam_lazy_clip", "sgd_clip_value", "adagrad"])
def test_clips_and_adagrad_step_the_rows_without_making_the_dense_gradient(name):
    # a probe: a clip, or Adagrad, made every step cost time in proportion to the vocabulary
    emb = P.nn.Embedding(1000, 4, sparse=True)
    opt = OPTIMIZERS[name](emb.parameters())
    emb(P.to_tensor([[1, 2], [2, 999]])).sum().backward()
    grad = emb.weight.grad
    opt.step()
    assert isinstance(grad, RowsGrad) and RowsGrad._dense_slot.__get__(grad) is None


# -- DataParallel: the rows averaged as rows (pycoll.parallel.row_grads), as paddle's reducer does --
DP_PROGRAM = textwrap.dedent("""
    import numpy as np
    import pycoll as P
    import pycoll.distributed as dist

    dist.init_parallel_env()
    rank = dist.get_rank()
    VOCAB = 1000

    class Net(P.nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = P.nn.Embedding(VOCAB, 4, sparse=True)
            self.out = P.nn.Linear(4, 1)

        def forward(self, ids, use_emb=True):
            h = self.emb(ids).mean(axis=1) if use_emb else P.ones([ids.shape[0], 4])
            return self.out(h)

    def batch(r, step, n):
        return P.to_tensor(np.random.RandomState(100 * step + r).randint(0, VOCAB, size=(n, 3)))

    def fresh():
        P.seed(7)
        return Net()

    def reference(step, n, used=(True, True)):
        # the dense average of both ranks' gradients, computed here alone
        net = fresh()
        for r in (0, 1):
            net(batch(r, step, n), use_emb=used[r]).sum().backward()
        return {k: (p.grad.numpy() / 2 if p.grad is not None else None) for k, p in net.named_parameters()}

    def check(model, want, rows):
        assert model._layers.emb.weight.grad.is_selected_rows() == rows  # before a read makes it dense
        for name, p in model._layers.named_parameters():
            if want[name] is None:
                assert p.grad is None, name
                continue
            assert np.allclose(p.grad.numpy(), want[name], atol=1e-6), name

    # rows: 2 ranks x 8 lookups of 3 ids, far fewer than the table's rows
    model = P.DataParallel(fresh(), find_unused_parameters=True)
    model(batch(rank, 0, 8)).sum().backward()
    assert model._layers.emb.weight.grad.pending.ids.shape == (48,)  # both ranks' rows
    check(model, reference(0, 8), rows=True)

    # rank 1 does not use the embedding: it gets rank 0's rows, halved
    model = P.DataParallel(fresh(), find_unused_parameters=True)
    model(batch(rank, 1, 8), use_emb=rank == 0).sum().backward()
    check(model, reference(1, 8, used=(True, False)), rows=True)

    # a hook on rank 0 makes its gradient dense: both ranks all-reduce the dense gradient
    net = fresh()
    if rank == 0:
        net.emb.weight.register_hook(lambda g: g)
    model = P.DataParallel(net)
    model(batch(rank, 2, 8)).sum().backward()
    check(model, reference(2, 8), rows=False)

    # more rows than the table holds: the dense all-reduce is the cheaper message
    model = P.DataParallel(fresh())
    model(batch(rank, 3, 200)).sum().backward()
    check(model, reference(3, 200), rows=False)

    # training: the replicas stay equal, and equal to training on both batches at once;
    # no_sync accumulates rows, which the next synced backward averages with the new ones
    model = P.DataParallel(fresh())
    opt = P.optimizer.Adam(0.1, parameters=model.parameters(), lazy_mode=True)
    alone = fresh()
    opt_alone = P.optimizer.Adam(0.1, parameters=alone.parameters(), lazy_mode=True)
    for step in range(4):
        if step == 2:
            with model.no_sync():
                model(batch(rank, 10 + step, 8)).sum().backward()
        model(batch(rank, step, 8)).sum().backward()
        opt.step()
        opt.clear_grad()
        for r in (0, 1):
            if step == 2:
                (alone(batch(r, 10 + step, 8)).sum() / 2).backward()
            (alone(batch(r, step, 8)).sum() / 2).backward()
        opt_alone.step()
        opt_alone.clear_grad()
    weights = model._layers.emb.weight.numpy()
    gathered = []
    dist.all_gather(gathered, P.to_tensor(weights))
    assert np.array_equal(gathered[0].numpy(), gathered[1].numpy())
    assert np.allclose(weights, alone.emb.weight.numpy(), atol=1e-5)
    print("ROWS OK", rank)
""")


def test_data_parallel_averages_sparse_embedding_gradients_as_rows(tmp_path):
    result = launch_source(tmp_path, DP_PROGRAM)
    assert_ok(result)
    assert result.stdout.count("ROWS OK") == 2


def test_a_rank_without_a_gradient_sends_no_rows_and_a_dense_one_says_so():
    weight = P.create_parameter([5, 2], "float32")
    assert row_grads._held(weight) == row_grads.ABSENT
    weight.grad = np.ones((5, 2), np.float32)
    assert row_grads._held(weight) == row_grads.DENSE


@pytest.mark.parametrize("shard", [True, False])
def test_the_reducer_refuses_row_gradients_where_it_shards_or_has_an_outer_group(shard):
    from pycoll.parallel.reducer import Reducer

    weight = P.create_parameter([5, 2], "float32")
    with pytest.raises(ValueError, match="row gradients are averaged over one group, unsharded"):
        Reducer([weight], ["w"], None, 1 << 20, 1 << 20, False, shard=shard,
                outer_group=None if shard else object(), row_params=[weight])
