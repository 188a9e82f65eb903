"""flash_attention's module (flash_attention, flash_attn_qkvpacked, flash_attn_unpadded,
flash_attn_varlen_qkvpacked, flashmask_attention) and sparse_attention.

flash_attention and flash_attn_qkvpacked are compared with paddle 3.3.1's CPU build (its math
path): tests/data/paddle_flash_attention.npz holds its outputs, softmax and gradients of
sum(out**2) for q, k, v of shape [2, 5, 3, 4] drawn by RandomState(0) (keys q, k, v; o/s/gq/gk/gv
for flash_attention and p/gp for the packed form, suffix 0 plain and 1 causal). paddle's other
kernels are GPU-only: their masks are checked against dense attention computed in NumPy from
paddle's docstrings (flashmask's flashmask_to_densemask loop, sparse_attention's CSR rule and
printed example)."""
from pathlib import Path

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
from pycoll.nn.functional.flash_attention import flash_attention, flash_attn_unpadded

PADDLE = np.load(Path(__file__).parent / "data" / "paddle_flash_attention.npz")


def _dense(q, k, v, keep=None, scale=None):
    """NumPy attention over [b, h, l, d] with a bool keep mask; rows keeping nothing give 0."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    if k.shape[1] != q.shape[1]:
        k, v = (np.repeat(a, q.shape[1] // a.shape[1], axis=1) for a in (k, v))
    s = (q @ np.swapaxes(k, -1, -2)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    keep = np.ones(s.shape, bool) if keep is None else np.broadcast_to(keep, s.shape)
    s = np.where(keep, s, -np.inf)
    live = keep.any(-1, keepdims=True)
    s = np.where(live, s, 0)
    w = np.exp(s - s.max(-1, keepdims=True)) * keep
    w = w / np.maximum(w.sum(-1, keepdims=True), 1e-300)
    return (w @ v) * live


def _t(a, grad=False):
    return pycoll.to_tensor(a, stop_gradient=not grad)


def _bhld(a):
    return np.swapaxes(a, 1, 2)


@pytest.mark.parametrize("causal", [0, 1])
def test_flash_attention_and_qkvpacked_equal_paddle(causal):
    q, k, v = (_t(PADDLE[n], True) for n in "qkv")
    out, soft = flash_attention(q, k, v, 0.0, bool(causal), True)
    (out * out).sum().backward()
    for got, key in ((out, "o"), (soft, "s"), (q.grad, "gq"), (k.grad, "gk"), (v.grad, "gv")):
        np.testing.assert_allclose(got.numpy(), PADDLE[f"{key}{causal}"], rtol=1e-5, atol=2e-6, err_msg=key)
    qkv = _t(np.stack([PADDLE["q"], PADDLE["k"], PADDLE["v"]], axis=2), True)
    out, none = F.flash_attn_qkvpacked(qkv, 0.0, bool(causal))
    (out * out).sum().backward()
    assert none is None
    np.testing.assert_allclose(out.numpy(), PADDLE[f"p{causal}"], rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(qkv.grad.numpy(), PADDLE[f"gp{causal}"], rtol=1e-5, atol=2e-6)


def test_qkvpacked_grouped_query_heads():
    rng = np.random.RandomState(1)
    qkv = rng.randn(2, 6, 4, 2, 3)  # 2 groups of 2 key heads: 4 query heads
    out, _ = F.flash_attn_qkvpacked(_t(qkv), causal=True)
    query = qkv[:, :, :2].reshape(2, 6, 4, 3)
    want = _dense(_bhld(query), _bhld(qkv[:, :, 2]), _bhld(qkv[:, :, 3]), np.tril(np.ones((6, 6), bool)))
    np.testing.assert_allclose(out.numpy(), _bhld(want), rtol=1e-12)


@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_sequences_attend_within_themselves(padded, causal):
    rng = np.random.RandomState(2)
    lengths, pad = [3, 5, 2], 5
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype("int32")
    rows = pad * len(lengths) if padded else cu[-1]
    qkv = rng.randn(rows, 3, 2, 4)
    out, soft = F.flash_attn_varlen_qkvpacked(_t(qkv), _t(cu), _t(cu), pad, pad, 0.3, causal=causal,
                                              return_softmax=True, varlen_padded=padded)
    want = np.zeros((rows, 2, 4))
    for i, n in enumerate(lengths):
        start = i * pad if padded else cu[i]
        part = qkv[start:start + n].transpose(2, 1, 0, 3)[None]  # [1, 2, n, 4] per q/k/v
        keep = np.tril(np.ones((n, n), bool)) if causal else None
        want[start:start + n] = _dense(part[:, :, 0], part[:, :, 1], part[:, :, 2], keep, 0.3)[0].transpose(1, 0, 2)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-15)
    assert soft.shape == [1, 2, rows, rows]
    np.testing.assert_allclose(soft.numpy().sum(-1)[0, 0], [1.0 if np.any(want[r]) else 0.0 for r in range(rows)])
    # unpadded with separate key rows: equal to the packed call
    got, _ = flash_attn_unpadded(_t(qkv[:, 0]), _t(qkv[:, 1]), _t(qkv[:, 2]), _t(cu), _t(cu), pad, pad, 0.3,
                                 causal=causal) if not padded else (None, None)
    if got is not None:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-15)


def _docstring_dense_keep(idx, causal):
    """paddle's flashmask_to_densemask (its docstring), as a keep mask: True where not -inf."""
    bz, heads, seq, bounds = idx.shape
    m = np.zeros((bz, heads, seq, seq), bool)
    has_end = (causal and bounds == 2) or ((not causal) and bounds == 4)
    for b in range(bz):
        for h in range(heads):
            for j in range(seq):
                down = idx[b, h, j, 0]
                if has_end:
                    m[b, h, down:idx[b, h, j, 1], j] = True
                else:
                    m[b, h, down:, j] = True
                if causal:
                    m[b, h, :j, j] = True
                elif has_end:
                    m[b, h, idx[b, h, j, 2]:idx[b, h, j, 3], j] = True
                else:
                    m[b, h, :idx[b, h, j, 1], j] = True
    return ~m


def _cols(*columns):
    return np.stack([np.array(c) for c in columns], axis=-1).reshape(1, 1, 10, len(columns)).astype("int32")


DOC_MASKS = [  # (name in paddle's docstring, causal, startend_row_indices)
    ("causal", True, _cols([8] * 10)),
    ("sliding window", True, _cols([3, 4, 5, 6, 7, 8, 9, 10, 10, 10])),
    ("causal document", True, _cols([4, 4, 4, 4, 7, 7, 7, 10, 10, 10])),
    ("document", False, _cols([4, 4, 4, 4, 7, 7, 7, 10, 10, 10], [0, 0, 0, 0, 4, 4, 4, 7, 7, 7])),
    ("share question", True, _cols([10, 10, 10, 10, 7, 7, 7, 10, 10, 10])),
    ("global + sliding window", False, _cols([10, 10, 4, 5, 6, 7, 8, 9, 10, 10], [10] * 10,
                                             [0, 0, 0, 0, 2, 2, 2, 2, 2, 2], [0, 0, 0, 0, 3, 4, 5, 6, 7, 8])),
    ("causal blockwise", True, _cols([4, 4, 4, 4, 10, 10, 10, 10, 10, 10], [7, 7, 7, 7, 10, 10, 10, 10, 10, 10])),
    ("prefix LM document", False, _cols([3, 3, 3, 5, 5, 10, 10, 10, 10, 10], [0, 0, 2, 3, 3, 5, 5, 7, 8, 9])),
    ("prefix LM causal", False, _cols([10] * 10, [0, 0, 0, 0, 0, 5, 6, 7, 8, 9])),
    ("QK-sparse", True, _cols([10, 10, 2, 3, 4, 5, 6, 7, 10, 10], [10, 10, 5, 5, 5, 5, 8, 8, 10, 10])),
]


def test_flashmask_docstring_masks():
    # two of paddle's pictures, row by row, to pin the reading of the indices
    assert _docstring_dense_keep(DOC_MASKS[1][2], True)[0, 0, 5].astype(int).tolist() == [0, 0, 0, 1, 1, 1, 0, 0, 0, 0]
    assert _docstring_dense_keep(DOC_MASKS[3][2], False)[0, 0, 5].astype(int).tolist() == [0, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    rng = np.random.RandomState(3)
    q, k, v = (rng.randn(1, 10, 2, 4) for _ in range(3))
    for name, causal, idx in DOC_MASKS:
        out = F.flashmask_attention(_t(q), _t(k), _t(v), _t(idx), causal=causal)
        want = _dense(_bhld(q), _bhld(k), _bhld(v), _docstring_dense_keep(idx, causal))
        np.testing.assert_allclose(out.numpy(), _bhld(want), rtol=1e-12, atol=1e-15, err_msg=name)


def test_flashmask_random_indices_heads_and_fully_masked_rows():
    rng = np.random.RandomState(4)
    q = rng.randn(2, 7, 4, 3)
    k, v = rng.randn(2, 7, 2, 3), rng.randn(2, 7, 2, 3)
    dead_rows = 0
    for causal, bounds in ((True, 1), (True, 2), (False, 2), (False, 4)):
        for heads in (1, 2, 4):  # broadcast, one per key head (serving 2 query heads each), one per query head
            idx = np.sort(rng.randint(0, 8, size=(2, heads, 7, bounds)), axis=-1).astype("int32")
            if bounds == 2 and not causal:
                idx = idx[..., ::-1].copy()  # (LTS, UTE): any order is legal
            keep = _docstring_dense_keep(idx, causal)
            if heads == 2:
                keep = np.repeat(keep, 2, axis=1)
            keep = np.broadcast_to(keep, (2, 4, 7, 7))
            tq = _t(q, True)
            out, lse = F.flashmask_attention(tq, _t(k), _t(v), _t(idx), causal=causal, return_softmax_lse=True)
            np.testing.assert_allclose(out.numpy(), _bhld(_dense(_bhld(q), _bhld(k), _bhld(v), keep)), rtol=1e-11,
                                       atol=1e-14, err_msg=f"{causal} {bounds} {heads}")
            s = _bhld(q) @ np.swapaxes(np.repeat(_bhld(k), 2, axis=1), -1, -2) / np.sqrt(3)
            with np.errstate(divide="ignore"):
                want_lse = np.log((np.exp(s) * keep).sum(-1))
            np.testing.assert_allclose(lse.numpy(), np.where(np.isfinite(want_lse), want_lse, np.inf), rtol=1e-6, atol=1e-6)
            out.sum().backward()
            dead = ~keep.any(-1)  # [b, h, lq]: those query rows get no gradient
            assert np.all(np.isfinite(tq.grad.numpy())) and np.all(tq.grad.numpy()[np.swapaxes(dead, 1, 2)] == 0)
            dead_rows += dead.sum()
    assert dead_rows > 10  # the draws masked whole rows


def test_flashmask_gradients_equal_finite_differences():
    rng = np.random.RandomState(5)
    q, k, v = (rng.randn(1, 4, 2, 3) for _ in range(3))
    idx = np.array([[[[2, 0], [4, 0], [4, 1], [3, 1]]]], "int32")  # bidirectional (LTS, UTE)
    w = rng.randn(1, 4, 2, 3)

    def loss(qq, kk, vv):
        return float((F.flashmask_attention(_t(qq), _t(kk), _t(vv), _t(idx)).numpy() * w).sum())

    tq, tk, tv = _t(q, True), _t(k, True), _t(v, True)
    (F.flashmask_attention(tq, tk, tv, _t(idx)) * _t(w)).sum().backward()
    for i, (arr, grad) in enumerate(((q, tq.grad), (k, tk.grad), (v, tv.grad))):
        num = np.zeros_like(arr)
        for pos in np.ndindex(arr.shape):
            args = [q, k, v]
            hi, lo = arr.copy(), arr.copy()
            hi[pos] += 1e-6
            lo[pos] -= 1e-6
            num[pos] = (loss(*[hi if j == i else a for j, a in enumerate(args)])
                        - loss(*[lo if j == i else a for j, a in enumerate(args)])) / 2e-6
        np.testing.assert_allclose(grad.numpy(), num, rtol=1e-5, atol=1e-8)


def test_flashmask_window_block_mask_and_plain():
    rng = np.random.RandomState(6)
    q, k, v = (rng.randn(1, 9, 2, 4) for _ in range(3))
    ref = lambda keep: _bhld(_dense(_bhld(q), _bhld(k), _bhld(v), keep))  # noqa: E731
    i, j = np.arange(9)[:, None], np.arange(9)[None, :]
    np.testing.assert_allclose(F.flashmask_attention(_t(q), _t(k), _t(v), causal=True, window_size=2).numpy(),
                               ref((j <= i) & (j >= i - 2)), rtol=1e-12)
    np.testing.assert_allclose(F.flashmask_attention(_t(q), _t(k), _t(v), window_size=(1, 3)).numpy(),
                               ref((j >= i - 1) & (j <= i + 3)), rtol=1e-12)
    np.testing.assert_allclose(F.flashmask_attention(_t(q), _t(k), _t(v), causal=True).numpy(), ref(j <= i),
                               rtol=1e-12)
    np.testing.assert_allclose(F.flashmask_attention(_t(q), _t(k), _t(v), softmax_scale=0.1).numpy(),
                               _bhld(_dense(_bhld(q), _bhld(k), _bhld(v), None, 0.1)), rtol=1e-12)
    # block_mask: 130 rows make 2 blocks of 128; dropping block (1, 0) hides keys 0..127 from rows 128, 129
    q, k, v = (rng.randn(1, 130, 1, 2) for _ in range(3))
    idx = np.full((1, 1, 130, 1), 130, "int32")
    blocks = np.array([[[[1, 1], [0, 1]]]], "int32")
    out = F.flashmask_attention(_t(q), _t(k), _t(v), _t(idx), causal=True, block_mask=_t(blocks))
    keep = np.tril(np.ones((130, 130), bool))
    keep[128:, :128] = False
    np.testing.assert_allclose(out.numpy(), _bhld(_dense(_bhld(q), _bhld(k), _bhld(v), keep)), rtol=1e-12)


def test_sparse_attention_paddle_docstring_example():
    x = np.array([[[[0, 1], [2, 3], [0, 1], [2, 3]]]], "float32")
    offset = _t(np.array([[[0, 2, 4, 6, 8]]], "int32"))
    columns = _t(np.array([[[0, 1, 0, 1, 2, 3, 2, 3]]], "int32"))
    out = F.sparse_attention(_t(x), _t(x), _t(x), offset, columns)
    np.testing.assert_allclose(out.numpy()[0, 0], [[1.60885942, 2.60885954], [1.99830270, 2.99830270],
                                                   [1.60885942, 2.60885954], [1.99830270, 2.99830270]], rtol=1e-6)
    masked = F.sparse_attention(_t(x), _t(x), _t(x), offset, columns,
                                key_padding_mask=_t(np.array([[1, 1, 1, 0]], "float32")),
                                attn_mask=_t(np.array([[1, 0, 1, 1]] + [[1, 1, 1, 1]] * 3, "float32")))
    np.testing.assert_allclose(masked.numpy()[0, 0], [[0, 1], [1.99830270, 2.99830270], [0, 1], [0, 1]], rtol=1e-6)


def test_sparse_attention_random_csr_and_gradient_reach():
    rng = np.random.RandomState(7)
    b, h, n, d = 2, 2, 6, 3
    keep = rng.rand(b, h, n, n) < 0.4
    keep[0, 0, 2] = False  # a row with no key: 0
    offset = np.concatenate([np.zeros((b, h, 1), int), np.cumsum(keep.sum(-1), -1)], -1).astype("int32")
    nnz = int(offset[..., -1].max())
    columns = np.zeros((b, h, nnz), "int32")
    for i in range(b):
        for j in range(h):
            cols = np.nonzero(keep[i, j])[1]
            columns[i, j, :cols.size] = cols
    q, k, v = (rng.randn(b, h, n, d) for _ in range(3))
    tq = _t(q, True)
    out = F.sparse_attention(tq, _t(k), _t(v), _t(offset), _t(columns))
    np.testing.assert_allclose(out.numpy(), _dense(q, k, v, keep), rtol=1e-12, atol=1e-15)
    out.sum().backward()
    assert np.all(tq.grad.numpy()[0, 0, 2] == 0) and np.any(tq.grad.numpy() != 0)


def test_bad_input_is_refused():
    x = _t(np.zeros((1, 4, 2, 3)))
    with pytest.raises(TypeError, match="int32"):
        F.flashmask_attention(x, x, x, _t(np.zeros((1, 1, 4, 1), "int64")), causal=True)
    with pytest.raises(ValueError, match="must be 1 or 2"):
        F.flashmask_attention(x, x, x, _t(np.zeros((1, 1, 4, 4), "int32")), causal=True)
    with pytest.raises(ValueError, match="must be 2 or 4"):
        F.flashmask_attention(x, x, x, _t(np.zeros((1, 1, 4, 1), "int32")))
    with pytest.raises(ValueError, match="seq_k=4"):
        F.flashmask_attention(x, x, x, _t(np.zeros((1, 1, 5, 2), "int32")))
    with pytest.raises(ValueError, match="cannot be given together"):
        F.flashmask_attention(x, x, x, _t(np.zeros((1, 1, 4, 2), "int32")), window_size=1)
    with pytest.raises(ValueError, match="return_seed_offset"):
        F.flashmask_attention(x, x, x, return_seed_offset=True)
    with pytest.raises(ValueError, match="fixed_seed_offset"):
        flash_attention(x, x, x, 0.5, fixed_seed_offset=_t(np.zeros(2, "int64")))
    with pytest.raises(ValueError, match="must be 4-D"):
        flash_attention(_t(np.zeros((4, 2, 3))), x, x)
    with pytest.raises(ValueError, match="num_heads/num_heads_k"):
        F.flash_attn_qkvpacked(_t(np.zeros((1, 4, 2, 2, 3))))
    with pytest.raises(ValueError, match="cumulative"):
        F.flash_attn_varlen_qkvpacked(_t(np.zeros((4, 3, 2, 3))), _t(np.array([1, 4], "int32")),
                                      _t(np.array([1, 4], "int32")), 4, 4, 1.0)
    y = _t(np.zeros((1, 2, 4, 3)))  # sparse_attention's [batch, heads, seq, dim]
    with pytest.raises(ValueError, match=r"sparse_csr_columns must lie in \[0, 4\)"):
        F.sparse_attention(y, y, y, _t(np.array([[[0, 1, 1, 1, 1]] * 2], "int32")), _t(np.full((1, 2, 1), 9, "int32")))
    with pytest.raises(ValueError, match=r"sparse_csr_offset must be \[1, 2, 5\]"):
        F.sparse_attention(y, y, y, _t(np.zeros((1, 2, 4), "int32")), _t(np.zeros((1, 2, 1), "int32")))


def _every_function():
    """Outputs and gradients of each function on tensors made on the current device."""
    rng = np.random.RandomState(8)
    q, k, v = (_t(rng.randn(1, 6, 2, 3).astype("float32"), True) for _ in range(3))
    qkv = _t(rng.randn(6, 4, 1, 3).astype("float32"), True)
    cu = _t(np.array([0, 2, 5], "int32"))
    idx = _t(np.array([[[[4, 0], [5, 1], [6, 1], [6, 2], [6, 2], [6, 3]]]], "int32"))
    offset = _t(np.array([[[0, 1, 3]] * 6], "int32"))  # sparse_attention reads q as [1, 6 heads, 2, 3]
    columns = _t(np.array([[[1, 0, 1]] * 6], "int32"))
    outs = [flash_attention(q, k, v, causal=True, return_softmax=True)[0],
            F.flash_attn_varlen_qkvpacked(qkv, cu, cu, 3, 3, 0.5, causal=True)[0],
            flash_attn_unpadded(q[0], k[0], v[0], cu, cu, 3, 3, 0.5)[0],
            *F.flashmask_attention(q, k, v, idx, return_softmax_lse=True),
            F.flashmask_attention(q, k, v, window_size=1, causal=True),
            F.sparse_attention(q, k, v, offset, columns, key_padding_mask=_t(np.ones((1, 2), "float32")))]
    sum(o.sum() for o in outs if o.dtype == np.float32 and not o.stop_gradient).backward()
    return outs + [q.grad, k.grad, v.grad, qkv.grad]


def test_every_function_gives_the_same_on_gpu_arrays():
    """tests/strict_cupy.py in CuPy's place (it refuses host arrays meeting device arrays, as CuPy
    does): the CPU's numbers, held in device arrays."""
    import strict_cupy

    with strict_cupy.installed():
        results = strict_cupy.on_each_place(_every_function)
    assert len(results["gpu"]) == 11
    for want, got in zip(results["cpu"], results["gpu"]):
        assert isinstance(got.array, strict_cupy.ndarray)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
