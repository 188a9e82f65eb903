"""Ops on distributed tensors in the eager loop (placements through ops: propagation.py and
spmd_rules.py), on 2 ranks (mesh [0, 1]) and, for a 2-d mesh, 4 ranks: each result read whole
(numpy(), as paddle reads it) must equal NumPy on the whole arrays, with paddle's placements;
what the rules cannot place must be refused by name, never computed into a wrong whole.
"""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn.functional as F
from pycoll.autograd import PyLayer
from pycoll.distributed import Partial, ReduceType, Replicate, Shard
from pycoll.distributed.auto_parallel.spmd_rules import Refused

from expect import expect

rng = np.random.default_rng(7)
A = rng.standard_normal((4, 8)).astype(np.float32)
B = rng.standard_normal((8, 3)).astype(np.float32)
C = rng.standard_normal((3, 4)).astype(np.float32)
V = rng.standard_normal(8).astype(np.float32)
LABELS = np.array([[1], [0], [2], [1]], dtype=np.int64)
SUM, AVG, MAX = Partial(ReduceType.kRedSum), Partial(ReduceType.kRedAvg), Partial(ReduceType.kRedMax)


class RowSums(PyLayer):
    """A user's op on the local piece (every pycoll op has a rule now): the rules cannot place it."""
    @staticmethod
    def forward(ctx, t):
        return pycoll.to_tensor(np.asarray(t._array).sum(1))

    @staticmethod
    def backward(ctx, g):
        return g

def same(t, want, placements, what):
    assert t.placements == placements, f"{what}: placements {t.placements}, want {placements}"
    got = t.numpy()
    assert got.shape == np.shape(want) and t.shape == list(np.shape(want)), f"{what}: shape {got.shape}, {t.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)


def one_dim():
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    x = dist.shard_tensor(A, mesh, [Shard(0)])
    cols = dist.shard_tensor(A, mesh, [Shard(1)])
    layer = pycoll.nn.Linear(8, 3)
    layer.weight.set_value(B)
    cut = dist.shard_tensor(layer.weight, mesh, [Shard(1)])  # a DistParameter
    S0 = [Shard(0)]
    for what, t, want, where in [
        ("x * 2 + 1", x * 2 + 1, A * 2 + 1, S0),
        ("relu", F.relu(x), np.maximum(A, 0), S0),
        ("exp", pycoll.exp(x), np.exp(A), S0),
        ("-abs", -abs(x), -np.abs(A), S0),
        ("x + v (broadcast over the rows)", x + pycoll.to_tensor(V), A + V, S0),
        # both operands split by rows (an in-batch similarity): the second is made whole (paddle's)
        ("x @ x.T", pycoll.matmul(x, x.T), A @ A.T, S0),
        # a plain (whole) operand spanning the split dimension counts as Replicate: its block is used
        ("x + a whole A", x + pycoll.to_tensor(A), A + A, S0),
        ("a whole A * columns", pycoll.to_tensor(A) * cols, A * A, [Shard(1)]),
        ("a whole column vector + x", pycoll.to_tensor(A[:, :1]) + x, A[:, :1] + A, S0),
        ("x > 0", x > 0, A > 0, S0),
        ("maximum", pycoll.maximum(x, pycoll.to_tensor(0.0)), np.maximum(A, 0), S0),
        ("where", pycoll.where(x > 0, x, x * 2), np.where(A > 0, A, A * 2), S0),
        ("isnan", pycoll.isnan(x), np.isnan(A), S0),
        ("x % 2", x % 2, np.mod(A, 2), S0),
        ("sum", x.sum(), A.sum(), [SUM]),
        ("mean", x.mean(), A.mean(), [AVG]),
        ("max", x.max(), A.max(), [MAX]),
        ("sum over the split", x.sum(axis=0), A.sum(0), [SUM]),
        ("mean over the split, kept", x.mean(axis=0, keepdim=True), A.mean(0, keepdims=True), [AVG]),
        ("max over the split", x.max(axis=0), A.max(0), [MAX]),
        ("sum across the split", x.sum(axis=1), A.sum(1), S0),
        ("argmax across the split", x.argmax(axis=1), A.argmax(1), S0),
        ("transpose", x.transpose([1, 0]), A.T, [Shard(1)]),
        ("columns transposed", cols.transpose([1, 0]), A.T, S0),
        ("matmul", pycoll.matmul(x, pycoll.to_tensor(B)), A @ B, S0),
        ("matmul over the split contraction", pycoll.matmul(cols, dist.shard_tensor(B, mesh, [Shard(0)])), A @ B,
         [SUM]),
        ("matmul by split columns", pycoll.matmul(pycoll.to_tensor(C), cols), C @ A, [Shard(1)]),
        ("reshape [0, 2, 4]", x.reshape([0, 2, 4]), A.reshape(4, 2, 4), S0),
        ("flatten", x.flatten(), A.reshape(-1), S0),
        ("unsqueeze(0)", x.unsqueeze(0), A[None], [Shard(1)]),
        ("concat across", pycoll.concat([x, x], axis=1), np.concatenate([A, A], 1), S0),
        ("stack", pycoll.stack([x, x]), np.stack([A, A]), [Shard(1)]),
        ("columns sliced", x[:, 2:5], A[:, 2:5], S0),
        ("a column", x[:, 0], A[:, 0], S0),
        ("softmax across", F.softmax(x, axis=-1), np.exp(A) / np.exp(A).sum(1, keepdims=True), S0),
        ("cross_entropy", F.cross_entropy(x, dist.shard_tensor(LABELS, mesh, S0)),
         np.mean(np.log(np.exp(A).sum(1)) - A[np.arange(4), LABELS[:, 0]]), [AVG]),
        ("uneven rows * 2", dist.shard_tensor(np.arange(5.0), mesh, S0) * 2, np.arange(5.0) * 2, S0),
        # an op on a Partial value computes from the whole (paddle reshards it to Replicate first)
        ("mean * 2 + 1", x.mean() * 2 + 1, A.mean() * 2 + 1, [Replicate()]),
        ("sum / 4", x.sum() / 4, A.sum() / 4, [Replicate()]),
        ("mean - mean", x.mean() - (x * 2).mean(), -A.mean(), [Replicate()]),
        ("a sum plus one", x.sum() + 1, A.sum() + 1, [Replicate()]),
        ("a square of a mean", x.mean() ** 2, A.mean() ** 2, [Replicate()]),
        ("a mean plus a sum", x.mean() + x.sum(), A.mean() + A.sum(), [Replicate()]),
        ("rows minus their mean", x - x.mean(axis=0, keepdim=True), A - A.mean(0, keepdims=True), S0),
        # attention's q @ k^T: both split alike along the batch
        ("batched matmul", pycoll.matmul(x.reshape([0, 2, 4]), x.reshape([0, 2, 4]), transpose_y=True),
         A.reshape(4, 2, 4) @ A.reshape(4, 2, 4).transpose(0, 2, 1), S0),
        # a parameter cut for model parallelism, used outside a Linear: its placements hold
        ("a cut weight, summed", cut.sum(), B.sum(), [SUM]),
        ("by a cut weight", pycoll.matmul(pycoll.to_tensor(A), cut), A @ B, [Shard(1)]),
        ("replicated * 2", dist.shard_tensor(A, mesh, [Replicate()]) * 2, A * 2, [Replicate()]),
        # the split dimension indexed or joined: made whole first, as paddle reshards it
        ("rows sliced", x[1:3], A[1:3], [Replicate()]),
        ("concat along the split", pycoll.concat([x, x], axis=0), np.concatenate([A, A]), [Replicate()]),
    ]:
        same(t, want, where, what)
    # [2, 8]: the local rows' shape, so NumPy would multiply every rank's rows by the same two;
    # against the whole [4, 8] it does not broadcast (said in the shapes the user made)
    expect(ValueError, ["multiply: x of shape [4, 8] and y of shape [2, 8] do not broadcast"],
           lambda: x * pycoll.to_tensor(A[:2]))
    expect(Refused, ["RowSums: no rule for split inputs", "reshard"], lambda: RowSums.apply(x))
    # the split axis made whole first (paddle: Replicate); the mean of uneven rows is no mean of
    # the ranks' means: they are made whole (paddle 3.3.1 returns the wrong mean of means)
    same(F.softmax(x, axis=0), np.exp(A) / np.exp(A).sum(0), [Replicate()], "softmax along the split")
    same(dist.shard_tensor(np.arange(5.0), mesh, S0).mean(), 2.0, [Replicate()], "a mean over uneven rows")
    # a split batch against a replicated weight: the weight's gradient is the whole batch's
    w = pycoll.to_tensor(B, stop_gradient=False)
    pycoll.matmul(x, w).mean().backward()
    np.testing.assert_allclose(w.grad.numpy(), A.T @ np.full((4, 3), 1 / 12, np.float32), rtol=1e-5)
    # a whole operand met by its block: its gradient is still the whole one's
    whole = pycoll.to_tensor(A, stop_gradient=False)
    ((x * whole).sum() * 1.0).backward()
    np.testing.assert_allclose(whole.grad.numpy(), A, rtol=1e-6)
    # a plain Linear whose weight alone is split by columns (paddle's example, no shard_layer): the
    # bias is cut alike, the output is split by columns, and every gradient is the whole one's
    plain = pycoll.nn.Linear(8, 4)
    plain.weight.set_value(np.arange(32, dtype=np.float32).reshape(8, 4) / 10)
    plain.bias.set_value(np.arange(4, dtype=np.float32))
    plain.weight = dist.shard_tensor(plain.weight, mesh, [Shard(1)])
    inp = pycoll.to_tensor(A, stop_gradient=False)
    out = plain(inp)
    W = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
    same(out, A @ W + np.arange(4), [Shard(1)], "a Linear with a column-split weight and a plain bias")
    (out * out).sum().backward()
    g = 2 * (A @ W + np.arange(4))
    np.testing.assert_allclose(inp.grad.numpy(), g @ W.T, rtol=1e-5)
    np.testing.assert_allclose(plain.bias.grad.numpy(), g.sum(0), rtol=1e-5)
    np.testing.assert_allclose(dist.unshard_dtensor(plain.weight.grad).numpy(), A.T @ g, rtol=1e-5)


def other_meshes():
    """Inputs on different meshes are refused (paddle's ValueError): their pieces are other cuts,
    and were added as they lay (a wrong whole, no longer distributed)."""
    x = dist.shard_tensor(A, dist.ProcessMesh([0, 1], dim_names=["x"]), [Shard(0)])
    for mesh, placements in ((dist.ProcessMesh([1, 0], dim_names=["x"]), [Shard(0)]),
                             (dist.ProcessMesh([[0, 1]], dim_names=["a", "b"]), [Replicate(), Shard(0)]),
                             (dist.ProcessMesh([0], dim_names=["x"]), [Replicate()])):
        y, y_t = dist.shard_tensor(A, mesh, placements), dist.shard_tensor(A.T.copy(), mesh, placements)
        for op in (lambda: x + y, lambda: pycoll.matmul(x, y_t), lambda: pycoll.concat([x, y])):
            expect(ValueError, ["different process meshes", "all inputs must be on the same mesh"], op)


def two_dims():
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    a = dist.shard_tensor(A, mesh, [Shard(0), Shard(1)])
    b = dist.shard_tensor(B, mesh, [Replicate(), Shard(0)])
    same(pycoll.matmul(a, b), A @ B, [Shard(0), SUM], "[S0, S1] @ [R, S0]")
    same(a.sum(), A.sum(), [SUM, SUM], "the sum of a tensor split both ways")


if __name__ == "__main__":
    dist.init_parallel_env()
    if dist.get_world_size() == 2:
        one_dim()
        other_meshes()
    else:
        two_dims()
    print(f"OK rank={dist.get_rank()}", flush=True)
