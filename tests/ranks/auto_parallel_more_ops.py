"""The ops that need a whole dimension, on 2 ranks (mesh [0, 1]): each result read whole must
equal NumPy on the whole array, with the placements paddle 3.3.1 gives (measured on its CPU build
with the same calls; noted where pycoll's differ), and a parameter's gradient through each must
equal the gradient of the same computation on the whole array.
"""
import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import Partial, ReduceType, Replicate, Shard

rng = np.random.default_rng(3)
A = rng.standard_normal((4, 6)).astype(np.float32)
W = rng.standard_normal((4, 6)).astype(np.float32)
U = rng.standard_normal((5, 6)).astype(np.float32)  # 5 rows on 2 ranks: 3 and 2
R, S0, S1 = [Replicate()], [Shard(0)], [Shard(1)]
SUM, MAX, MIN = [Partial(ReduceType.kRedSum)], [Partial(ReduceType.kRedMax)], [Partial(ReduceType.kRedMin)]


def same(t, want, placements, what):
    assert t.placements == placements, f"{what}: placements {t.placements}, want {placements}"
    got = t.numpy()
    assert got.shape == np.shape(want) and t.shape == list(np.shape(want)), f"{what}: shape {got.shape}, {t.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)


def down(a, axis):
    """-a sorted along axis: the descending order, the first of equal values first."""
    return -np.sort(-a, axis)


def values(mesh):
    rows, cols = dist.shard_tensor(A, mesh, S0), dist.shard_tensor(A, mesh, S1)
    for what, t, want, where in [
        # along the split: made whole first (paddle: Replicate); across it: the split stays
        ("cumsum along the rows' split", pycoll.cumsum(rows, axis=0), np.cumsum(A, 0), R),
        ("cumsum across it", pycoll.cumsum(rows, axis=1), np.cumsum(A, 1), S0),
        ("cumsum flattened", pycoll.cumsum(cols), np.cumsum(A), R),
        ("cumprod (paddle: always whole)", pycoll.cumprod(cols, dim=0), np.cumprod(A, 0), R),
        ("sort along", pycoll.sort(rows, axis=0), np.sort(A, 0), R),
        ("sort across", pycoll.sort(cols, axis=0), np.sort(A, 0), S1),
        ("argsort along", pycoll.argsort(cols, axis=1), np.argsort(A, 1, kind="stable"), R),
        ("argsort across", pycoll.argsort(rows, axis=1), np.argsort(A, 1, kind="stable"), S0),
        ("flip (paddle: always whole)", pycoll.flip(rows, axis=1), A[:, ::-1], R),
        ("roll along", pycoll.roll(rows, 1, axis=0), np.roll(A, 1, 0), R),
        ("roll across", pycoll.roll(rows, 2, axis=1), np.roll(A, 2, 1), S0),
        ("roll flattened", pycoll.roll(cols, 3), np.roll(A, 3), R),
        ("tile growing the split", pycoll.tile(rows, [2, 1]), np.tile(A, [2, 1]), R),
        ("tile growing another", pycoll.tile(rows, [1, 2]), np.tile(A, [1, 2]), S0),
        ("tile adding a dimension", pycoll.tile(cols, [2, 1, 1]), np.tile(A, [2, 1, 1]), [Shard(2)]),
        ("expand", pycoll.expand(rows, [3, 4, 6]), np.broadcast_to(A, (3, 4, 6)), [Shard(1)]),
        ("broadcast_to", pycoll.broadcast_to(cols, [2, 4, 6]), np.broadcast_to(A, (2, 4, 6)), [Shard(2)]),
        ("expand_as a whole tensor", pycoll.expand_as(rows, pycoll.zeros([2, 4, 6])), np.broadcast_to(A, (2, 4, 6)), R),
        ("topk along", pycoll.topk(rows, 2, axis=0)[0], down(A, 0)[:2], R),
        ("topk's indices along", pycoll.topk(rows, 2, axis=0)[1], np.argsort(-A, 0, kind="stable")[:2], R),
        ("topk across", pycoll.topk(cols, 2, axis=0)[0], down(A, 0)[:2], S1),
        ("std over the split", pycoll.std(rows, axis=0), A.std(0, ddof=1), R),
        ("std across", pycoll.std(rows, axis=1), A.std(1, ddof=1), S0),
        ("var kept", pycoll.var(cols, axis=0, keepdim=True), A.var(0, ddof=1, keepdims=True), [Shard(1)]),
        ("var of all, biased", pycoll.var(cols, unbiased=False), A.var(), R),
        # paddle 3.3.1 gives the 2-norm and logsumexp over a split as Partial sums of the pieces'
        # results (a wrong whole); pycoll computes them whole
        ("2-norm", pycoll.linalg.norm(rows), np.sqrt((A * A).sum()), R),
        ("fro over the split", pycoll.linalg.norm(cols, p="fro", axis=1), np.sqrt((A * A).sum(1)), R),
        ("3-norm across", pycoll.linalg.norm(cols, p=3, axis=0), (np.abs(A) ** 3).sum(0) ** (1 / 3), S0),
        ("1-norm over the split: a sum", pycoll.linalg.norm(rows, p=1, axis=0), np.abs(A).sum(0), SUM),
        ("logsumexp over the split", pycoll.logsumexp(rows, axis=0), np.log(np.exp(A).sum(0)), R),
        ("logsumexp across", pycoll.logsumexp(rows, axis=1), np.log(np.exp(A).sum(1)), S0),
        ("prod (paddle: always whole)", pycoll.prod(rows, axis=1), A.prod(1), R),
        # any/all over the split: paddle's Partial(ANY)/Partial(ALL), which are max/min of bools
        ("any over the split", pycoll.any(rows > 1.0, axis=0), (A > 1.0).any(0), MAX),
        ("all of it", pycoll.all(cols > -2.0), (A > -2.0).all(), MIN),
        ("all across", pycoll.all(cols > -1.0, axis=0), (A > -1.0).all(0), S0),
        ("max over the split", pycoll.max(rows, axis=0), A.max(0), MAX),
        ("min over the split, kept", pycoll.min(cols, axis=1, keepdim=True), A.min(1, keepdims=True), MIN),
        ("argmax over the split", pycoll.argmax(rows, axis=0), A.argmax(0), R),
        ("argmax of all", pycoll.argmax(cols), A.argmax(), R),
        ("argmin over the split", pycoll.argmin(rows, axis=0), A.argmin(0), R),
        ("argmin across", pycoll.argmin(cols, axis=0), A.argmin(0), S0),
        ("mean over the split, kept", pycoll.mean(rows, axis=0, keepdim=True), A.mean(0, keepdims=True),
         [Partial(ReduceType.kRedAvg)]),
        ("split along", pycoll.split(rows, 2, axis=0)[1], A[2:], R),
        ("split across", pycoll.split(rows, [2, 4], axis=1)[1], A[:, 2:], S0),
        ("chunk along", pycoll.chunk(cols, 3, axis=1)[2], A[:, 4:], R),
        ("chunk across", pycoll.chunk(cols, 2, axis=0)[0], A[:2], S1),
        ("where with a whole operand", pycoll.where(rows > 0, rows, pycoll.to_tensor(W)), np.where(A > 0, A, W), S0),
        # paddle: Replicate here; pycoll keeps the split of the one distributed operand
        ("where with a whole condition", pycoll.where(pycoll.to_tensor(W) > 0, pycoll.to_tensor(W), cols),
         np.where(W > 0, W, A), S1),
        ("a whole tensor compared with a split one", pycoll.to_tensor(W) > rows, W > A, S0),
        ("reshape moving the split across", cols.reshape([8, 3]), A.reshape(8, 3), R),
        ("reshape cutting the rows unevenly", rows.reshape([3, 8]), A.reshape(3, 8), R),
        ("reshape keeping the split", cols.reshape([4, 2, 3]), A.reshape(4, 2, 3), [Shard(1)]),
    ]:
        same(t, want, where, what)
    # a Partial value is made whole first (paddle: Replicate)
    part = dist.shard_tensor(A, mesh, SUM)
    same(pycoll.any(part > 1.0, axis=0), (A > 1.0).any(0), R, "any of a Partial value")
    same(pycoll.where(part > 0, part, pycoll.to_tensor(W)), np.where(A > 0, A, W), R, "where of a Partial value")
    same(pycoll.cumsum(part, axis=0), np.cumsum(A, 0), R, "cumsum of a Partial value")
    # uneven rows (3 and 2): every piece of a split knows its whole rows
    uneven = dist.shard_tensor(U, mesh, S0)
    for i, piece in enumerate(pycoll.split(uneven, [1, 5], axis=1)):
        same(piece, np.split(U, [1], axis=1)[i], S0, f"uneven rows, split piece {i}")
    same(pycoll.sort(uneven, axis=0), np.sort(U, 0), R, "uneven rows sorted along them")
    same(pycoll.cumsum(uneven, axis=1), np.cumsum(U, 1), S0, "uneven rows, cumsum across")


GRAD_OPS = [
    ("cumsum along", lambda x: pycoll.cumsum(x, axis=0)), ("cumsum across", lambda x: pycoll.cumsum(x, axis=1)),
    ("cumprod", lambda x: pycoll.cumprod(x, dim=1)), ("sort", lambda x: pycoll.sort(x, axis=0)),
    ("flip", lambda x: pycoll.flip(x, axis=0)), ("roll", lambda x: pycoll.roll(x, 1, axis=1)),
    ("tile", lambda x: pycoll.tile(x, [2, 1])), ("expand", lambda x: pycoll.expand(x, [3, 4, 6])),
    ("topk", lambda x: pycoll.topk(x, 2, axis=0)[0]), ("std", lambda x: pycoll.std(x, axis=0)),
    ("var", lambda x: pycoll.var(x, axis=1)), ("2-norm", lambda x: pycoll.linalg.norm(x)),
    ("1-norm", lambda x: pycoll.linalg.norm(x, p=1, axis=0)), ("logsumexp", lambda x: pycoll.logsumexp(x, axis=0)),
    ("prod", lambda x: pycoll.prod(x, axis=0)), ("max over rows", lambda x: pycoll.max(x, axis=0)),
    ("min over columns", lambda x: pycoll.min(x, axis=1)), ("split", lambda x: pycoll.split(x, [2, 4], axis=1)[1]),
    ("chunk", lambda x: pycoll.chunk(x, 2, axis=0)[1]),
    ("where", lambda x: pycoll.where(x > 0, x, pycoll.to_tensor(W))),
    ("reshape", lambda x: pycoll.reshape(x, [8, 3])),
]


def gradients(mesh):
    """Each op's gradient on a split parameter (both ways) against the same loss on the whole."""
    for what, op in GRAD_OPS:
        whole = pycoll.to_tensor(A, stop_gradient=False)
        out = op(whole)
        weight = rng.standard_normal(out.shape).astype(np.float32)  # every output element matters
        (out * pycoll.to_tensor(weight)).sum().backward()
        for placements in (S0, S1):
            x = dist.shard_tensor(A, mesh, placements, stop_gradient=False)
            (op(x) * pycoll.to_tensor(weight)).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), whole.grad.numpy(), rtol=1e-5, atol=1e-5,
                                       err_msg=f"{what} on {placements}")


if __name__ == "__main__":
    dist.init_parallel_env()
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    values(mesh)
    gradients(mesh)
    print(f"OK rank={dist.get_rank()}", flush=True)
