"""The ops that need a whole dimension, on 2 ranks (mesh [0, 1]): each result read whole must
equal NumPy on the whole array, with the placements paddle 3.3.1 gives (measured on its CPU build
with the same calls; noted where pycoll's differ), and a parameter's gradient through each must
equal the gradient of the same computation on the whole array. probed_values: the ops a probe
found refused (casts, cummax/cummin, order statistics, nansum/nanmean, softmax along the split,
losses with a whole label, uneven means, a split weight beside a split batch).
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


M = rng.integers(0, 3, (4, 6)).astype(np.float32)  # repeated values: mode has something to count
N = A.copy()
N[1, 2] = N[3, 0] = np.nan
P = rng.random((4, 6)).astype(np.float32)  # probabilities, a label for the elementwise losses
L = np.array([1, 5, 3, 1], np.int64)  # class ids for [4, 6] scores
L5 = np.array([0, 2, 5, 1, 4], np.int64)  # for the 5 rows of U
AVG = [Partial(ReduceType.kRedAvg)]


def running(a, axis, better):
    """(running extreme, the index of the latest element that reached it) along axis 0 or 1."""
    a = np.moveaxis(a, axis, 0)
    values, index = a.copy(), np.zeros(a.shape, np.int64)
    for i in range(1, len(a)):
        take = better(a[i], values[i - 1]) | (a[i] == values[i - 1])
        values[i] = np.where(take, a[i], values[i - 1])
        index[i] = np.where(take, i, index[i - 1])
    return np.moveaxis(values, 0, axis), np.moveaxis(index, 0, axis)


def mode_of_columns(a):
    """The most frequent value of each column (the smallest of equally frequent ones) and the
    index of its last occurrence."""
    values = []
    for col in a.T:
        uniq, counts = np.unique(col, return_counts=True)
        values.append(uniq[counts.argmax()])
    values = np.array(values, a.dtype)
    return values, np.array([len(a) - 1 - (a[::-1, j] == v).argmax() for j, v in enumerate(values)])


def log_softmax(a, axis):
    shifted = a - a.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


def ce_losses(a, labels):
    return -log_softmax(a, 1)[np.arange(len(a)), labels]


def probed_values(mesh):
    """The ops a probe found refused (paddle 3.3.1 computes them): casts, running extremes, order
    statistics, NaN-skipping reductions, softmax along the split, losses with a whole label, the
    mean of uneven rows and a Linear whose weight is split beside a split batch."""
    rows, cols = dist.shard_tensor(A, mesh, S0), dist.shard_tensor(A, mesh, S1)
    plain_label, plain_p = pycoll.to_tensor(L), pycoll.to_tensor(P)
    F = pycoll.nn.functional
    nan_rows, nan_cols = dist.shard_tensor(N, mesh, S0), dist.shard_tensor(N, mesh, S1)
    uneven = dist.shard_tensor(U, mesh, S0)
    max_along, max_at = running(A, 0, np.greater)
    min_across, _ = running(A, 0, np.less)
    _, max_at_across = running(A, 1, np.greater)
    mode_value, mode_index = mode_of_columns(M)
    weight6 = np.linspace(0.5, 2.0, 6).astype(np.float32)
    losses = ce_losses(A, L)
    kept = L != 1
    bce_pw = (1 - P) * A + (1 + P * (weight6 - 1)) * np.log1p(np.exp(-A))  # log(1 + e^-x): log(sigmoid)
    for what, t, want, where in [
        ("astype float64 of split rows", rows.astype("float64"), A.astype(np.float64), S0),
        ("cast to int32 of split columns", pycoll.cast(cols, "int32"), A.astype(np.int32), S1),
        ("a comparison cast to float32", (rows > 0).astype("float32"), (A > 0).astype(np.float32), S0),
        ("cummax along the split", pycoll.cummax(rows, axis=0)[0], max_along, R),
        ("cummax's indices along it", pycoll.cummax(rows, axis=0)[1], max_at, R),
        ("cummax's indices across it", pycoll.cummax(rows, axis=1)[1], max_at_across, S0),
        ("cummin across the split", pycoll.cummin(cols, axis=0)[0], min_across, S1),
        ("logcumsumexp (paddle: always whole)", pycoll.logcumsumexp(rows, axis=1), np.logaddexp.accumulate(A, 1), R),
        ("kthvalue along the split", pycoll.kthvalue(rows, 2, axis=0)[0], np.sort(A, 0)[1], R),
        ("kthvalue's indices", pycoll.kthvalue(cols, 3, axis=1)[1], np.argsort(A, 1)[:, 2], R),
        ("median across", pycoll.median(cols, axis=1), np.median(A, 1), R),
        ("median of all", pycoll.median(rows), np.median(A), R),
        ("quantile", pycoll.quantile(rows, 0.3, axis=0), np.quantile(A, 0.3, axis=0), R),
        ("mode along the split", pycoll.mode(dist.shard_tensor(M, mesh, S0), axis=0)[0], mode_value, R),
        ("mode's indices", pycoll.mode(dist.shard_tensor(M, mesh, S1), axis=0)[1], mode_index, R),
        ("nansum over the split", pycoll.nansum(nan_rows, axis=0), np.nansum(N, 0), SUM),
        ("nansum across it", pycoll.nansum(nan_cols, axis=0), np.nansum(N, 0), S0),
        ("nanmean over the split", pycoll.nanmean(nan_rows, axis=0), np.nanmean(N, 0), R),
        ("nanmean across it", pycoll.nanmean(nan_cols, axis=0), np.nanmean(N, 0), S0),
        ("nanmean of all", pycoll.nanmean(nan_cols), np.nanmean(N), R),
        ("nuclear norm", pycoll.linalg.norm(rows, p="nuc"), np.linalg.norm(A, "nuc"), R),
        ("spectral norm", pycoll.linalg.norm(cols, p=2, axis=[0, 1]), np.linalg.norm(A, 2), R),
        ("softmax along the split", F.softmax(rows, axis=0), np.exp(log_softmax(A, 0)), R),
        ("log_softmax along it", F.log_softmax(cols, axis=-1), log_softmax(A, 1), R),
        ("log_softmax across it", F.log_softmax(cols, axis=0), log_softmax(A, 0), S1),
        ("softmax_with_cross_entropy", F.softmax_with_cross_entropy(rows, pycoll.to_tensor(L[:, None])),
         losses[:, None], S0),
        ("softmax_with_cross_entropy over split classes", F.softmax_with_cross_entropy(cols, pycoll.to_tensor(L[:, None])),
         losses[:, None], R),
        # a plain or Replicate label beside split scores is cut as they are (paddle: Partial(AVG))
        ("cross_entropy, plain label", F.cross_entropy(rows, plain_label), losses.mean(), AVG),
        ("cross_entropy, Replicate label", F.cross_entropy(rows, dist.shard_tensor(L, mesh, R)), losses.mean(), AVG),
        ("cross_entropy summed", F.cross_entropy(rows, plain_label, reduction="sum"), losses.sum(), SUM),
        ("cross_entropy per row", F.cross_entropy(rows, plain_label, reduction="none"), losses, S0),
        ("cross_entropy over split classes", F.cross_entropy(cols, plain_label), losses.mean(), R),
        # a mean that divides by a count of the labels, or over uneven rows: computed whole
        ("cross_entropy ignoring a class", F.cross_entropy(rows, plain_label, ignore_index=1),
         losses[kept].sum() / kept.sum(), R),
        ("cross_entropy weighted", F.cross_entropy(rows, plain_label, weight=pycoll.to_tensor(weight6)),
         (losses * weight6[L]).sum() / weight6[L].sum(), R),
        ("cross_entropy of uneven rows", F.cross_entropy(uneven, pycoll.to_tensor(L5)), ce_losses(U, L5).mean(), R),
        ("nll_loss (paddle: whole)", F.nll_loss(F.log_softmax(rows, axis=1), plain_label), losses.mean(), R),
        ("nll_loss summed", F.nll_loss(F.log_softmax(rows, axis=1), plain_label, reduction="sum"), losses.sum(), SUM),
        # paddle: Replicate for the elementwise losses; pycoll keeps the batch split (Partial AVG)
        ("binary_cross_entropy", F.binary_cross_entropy(F.sigmoid(rows), plain_p),
         -(P * np.log(1 / (1 + np.exp(-A))) + (1 - P) * np.log(1 - 1 / (1 + np.exp(-A)))).mean(), AVG),
        ("bce with logits and pos_weight", F.binary_cross_entropy_with_logits(
            cols, plain_p, reduction="none", pos_weight=pycoll.to_tensor(weight6)), bce_pw, S1),
        ("kl_div", F.kl_div(rows, plain_p), (P * (np.log(P) - A)).mean(), AVG),
        ("kl_div batchmean (whole)", F.kl_div(rows, plain_p, reduction="batchmean"), (P * (np.log(P) - A)).sum() / 4, R),
        ("mse_loss", F.mse_loss(cols, plain_p), ((A - P) ** 2).mean(), AVG),
        # paddle 3.3.1: Partial(AVG) of the pieces' means (wrong for 3 and 2 rows); pycoll whole
        ("mean over uneven rows", pycoll.mean(uneven, axis=0), U.mean(0), R),
        ("mean of all uneven rows", pycoll.mean(uneven), U.mean(), R),
        ("mean across uneven rows", pycoll.mean(uneven, axis=1), U.mean(1), S0),
    ]:
        same(t, want, where, what)
    # gumbel_softmax computes whole: ranks seeded alike draw the plain call's noise
    pycoll.seed(11)
    want = pycoll.nn.functional.gumbel_softmax(pycoll.to_tensor(A), axis=0).numpy()
    pycoll.seed(11)
    same(F.gumbel_softmax(rows, axis=0), want, R, "gumbel_softmax")
    # a batch split beside a weight split by columns: the weight is made whole (paddle: Shard(0))
    same(F.linear(rows, dist.shard_tensor(W.T, mesh, S1), pycoll.to_tensor(A[0, :4])), A @ W.T + A[0, :4], S0,
         "linear, Shard(0) input and Shard(1) weight")


X4 = rng.standard_normal((4, 4, 6, 6)).astype(np.float32)  # NCHW
K = rng.standard_normal((3, 4, 3, 3)).astype(np.float32)  # conv2d weight [out, in, kh, kw]
B3 = rng.standard_normal((2, 4, 6)).astype(np.float32)  # a batch of matrices


def conv2d(x, k):
    """Valid cross-correlation, NCHW by OIHW, stride 1."""
    h, w = x.shape[2] - k.shape[2] + 1, x.shape[3] - k.shape[3] + 1
    out = np.zeros((x.shape[0], k.shape[0], h, w), np.float64)
    for i in range(k.shape[2]):
        for j in range(k.shape[3]):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + h, j:j + w], k[:, :, i, j])
    return out


def swept_values(mesh):
    """Ops a sweep of every public op on Shard(0)/Shard(1) tensors (tests' own script, not kept)
    found refused, crashing or wrong: elementwise ops, comparisons with a whole operand, the
    matrices' triangles and diagonals, in-place ops that move or reshape the split, random
    fills, pieces cut by whole sizes, a Linear split along its features beside a whole weight,
    layer_norm over the split, and the NCHW layers with a batch or a channel split."""
    rows, cols = dist.shard_tensor(A, mesh, S0), dist.shard_tensor(A, mesh, S1)
    F = pycoll.nn.functional
    plain_w = pycoll.to_tensor(W)
    E = np.clip(A / 3, -0.9, 0.9)  # inside erfinv's domain
    batch = dist.shard_tensor(B3, mesh, S0)
    for what, t, want, where in [
        ("erfinv", pycoll.erfinv(dist.shard_tensor(E, mesh, S1)), None, S1),
        ("sin", pycoll.sin(rows), np.sin(A), S0),
        ("log1p", pycoll.log1p(pycoll.abs(cols)), np.log1p(np.abs(A)), S1),
        ("leaky_relu", F.leaky_relu(rows, 0.1), np.where(A > 0, A, 0.1 * A), S0),
        ("silu", F.silu(cols), A / (1 + np.exp(-A)), S1),
        ("floor", pycoll.floor(rows * 3), np.floor(A * 3), S0),
        # paddle 3.3.1: Replicate for lerp; pycoll keeps the split as for the other elementwise ops
        ("lerp with a whole end", pycoll.lerp(rows, plain_w, 0.3), A + 0.3 * (W - A), S0),
        ("atan2 with a whole operand", pycoll.atan2(cols, plain_w), np.arctan2(A, W), S1),
        ("fmax", pycoll.fmax(rows, plain_w), np.fmax(A, W), S0),
        # comparisons and logical ops cut a whole operand as the split one
        ("equal to a whole tensor", pycoll.equal(rows, pycoll.to_tensor(A)), np.ones(A.shape, bool), S0),
        ("greater_than a whole tensor", pycoll.greater_than(cols, plain_w), A > W, S1),
        ("logical_and", pycoll.logical_and(rows > 0, plain_w > 0), (A > 0) & (W > 0), S0),
        ("isclose", pycoll.isclose(cols, plain_w), np.isclose(A, W), S1),
        ("allclose (whole)", pycoll.allclose(rows, pycoll.to_tensor(A)), np.array(True), R),
        ("equal_all (whole)", pycoll.equal_all(cols, pycoll.to_tensor(A)), np.array(True), R),
        # the matrices made whole, a batch split kept
        ("tril of split rows", pycoll.tril(rows), np.tril(A), R),
        ("triu of split columns", pycoll.triu(cols, 1), np.triu(A, 1), R),
        ("tril of a split batch", pycoll.tril(batch, -1), np.tril(B3, -1), S0),
        ("trace", pycoll.trace(rows), np.trace(A), R),
        ("diagonal", pycoll.diagonal(cols, 1), np.diagonal(A, 1), R),
        ("diag of a split vector", pycoll.diag(dist.shard_tensor(A[0], mesh, S0)), np.diag(A[0]), R),
        # pieces cut by the whole size
        ("unbind along the split", pycoll.unbind(cols, axis=1)[4], A[:, 4], R),
        ("tensor_split along it", pycoll.tensor_split(cols, 2, axis=1)[1], A[:, 3:], R),
        ("vsplit", pycoll.vsplit(rows, 2)[1], A[2:], R),
        ("repeat_interleave", pycoll.repeat_interleave(rows, 2, axis=0), np.repeat(A, 2, 0), R),
        ("atleast_3d", pycoll.atleast_3d(rows), A[:, :, None], S0),
        # paddle's row-parallel linear: features split, the whole weight cut by rows (Partial)
        ("linear, features split", F.linear(cols, pycoll.to_tensor(W.T)), A @ W.T, SUM),
        ("layer_norm over the split", F.layer_norm(cols, [6]),
         (A - A.mean(1, keepdims=True)) / np.sqrt(A.var(1, keepdims=True) + 1e-5), R),
    ]:
        if want is None:
            want = pycoll.erfinv(pycoll.to_tensor(E)).numpy()
        same(t, want, where, what)
    # in place: the tensor takes its new value's placements and shape
    x = dist.shard_tensor(A, mesh, S1)
    F.softmax_(x, axis=1)
    same(x, np.exp(log_softmax(A, 1)), R, "softmax_ along the split")
    x = dist.shard_tensor(A, mesh, S0)
    x.transpose_([1, 0])
    same(x, A.T, [Shard(1)], "transpose_")
    x = dist.shard_tensor(A, mesh, S0)
    pycoll.tanh_(x)
    same(x, np.tanh(A), S0, "tanh_")
    pycoll.seed(5)
    want = pycoll.to_tensor(A.copy()).uniform_().numpy()  # a copy: to_tensor shares A's memory
    pycoll.seed(5)
    same(dist.shard_tensor(A, mesh, S1).uniform_(), want, S1, "uniform_: this rank's piece of the plain call's draw")
    same(dist.shard_tensor(A, mesh, S0).zero_(), np.zeros_like(A), S0, "zero_")
    # NCHW layers: a batch split stays, and so does a channel split through the pools
    n0, c1 = dist.shard_tensor(X4, mesh, S0), dist.shard_tensor(X4, mesh, S1)
    pooled = X4.reshape(4, 4, 3, 2, 3, 2)
    for what, t, want, where in [
        ("conv2d, batch split", F.conv2d(n0, pycoll.to_tensor(K)), conv2d(X4, K), S0),
        # paddle 3.3.1 raises for a channel split beside a whole weight, and gives Replicate for the
        # pools below; pycoll computes the channel split whole and keeps a pool's batch/channel split
        ("conv2d, channels split (whole)", F.conv2d(c1, pycoll.to_tensor(K)), conv2d(X4, K), R),
        ("max_pool2d, channels split", F.max_pool2d(c1, 2), pooled.max((3, 5)), S1),
        ("avg_pool2d, batch split", F.avg_pool2d(n0, 2), pooled.mean((3, 5)), S0),
        ("adaptive_avg_pool2d", F.adaptive_avg_pool2d(c1, 1), X4.mean((2, 3), keepdims=True), S1),
        ("group_norm, batch split", F.group_norm(n0, 2), (lambda g: ((g - g.mean((2, 3, 4), keepdims=True)) / np.sqrt(
            g.var((2, 3, 4), keepdims=True) + 1e-5)).reshape(X4.shape))(X4.reshape(4, 2, 2, 6, 6)), S0),
        ("batch_norm in training (whole batch)", F.batch_norm(n0, pycoll.zeros([4]), pycoll.ones([4]), training=True),
         (X4 - X4.mean((0, 2, 3), keepdims=True)) / np.sqrt(X4.var((0, 2, 3), keepdims=True) + 1e-5), R),
        ("batch_norm with running statistics", F.batch_norm(n0, pycoll.zeros([4]), pycoll.ones([4])),
         X4 / np.sqrt(1 + 1e-5), S0),
    ]:
        same(t, want, where, what)


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
    ("astype", lambda x: x.astype("float64")), ("cummax along", lambda x: pycoll.cummax(x, axis=0)[0]),
    ("cummin across", lambda x: pycoll.cummin(x, axis=1)[0]), ("logcumsumexp", lambda x: pycoll.logcumsumexp(x, 0)),
    ("kthvalue", lambda x: pycoll.kthvalue(x, 2, axis=0)[0]), ("median", lambda x: pycoll.median(x, axis=1)),
    ("nansum", lambda x: pycoll.nansum(x, axis=0)), ("nanmean", lambda x: pycoll.nanmean(x, axis=0)),
    ("nuclear norm", lambda x: pycoll.linalg.norm(x, p="nuc")),
    ("softmax", lambda x: pycoll.nn.functional.softmax(x, axis=0)),
    ("log_softmax", lambda x: pycoll.nn.functional.log_softmax(x, axis=1)),
    ("cross_entropy", lambda x: pycoll.nn.functional.cross_entropy(x, pycoll.to_tensor(L))),
    ("cross_entropy ignoring", lambda x: pycoll.nn.functional.cross_entropy(x, pycoll.to_tensor(L), ignore_index=1)),
    ("bce with logits", lambda x: pycoll.nn.functional.binary_cross_entropy_with_logits(x, pycoll.to_tensor(P))),
    ("kl_div", lambda x: pycoll.nn.functional.kl_div(x, pycoll.to_tensor(P), reduction="batchmean")),
    ("tril", lambda x: pycoll.tril(x, 1)), ("trace", lambda x: pycoll.trace(x)),
    ("erf", lambda x: pycoll.erf(x)), ("lerp", lambda x: pycoll.lerp(x, pycoll.to_tensor(W), 0.3)),
    ("layer_norm", lambda x: pycoll.nn.functional.layer_norm(x, [6])),
    ("linear", lambda x: pycoll.nn.functional.linear(x, pycoll.to_tensor(W.T))),
    ("pad", lambda x: pycoll.nn.functional.pad(x, [1, 2])), ("pad both axes", lambda x: pycoll.nn.functional.pad(
        x, [1, 1, 2, 0], mode="constant")),
    ("interpolate", lambda x: pycoll.nn.functional.interpolate(x.reshape([1, 4, 6]), scale_factor=2, mode="linear")),
    ("normalize", lambda x: pycoll.nn.functional.normalize(x)), ("einsum", lambda x: pycoll.einsum("ij,kj->ik", x, x)),
    ("masked_fill", lambda x: pycoll.masked_fill(x, x > 0, 0.5)),
    ("prelu", lambda x: pycoll.nn.functional.prelu(x, pycoll.to_tensor(np.linspace(0.1, 0.6, 6, dtype=np.float32)))),
    ("label_smooth", lambda x: pycoll.nn.functional.label_smooth(x)), ("renorm", lambda x: pycoll.renorm(x, 2.0, 0, 1.0)),
    ("frexp", lambda x: pycoll.frexp(x)[0]), ("rfft", lambda x: pycoll.abs(pycoll.fft.rfft(x, axis=0))),
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
    # the mean of uneven rows, and a Linear's weight split by columns beside a split batch
    x = dist.shard_tensor(U, mesh, S0, stop_gradient=False)
    (pycoll.mean(x, axis=0) * pycoll.to_tensor(W[0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(W[0] / 5, U.shape), rtol=1e-6, err_msg="uneven mean")
    x = dist.shard_tensor(A, mesh, S0, stop_gradient=False)
    weight = dist.shard_tensor(W.T, mesh, S1, stop_gradient=False)
    g = rng.standard_normal((4, 4)).astype(np.float32)
    (pycoll.nn.functional.linear(x, weight) * pycoll.to_tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), g @ W, rtol=1e-5, atol=1e-6, err_msg="linear's input")
    np.testing.assert_allclose(weight.grad.numpy(), A.T @ g, rtol=1e-5, atol=1e-6, err_msg="linear's split weight")
    for placements in (S0, S1):  # prelu's per-channel weight: whole beside a batch split, cut as a channel split
        x = dist.shard_tensor(A, mesh, placements)
        slopes = pycoll.to_tensor(np.linspace(0.1, 0.6, 6, dtype=np.float32), stop_gradient=False)
        (pycoll.nn.functional.prelu(x, slopes) * pycoll.to_tensor(W)).sum().backward()
        np.testing.assert_allclose(slopes.grad.numpy(), np.where(A > 0, 0, A * W).sum(0), rtol=1e-5, atol=1e-6,
                                   err_msg=f"prelu's weight on {placements}")


def uneven_extremes(mesh):
    """max/min over an uneven split (one row on two ranks: rank 1's piece is empty) are made
    whole first: an empty piece has no maximum."""
    row = np.array([[1.0, 5.0, 3.0]], np.float32)
    one = dist.shard_tensor(row, mesh, S0)
    for fn, want in ((pycoll.max, 5.0), (pycoll.min, 1.0), (pycoll.amax, 5.0)):
        same(fn(one), want, R, f"{fn.__name__} of one row on two ranks")
    same(pycoll.max(one, axis=1), row.max(1), S0, "max across an uneven split (the split stays)")


if __name__ == "__main__":
    dist.init_parallel_env()
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    uneven_extremes(mesh)
    values(mesh)
    probed_values(mesh)
    swept_values(mesh)
    gradients(mesh)
    print(f"OK rank={dist.get_rank()}", flush=True)
