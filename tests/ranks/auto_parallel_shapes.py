"""Shape ops, row-parallel linears and operands split differently, on distributed tensors in the
eager loop, on 2 ranks (mesh [0, 1]): each result read whole must equal NumPy on the whole arrays
(with paddle's placements), and what pycoll cannot place must be refused by name, never computed
into a wrong whole. Also ``dtensor_to_local`` and the checkpoint keywords ``save_replicas`` /
``aoa_config``. argv[1]: a folder for the checkpoint.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn.functional as F
from pycoll.distributed import Partial, Replicate, Shard

from expect import expect

rng = np.random.default_rng(11)
A = rng.standard_normal((4, 8)).astype(np.float32)
X = np.arange(8, dtype=np.float32).reshape(2, 4)  # on 2 ranks: one row each
S0, S1, SUM = [Shard(0)], [Shard(1)], [Partial()]


def same(t, want, placements, what):
    assert t.placements == placements, f"{what}: placements {t.placements}, want {placements}"
    got = t.numpy()
    assert got.shape == np.shape(want) and t.shape == list(np.shape(want)), f"{what}: shape {got.shape}, {t.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)


def shape_ops(mesh):
    x = dist.shard_tensor(A, mesh, S0)  # two rows a rank
    one = dist.shard_tensor(X, mesh, S0)  # one row a rank
    one3 = dist.shard_tensor(X.reshape(2, 1, 4), mesh, S0)
    cols = dist.shard_tensor(X.T.copy(), mesh, S1)  # [4, 2], one column a rank
    tall = dist.shard_tensor(A.reshape(4, 1, 8), mesh, S0)
    for what, t, want, where in [
        ("unsqueeze(1)", x.unsqueeze(1), A[:, None], S0),
        ("unsqueeze(0)", pycoll.unsqueeze(x, 0), A[None], S1),
        ("unsqueeze(-1)", x.unsqueeze(-1), A[..., None], S0),
        ("unsqueeze(1).mean(-1)", x.unsqueeze(1).mean(-1), A[:, None].mean(-1), S0),
        ("[4, 1, 8] squeeze(1)", tall.squeeze(1), A, S0),
        ("[4, 1, 8] squeeze()", pycoll.squeeze(tall), A, S0),
        ("[4, 1, 8] flatten(1)", tall.flatten(1), A, S0),
        ("reshape [0, 2, -1]", x.reshape([0, 2, -1]), A.reshape(4, 2, 4), S0),
        ("reshape [-1]", x.reshape([-1]), A.reshape(-1), S0),
        # one row a rank: the ops that do not ask the piece which of its dimensions are 1
        ("one row a rank, transposed", one.T, X.T, S1),
        ("one row a rank, summed across", one.sum(axis=1), X.sum(1), S0),
        ("one row a rank, mean", one.mean(), X.mean(), [Partial(dist.ReduceType.kRedAvg)]),
        ("one row a rank, by a whole weight", F.linear(one, pycoll.ones([4, 3])), X @ np.ones((4, 3)), S0),
        ("one row a rank, stacked", pycoll.stack([one, one]), np.stack([X, X]), S1),
        ("[2, 1, 4] summed over 1", one3.sum(axis=1), X, S0),
        ("[2, 1, 4] transposed", pycoll.transpose(one3, [1, 0, 2]), X[:, None].transpose(1, 0, 2), S1),
        ("[4, 2] one column a rank, transposed", cols.T, X, S0),
    ]:
        same(t, want, where, what)
    whole = np.arange(96, dtype=np.float32).reshape(4, 3, 8)
    x3 = dist.shard_tensor(whole, mesh, S0)
    # shape arguments speak of the whole tensor (multi-head attention's x.reshape([b, s, nh, hd]))
    for what, t, want, where in [
        ("reshape [4, 3, 2, 4]", x3.reshape([4, 3, 2, 4]), whole.reshape(4, 3, 2, 4), S0),
        ("reshape [4, 24]", pycoll.reshape(x3, [4, 24]), whole.reshape(4, 24), S0),
        ("reshape [12, 8]", x3.reshape([12, 8]), whole.reshape(12, 8), S0),
        ("reshape [6, 2, 8]", x3.reshape([6, 2, 8]), whole.reshape(6, 2, 8), S0),
        ("reshape [x.shape[0], -1]", x3.reshape([x3.shape[0], -1]), whole.reshape(4, -1), S0),
        # one row a rank: the piece's dimension of 1 is not the whole's
        ("one row a rank, unsqueeze(1)", pycoll.unsqueeze(one, 1), X[:, None], S0),
        ("one row a rank, unsqueeze(1).mean(-1)", pycoll.unsqueeze(one, 1).mean(-1), X[:, None].mean(-1), S0),
        ("one row a rank, unsqueeze(0)", pycoll.unsqueeze(one, 0), X[None], S1),
        ("one row a rank, squeeze().sum(-1)", pycoll.squeeze(one).sum(-1), X.sum(-1), S0),
        ("one row a rank, flatten", one.flatten(), X.reshape(-1), S0),
        ("one row a rank, reshape [2, 2, 2]", one.reshape([2, 2, 2]), X.reshape(2, 2, 2), S0),
        ("[2, 1, 4] squeeze(1)", one3.squeeze(1), X, S0),
        ("[2, 1, 4] reshape [2, 4]", one3.reshape([2, 4]), X, S0),
        ("[4, 2] one column a rank, unsqueeze(0)", cols.unsqueeze(0), X.T[None], [Shard(2)]),
        ("[4, 2] one column a rank, squeeze()", cols.squeeze(), X.T, S1),
    ]:
        same(t, want, where, what)
    # where a reshape would move the split across other dimensions, or cut it unevenly, the input
    # is made whole first (paddle 3.3.1 gives Replicate for these too)
    same(cols.reshape([8]), X.T.reshape(8), [Replicate()], "one column a rank, reshape [8]")
    same(x3.reshape([3, 4, 8]), whole.reshape(3, 4, 8), [Replicate()], "reshape [3, 4, 8]")
    expect(ValueError, ["cannot reshape a tensor of shape [4, 3, 8] into [5, -1]"], lambda: x3.reshape([5, -1]))


def row_parallel(mesh):
    """paddle's eager row-parallel pair: l0's weight split by columns, l1's by rows (both cut
    with shard_tensor, the biases plain): l1's result is Partial, its bias added once."""
    w0 = rng.standard_normal((4, 8)).astype(np.float32)
    b0 = rng.standard_normal(8).astype(np.float32)
    w1 = rng.standard_normal((8, 2)).astype(np.float32)
    b1 = rng.standard_normal(2).astype(np.float32)
    inp = rng.standard_normal((3, 4)).astype(np.float32)
    l0, l1 = pycoll.nn.Linear(4, 8), pycoll.nn.Linear(8, 2)
    for p, v in [(l0.weight, w0), (l0.bias, b0), (l1.weight, w1), (l1.bias, b1)]:
        p.set_value(v)
    l0.weight = dist.shard_tensor(l0.weight, mesh, S1)
    l1.weight = dist.shard_tensor(l1.weight, mesh, S0)
    x = pycoll.to_tensor(inp, stop_gradient=False)
    hidden = np.maximum(inp @ w0 + b0, 0)
    y = l1(F.relu(l0(x)))
    same(y, hidden @ w1 + b1, SUM, "l1(relu(l0(x)))")
    same(F.linear(F.relu(l0(x)), l1.weight), hidden @ w1, SUM, "F.linear without a bias")
    (y * y).sum().backward()  # an op on a Partial value computes from the whole
    g = 2 * (hidden @ w1 + b1)
    gh = (g @ w1.T) * (hidden > 0)
    np.testing.assert_allclose(l1.bias.grad.numpy(), g.sum(0), rtol=1e-5, err_msg="l1's bias: once")
    np.testing.assert_allclose(dist.unshard_dtensor(l1.weight.grad).numpy(), hidden.T @ g, rtol=1e-5)
    np.testing.assert_allclose(l0.bias.grad.numpy(), gh.sum(0), rtol=1e-5)
    np.testing.assert_allclose(dist.unshard_dtensor(l0.weight.grad).numpy(), inp.T @ gh, rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), gh @ w0.T, rtol=1e-5)


def split_differently(mesh):
    rows, cols = dist.shard_tensor(A, mesh, S0), dist.shard_tensor(A, mesh, S1)
    same(rows + cols, A + A, S0, "Shard(0) + Shard(1)")
    same(cols * rows, A * A, S1, "Shard(1) * Shard(0)")
    vec = dist.shard_tensor(A[0], mesh, S0)  # [8] split: the columns of a [4, 8]
    same(rows - vec, A - A[0], S0, "Shard(0) [4, 8] - Shard(0) [8]")
    half = dist.shard_tensor(A[:2], mesh, S0)  # [2, 8]: whole shapes that do not broadcast with [4, 8]
    expect(ValueError, ["add: x of shape [4, 8] and y of shape [2, 8] do not broadcast"], lambda: rows + half)


def operands_moved(mesh):
    """paddle reshards an op's operands whose pieces would not fit together: so does pycoll."""
    rows, cols = dist.shard_tensor(A, mesh, S0), dist.shard_tensor(A, mesh, S1)
    W = rng.standard_normal((8, 3)).astype(np.float32)
    L = rng.standard_normal((5, 4)).astype(np.float32)
    for what, t, want, where in [
        ("Shard(1) @ a whole W", pycoll.matmul(cols, pycoll.to_tensor(W)), A @ W, SUM),
        ("Shard(1) @ a Replicate W", cols @ dist.shard_tensor(W, mesh, [Replicate()]), A @ W, SUM),
        ("a whole L @ Shard(0)", pycoll.matmul(pycoll.to_tensor(L), rows), L @ A, SUM),
        ("Shard(0) @ Shard(0) W", pycoll.matmul(rows, dist.shard_tensor(W, mesh, S0)), A @ W, S0),
        ("concat of Shard(1) and a whole one", pycoll.concat([cols, pycoll.to_tensor(A)], axis=0),
         np.concatenate([A, A]), S1),
        ("concat of Shard(0) and Shard(1) across", pycoll.concat([rows, cols], axis=1),
         np.concatenate([A, A], 1), S0),
        ("index_select of rows [0, 2]", pycoll.index_select(rows, pycoll.to_tensor([0, 2]), axis=0),
         A[[0, 2]], [Replicate()]),
        ("index_select of columns [1, 5]", pycoll.index_select(rows, pycoll.to_tensor([1, 5]), axis=1),
         A[:, [1, 5]], S0),
        ("gather of row 3", pycoll.gather(rows, pycoll.to_tensor([3])), A[[3]], [Replicate()]),
        ("a row", rows[3], A[3], [Replicate()]),
        ("rows by a mask", rows[pycoll.to_tensor(A[:, 0] > 0)], A[A[:, 0] > 0], [Replicate()]),
        ("columns sliced, rows kept", rows[..., 1:3], A[:, 1:3], S0),
    ]:
        same(t, want, where, what)
    # the weight's gradient through its block: the whole one's
    w = pycoll.to_tensor(W, stop_gradient=False)
    pycoll.matmul(cols, w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), A.T @ np.ones((4, 3), np.float32), rtol=1e-5)


def to_local(mesh):
    x = dist.shard_tensor(A, mesh, S0, stop_gradient=False)
    local = dist.auto_parallel.api.dtensor_to_local(x, mesh, x.placements)
    r = dist.get_rank()
    assert local.placements is None and list(local.shape) == [2, 8]
    np.testing.assert_array_equal(local.numpy(), A[2 * r:2 * r + 2])
    (local * 3).sum().backward()
    np.testing.assert_array_equal(x.grad._local_value().numpy(), np.full((2, 8), 3, np.float32))
    # unshard_dtensor of a tensor taking a gradient: a plain tensor (paddle's dense one), in the graph
    y = dist.shard_tensor(A, mesh, S0, stop_gradient=False)
    whole = dist.unshard_dtensor(y)
    assert whole.placements is None and not whole.is_dist()
    np.testing.assert_array_equal(whole.numpy(), A)
    (whole * 2).sum().backward()
    np.testing.assert_array_equal(y.grad._local_value().numpy(), np.full((2, 8), 2, np.float32))
    expect(ValueError, ["dtensor_to_local", "placements"],
           dist.auto_parallel.api.dtensor_to_local, x, mesh, [Replicate()])
    expect(ValueError, ["dtensor_to_local", "distributed tensor"],
           dist.auto_parallel.api.dtensor_to_local, pycoll.to_tensor(A), mesh, S0)


def checkpoint(mesh, path):
    saved = {"w": dist.shard_tensor(A, mesh, S0), "b": dist.shard_tensor(A[0], mesh, [Replicate()])}
    dist.save_state_dict(saved, path, save_replicas=True)
    into = {"w": dist.shard_tensor(np.zeros_like(A), mesh, S1), "b": dist.shard_tensor(np.zeros(8, np.float32), mesh, S0)}
    dist.load_state_dict(into, path, aoa_config=None)
    np.testing.assert_array_equal(into["w"].numpy(), A)
    np.testing.assert_array_equal(into["b"].numpy(), A[0])
    expect(NotImplementedError, ["aoa_config"], dist.load_state_dict, into, path, aoa_config={"w": ["w -> v"]})
    expect(TypeError, ["save_replicas"], dist.save_state_dict, saved, path, save_replicas="yes")


if __name__ == "__main__":
    dist.init_parallel_env()
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    shape_ops(mesh)
    row_parallel(mesh)
    split_differently(mesh)
    operands_moved(mesh)
    to_local(mesh)
    checkpoint(mesh, sys.argv[1])
    print(f"OK rank={dist.get_rank()}", flush=True)
