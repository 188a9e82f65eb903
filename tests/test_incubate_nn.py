"""pycoll.incubate.nn(.functional): paddle's fused ops and layers, composed of pycoll's ops.

Paddle 3.3.1's CPU build runs fused_rms_norm, fused_layer_norm (both without gradients),
swiglu and fused_dropout_add: values marked so were measured there. Its other fused kernels are
GPU-only, so the rest is checked against the documented formulas written out in NumPy, and
gradients against central differences in float64."""
import os
import sys

import numpy as np
import pytest

import pycoll
import pycoll.incubate.nn as inn
import pycoll.incubate.nn.functional as IF
from pycoll.incubate.nn import attn_bias as ab
from pycoll.incubate.nn.memory_efficient_attention import memory_efficient_attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strict_cupy  # noqa: E402

RNG = np.random.default_rng(11)


def T(a, grad=False):
    t = pycoll.to_tensor(np.asarray(a))
    t.stop_gradient = not grad
    return t


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def numeric_grad(f, arrays, i, g, eps=1e-6):
    """d sum(f(*arrays) * g) / d arrays[i] by central differences (float64)."""
    a = arrays[i]
    out = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + eps
        up = (f(*arrays) * g).sum()
        a[idx] = old - eps
        down = (f(*arrays) * g).sum()
        a[idx] = old
        out[idx] = (up - down) / (2 * eps)
    return out


def check_grads(pycoll_f, numpy_f, arrays, tol=1e-6):
    ts = [T(a, grad=True) for a in arrays]
    out = pycoll_f(*ts)
    g = RNG.standard_normal(out.shape)
    (out * T(g)).sum().backward()
    for i, t in enumerate(ts):
        np.testing.assert_allclose(t.grad.numpy(), numeric_grad(numpy_f, [a.copy() for a in arrays], i, g),
                                   atol=tol, rtol=tol)


def np_rms(h, eps):
    return h / np.sqrt((h * h).mean(-1, keepdims=True) + eps)


def np_ln(h, w, b, eps):
    m = h.mean(-1, keepdims=True)
    out = (h - m) / np.sqrt(((h - m) ** 2).mean(-1, keepdims=True) + eps)
    return out * w + b if w is not None else out


# ---- fused_rms_norm / fused_layer_norm -------------------------------------------------------

def test_fused_rms_norm_values_and_return_convention():
    x, r, w, nb, b = rand(2, 3, 8), rand(2, 3, 8), rand(8), rand(8), rand(8)
    out, res = IF.fused_rms_norm(T(x), T(w), T(nb), 1e-6, 2)
    np.testing.assert_allclose(out.numpy(), np_rms(x, 1e-6) * w + nb, rtol=1e-12)
    assert list(res.shape) == [0]  # paddle returns an empty residual_out without a residual
    out, res = IF.fused_rms_norm(T(x), T(w), T(nb), 1e-6, -1, bias=T(b), residual=T(r))
    np.testing.assert_allclose(res.numpy(), x + b + r, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), np_rms(x + b + r, 1e-6) * w + nb, rtol=1e-12)
    # as paddle's kernel: the bias is added only together with a residual
    out, _ = IF.fused_rms_norm(T(x), T(w), None, 1e-6, 2, bias=T(b))
    np.testing.assert_allclose(out.numpy(), np_rms(x, 1e-6) * w, rtol=1e-12)
    # begin_norm_axis=1 normalises the 24 trailing values together, weight of 24
    w24 = rand(24)
    out, _ = IF.fused_rms_norm(T(x), T(w24), None, 1e-6, 1)
    np.testing.assert_allclose(out.numpy().reshape(2, 24), np_rms(x.reshape(2, 24), 1e-6) * w24, rtol=1e-12)


def test_fused_rms_norm_gradients():
    x, r, w, nb, b = rand(2, 6), rand(2, 6), rand(6), rand(6), rand(6)
    check_grads(lambda x, r, w, nb, b: IF.fused_rms_norm(x, w, nb, 1e-6, 1, bias=b, residual=r)[0],
                lambda x, r, w, nb, b: np_rms(x + b + r, 1e-6) * w + nb, [x, r, w, nb, b])


def test_fused_layer_norm_values_and_return_convention():
    x, r, w, nb, b = rand(2, 3, 8), rand(2, 3, 8), rand(8), rand(8), rand(8)
    out, res, mean, inv_std = IF.fused_layer_norm(T(x), T(w), T(nb), 1e-5, residual_alpha=0.5, begin_norm_axis=2,
                                                  bias=T(b), residual=T(r))
    h = x + b + 0.5 * r
    np.testing.assert_allclose(out.numpy(), np_ln(h, w, nb, 1e-5), rtol=1e-10)
    np.testing.assert_allclose(res.numpy(), h, rtol=1e-12)
    # paddle's "variance" output holds 1 / sqrt(var + eps) per row, float32
    assert mean.dtype == pycoll.float32 and list(mean.shape) == [6] and list(inv_std.shape) == [6]
    np.testing.assert_allclose(mean.numpy(), h.reshape(6, 8).mean(1), rtol=1e-5)
    np.testing.assert_allclose(inv_std.numpy(), 1 / np.sqrt(h.reshape(6, 8).var(1) + 1e-5), rtol=1e-5)
    out, res, _, _ = IF.fused_layer_norm(T(x), T(w), T(nb), 1e-5, begin_norm_axis=2, bias=T(b))
    np.testing.assert_allclose(out.numpy(), np_ln(x, w, nb, 1e-5), rtol=1e-10)  # bias only with a residual
    assert list(res.shape) == [0]
    # without norm_weight and norm_bias the output is the fused sum itself (paddle's rule)
    out = IF.fused_layer_norm(T(x), None, None, 1e-5, residual_alpha=0.5, begin_norm_axis=2, residual=T(r))[0]
    np.testing.assert_allclose(out.numpy(), x + 0.5 * r, rtol=1e-12)


def test_fused_layer_norm_gradients():
    x, r, w, nb = rand(2, 5), rand(2, 5), rand(5), rand(5)
    check_grads(lambda x, r, w, nb: IF.fused_layer_norm(x, w, nb, 1e-5, 2.0, 1, residual=r)[0],
                lambda x, r, w, nb: np_ln(x + 2.0 * r, w, nb, 1e-5), [x, r, w, nb])


def test_fused_norms_and_swiglu_equal_paddles_cpu_kernels():
    x = np.arange(16, dtype=np.float32).reshape(2, 8) / 5 - 1.5
    r = np.cos(np.arange(16, dtype=np.float32)).reshape(2, 8)
    w, nb = np.linspace(0.5, 2, 8).astype(np.float32), np.linspace(-1, 1, 8).astype(np.float32)
    b = np.full(8, 0.25, np.float32)
    out, _ = IF.fused_rms_norm(T(x), T(w), T(nb), 1e-6, 1, bias=T(b), residual=T(r))
    np.testing.assert_allclose(out.numpy(), [  # paddle 3.3.1, rounded to 5 places
        [-1.12928, -1.09081, -1.64449, -2.08124, -1.40617, 0.48328, 2.39518, 2.86964],
        [-0.92267, -0.90936, -0.49112, 0.68203, 2.1892, 3.11128, 2.99211, 2.49783]], atol=1e-5)
    out, _, mean, inv_std = IF.fused_layer_norm(T(x), T(w), T(nb), 1e-5, residual_alpha=0.5, begin_norm_axis=1,
                                                bias=T(b), residual=T(r))
    np.testing.assert_allclose(out.numpy(), [  # paddle 3.3.1, rounded to 5 places
        [-1.23858, -1.08991, -1.3385, -1.42489, -0.56413, 1.32471, 3.3012, 4.21351],
        [-1.56571, -1.72621, -1.40207, -0.23221, 1.34914, 2.39371, 2.43091, 2.14798]], atol=1e-5)
    np.testing.assert_allclose(mean.numpy(), [-0.45761, 1.00232], atol=1e-5)  # paddle 3.3.1
    np.testing.assert_allclose(inv_std.numpy(), [1.63195, 1.56043], atol=1e-5)  # paddle 3.3.1's "variance"
    np.testing.assert_allclose(IF.swiglu(T(x)).numpy(), [[0.19155, 0.13921, 0.08241, 0.02601],
                                                         [0.04725, 0.18957, 0.4046, 0.7016]], atol=1e-5)  # paddle


def test_fast_ln_fast_rms_norm_and_fused_rms_norm_ext():
    x, w, b = rand(2, 3, 6), rand(6), rand(6)
    y, mean, invvar = IF.fast_ln(T(x), T(w), T(b), 1e-5)
    np.testing.assert_allclose(y.numpy(), np_ln(x, w, b, 1e-5), rtol=1e-10)
    np.testing.assert_allclose(mean.numpy(), x.reshape(6, 6).mean(1), rtol=1e-5)
    np.testing.assert_allclose(invvar.numpy(), 1 / np.sqrt(x.reshape(6, 6).var(1) + 1e-5), rtol=1e-5)
    for f in (IF.fast_rms_norm, IF.fused_rms_norm_ext):
        y, invvar = f(T(x), T(w), 1e-5)
        np.testing.assert_allclose(y.numpy(), np_rms(x, 1e-5) * w, rtol=1e-10)
        assert invvar.dtype == pycoll.float32
        np.testing.assert_allclose(invvar.numpy(), 1 / np.sqrt((x * x).mean(-1).ravel() + 1e-5), rtol=1e-5)


def test_fused_norms_refuse_bad_arguments():
    x, w = T(rand(2, 8)), T(rand(8))
    with pytest.raises(ValueError, match="begin_norm_axis"):
        IF.fused_rms_norm(x, w, None, 1e-6, 2)
    with pytest.raises(ValueError, match="norm_weight must hold 8"):
        IF.fused_rms_norm(x, T(rand(7)), None, 1e-6, 1)
    with pytest.raises(ValueError, match="residual must have"):
        IF.fused_layer_norm(x, w, None, 1e-5, residual=T(rand(2, 4)))
    with pytest.raises(NotImplementedError, match="quant_scale"):
        IF.fused_rms_norm(x, w, None, 1e-6, 1, quant_scale=0.5)


# ---- fused_rotary_position_embedding --------------------------------------------------------

def np_rotate(t, neighbours):
    if neighbours:
        return np.stack([-t[..., 1::2], t[..., 0::2]], axis=-1).reshape(t.shape)
    d = t.shape[-1] // 2
    return np.concatenate([-t[..., d:], t[..., :d]], axis=-1)


def np_tables(seq, dim, base=10000.0):
    """paddle's test tables: element i of position p at angle p * base ** (-2 * (i // 2) / dim)."""
    i = np.arange(dim)
    ang = np.arange(seq)[:, None] * base ** (-(2 * (i // 2)) / dim)
    return np.sin(ang), np.cos(ang)


def test_rope_neighbours_rotate_half_and_position_ids():
    b, s, h, d = 2, 5, 3, 8
    q, k, v = rand(b, s, h, d), rand(b, s, 1, d), rand(b, s, 1, d)  # k, v with one head (MQA)
    sin, cos = np_tables(s, d)
    for neox in (True, False):
        oq, ok, ov = IF.fused_rotary_position_embedding(T(q), T(k), T(v), T(sin[None, :, None]), T(cos[None, :, None]),
                                                        use_neox_rotary_style=neox)
        for t, o in ((q, oq), (k, ok), (v, ov)):
            np.testing.assert_allclose(o.numpy(), t * cos[None, :, None] + np_rotate(t, neox) * sin[None, :, None],
                                       rtol=1e-12, atol=1e-12)
    ids = np.array([[4, 2, 0, 1, 3], [0, 0, 1, 1, 2]], np.int64)
    oq, ok, ov = IF.fused_rotary_position_embedding(T(q), None, None, T(sin), T(cos), position_ids=T(ids))
    assert ok is None and ov is None
    np.testing.assert_allclose(oq.numpy(), q * cos[ids][:, :, None] + np_rotate(q, True) * sin[ids][:, :, None],
                               rtol=1e-12, atol=1e-12)
    # time_major: [seq, batch, ...] gives the same numbers transposed
    oq_t, _, _ = IF.fused_rotary_position_embedding(T(q.transpose(1, 0, 2, 3)), None, None, T(sin), T(cos),
                                                    position_ids=T(ids), time_major=True)
    np.testing.assert_allclose(oq_t.numpy().transpose(1, 0, 2, 3), oq.numpy(), rtol=1e-12)


def test_rope_without_tables_uses_rotary_emb_base():
    q = rand(1, 6, 2, 4).astype(np.float32)
    sin, cos = np_tables(6, 4, base=500.0)
    oq, _, _ = IF.fused_rotary_position_embedding(T(q), rotary_emb_base=500.0)
    ref = q * cos[None, :, None] + np_rotate(q, True) * sin[None, :, None]
    np.testing.assert_allclose(oq.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_rope_gradient_is_the_inverse_rotation():
    q, k = rand(2, 4, 2, 6), rand(2, 4, 2, 6)
    sin, cos = np_tables(4, 6)
    tq, tk = T(q, grad=True), T(k, grad=True)
    oq, ok, _ = IF.fused_rotary_position_embedding(tq, tk, None, T(sin), T(cos), use_neox_rotary_style=False)
    g = rand(2, 4, 2, 6)
    ((oq + ok) * T(g)).sum().backward()
    # a rotation's transpose turns by the opposite angle: g * cos - rotate(g) * sin... per plane
    expected = g * cos[None, :, None] - np_rotate(g * sin[None, :, None], False)
    np.testing.assert_allclose(tq.grad.numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tk.grad.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_rope_refuses_bad_arguments():
    q = T(rand(1, 4, 2, 6))
    with pytest.raises(ValueError, match="even head_dim"):
        IF.fused_rotary_position_embedding(T(rand(1, 4, 2, 5)))
    with pytest.raises(ValueError, match="position_ids need sin and cos"):
        IF.fused_rotary_position_embedding(q, position_ids=T(np.zeros((1, 4), np.int64)))
    with pytest.raises(ValueError, match="use_neox_rotary_style=False needs"):
        IF.fused_rotary_position_embedding(q, use_neox_rotary_style=False)
    with pytest.raises(ValueError, match="sin must have shape"):
        IF.fused_rotary_position_embedding(q, sin=T(rand(4, 4)), cos=T(rand(4, 4)))
    with pytest.raises(ValueError, match="k must have"):
        IF.fused_rotary_position_embedding(q, T(rand(1, 3, 2, 6)))


# ---- activations, GEMM epilogues, dropout-add --------------------------------------------------

def np_gelu(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def test_fused_bias_act_methods():
    x, b = rand(3, 8), rand(8)
    h = x + b
    silu = lambda t: t / (1 + np.exp(-t))  # noqa: E731
    cases = {"gelu": np_gelu(h), "relu": np.maximum(h, 0), "swiglu": silu(h[:, :4]) * h[:, 4:],
             "geglu": np_gelu(h[:, :4]) * h[:, 4:]}
    for act, ref in cases.items():
        np.testing.assert_allclose(IF.fused_bias_act(T(x), T(b), act_method=act).numpy(), ref, rtol=1e-10, atol=1e-12)
    shift, smooth = rand(4), rand(4)
    out = IF.fused_bias_act(T(x), T(b), shift=T(shift), smooth=T(smooth), act_method="swiglu")
    np.testing.assert_allclose(out.numpy(), (cases["swiglu"] + shift) * smooth, rtol=1e-10)
    with pytest.raises(ValueError, match="act_method"):
        IF.fused_bias_act(T(x), act_method="tanh")
    with pytest.raises(NotImplementedError, match="dequant_scales"):
        IF.fused_bias_act(T(x), dequant_scales=T(rand(8)))
    with pytest.raises(ValueError, match="shift and smooth"):
        IF.fused_bias_act(T(x), shift=T(shift))


def test_fused_bias_act_gradient():
    x, b = rand(2, 6), rand(6)
    silu = lambda t: t / (1 + np.exp(-t))  # noqa: E731
    check_grads(lambda x, b: IF.fused_bias_act(x, b, act_method="swiglu"),
                lambda x, b: silu((x + b)[:, :3]) * (x + b)[:, 3:], [x, b])


def test_fused_matmul_bias_linear_and_activation():
    x, w, b = rand(2, 3, 4), rand(4, 5), rand(5)
    np.testing.assert_allclose(IF.fused_matmul_bias(T(x), T(w), T(b)).numpy(), x @ w + b, rtol=1e-12)
    np.testing.assert_allclose(IF.fused_matmul_bias(T(x[0].T), T(w.T), T(b), True, True).numpy(), x[0] @ w + b,
                               rtol=1e-12)
    np.testing.assert_allclose(IF.fused_linear(T(x), T(w.T.copy()), T(b), transpose_weight=True).numpy(), x @ w + b,
                               rtol=1e-12)
    h = x @ w + b
    tanh_gelu = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    np.testing.assert_allclose(IF.fused_linear_activation(T(x), T(w), T(b), activation="gelu").numpy(), tanh_gelu,
                               rtol=1e-10)
    np.testing.assert_allclose(IF.fused_linear_activation(T(x), T(w), T(b), activation="relu").numpy(),
                               np.maximum(h, 0), rtol=1e-12)
    with pytest.raises(ValueError, match="bias must have shape"):
        IF.fused_matmul_bias(T(x), T(w), T(rand(4)))


def test_fused_dropout_add_modes():
    x, y = rand(200, 10), rand(200, 10)
    np.testing.assert_allclose(IF.fused_dropout_add(T(x), T(y), p=0.0).numpy(), x + y)
    np.testing.assert_allclose(IF.fused_dropout_add(T(x), T(y), p=0.3, training=False,
                                                    mode="downscale_in_infer").numpy(), 0.7 * x + y, rtol=1e-12)
    pycoll.seed(3)
    out = IF.fused_dropout_add(T(x), T(y), p=0.5).numpy()
    kept = np.isclose(out, 2 * x + y)
    assert np.all(kept | np.isclose(out, y)) and 0.4 < kept.mean() < 0.6
    with pytest.raises(ValueError, match="p must be in"):
        IF.fused_dropout_add(T(x), T(y), p=1.5)
    with pytest.raises(ValueError, match="mode"):
        IF.fused_dropout_add(T(x), T(y), mode="x")


# ---- transformer blocks -------------------------------------------------------------------------

def np_softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_mha(x, qkv_w, qkv_b, lin_w, lin_b, mask, cache=None):
    b, s, e = x.shape
    _, nh, hd, _ = qkv_w.shape
    packed = (x @ qkv_w.reshape(3 * nh * hd, e).T + qkv_b.reshape(-1)).reshape(b, s, 3, nh, hd)
    q, k, v = packed.transpose(2, 0, 3, 1, 4)
    if cache is not None:
        k, v = np.concatenate([cache[0], k], 2), np.concatenate([cache[1], v], 2)
    w = np_softmax(q * hd ** -0.5 @ k.transpose(0, 1, 3, 2) + mask)
    return (w @ v).transpose(0, 2, 1, 3).reshape(b, s, e) @ lin_w + lin_b, k, v


def test_fused_bias_dropout_residual_layer_norm():
    x, r, b, s, lb = rand(2, 3, 8), rand(2, 3, 8), rand(8), rand(8), rand(8)
    out = IF.fused_bias_dropout_residual_layer_norm(T(x), T(r), T(b), T(s), T(lb), dropout_rate=0.2, training=False)
    np.testing.assert_allclose(out.numpy(), np_ln(r + x + b, s, lb, 1e-5), rtol=1e-10)


def test_fused_feedforward_pre_and_post_norm():
    x, w1, b1, w2, b2 = rand(2, 3, 4), rand(4, 6), rand(6), rand(6, 4), rand(4)
    s, lb = rand(4), rand(4)
    post = IF.fused_feedforward(T(x), T(w1), T(w2), T(b1), T(b2), ln2_scale=T(s), ln2_bias=T(lb), training=False)
    np.testing.assert_allclose(post.numpy(), np_ln(x + np.maximum(x @ w1 + b1, 0) @ w2 + b2, s, lb, 1e-5), rtol=1e-10)
    pre = IF.fused_feedforward(T(x), T(w1), T(w2), T(b1), T(b2), T(s), T(lb), activation="gelu", pre_layer_norm=True,
                               training=False)
    np.testing.assert_allclose(pre.numpy(), x + np_gelu(np_ln(x, s, lb, 1e-5) @ w1 + b1) @ w2 + b2, rtol=1e-10)
    with pytest.raises(NotImplementedError, match="ring_id"):
        IF.fused_feedforward(T(x), T(w1), T(w2), ring_id=0)


def test_fused_multi_head_attention_with_mask_and_cache():
    b, s, nh, hd = 2, 3, 2, 4
    e = nh * hd
    x, qkv_w, qkv_b, lin_w, lin_b = rand(b, s, e), rand(3, nh, hd, e), rand(3, nh, hd), rand(e, e), rand(e)
    ln_s, ln_b = rand(e), rand(e)
    mask = np.where(np.tril(np.ones((s, s))) > 0, 0.0, -1e9)[None, None]
    out = IF.fused_multi_head_attention(T(x), T(qkv_w), T(lin_w), ln_scale=T(ln_s), ln_bias=T(ln_b),
                                        qkv_bias=T(qkv_b), linear_bias=T(lin_b), attn_mask=T(mask), training=False)
    attn, _, _ = np_mha(x, qkv_w, qkv_b, lin_w, lin_b, mask)
    np.testing.assert_allclose(out.numpy(), np_ln(x + attn, ln_s, ln_b, 1e-5), rtol=1e-9)
    # transpose_qkv_wb: the same projection stored as [embed, 3 * embed]
    w_t = qkv_w.reshape(3 * e, e).T.copy()
    out_t = IF.fused_multi_head_attention(T(x), T(w_t), T(lin_w), ln_scale=T(ln_s), ln_bias=T(ln_b),
                                          qkv_bias=T(qkv_b.reshape(-1)), linear_bias=T(lin_b), attn_mask=T(mask),
                                          training=False, num_heads=nh, transpose_qkv_wb=True)
    np.testing.assert_allclose(out_t.numpy(), out.numpy(), rtol=1e-10)
    # a cache of 2 earlier steps, pre-layer-norm, no residual
    cache = rand(2, b, nh, 2, hd)
    out, new_cache = IF.fused_multi_head_attention(T(x), T(qkv_w), T(lin_w), True, T(ln_s), T(ln_b),
                                                   qkv_bias=T(qkv_b), linear_bias=T(lin_b), cache_kv=T(cache),
                                                   training=False, add_residual=False)
    attn, k, v = np_mha(np_ln(x, ln_s, ln_b, 1e-5), qkv_w, qkv_b, lin_w, lin_b, 0.0, cache)
    np.testing.assert_allclose(out.numpy(), attn, rtol=1e-9)
    np.testing.assert_allclose(new_cache.numpy(), np.stack([k, v]), rtol=1e-12)


def test_fused_multi_head_attention_gradient():
    x, qkv_w, lin_w = rand(1, 2, 4), rand(3, 2, 2, 4), rand(4, 4)
    check_grads(lambda x, qkv_w, lin_w: IF.fused_multi_head_attention(x, qkv_w, lin_w, training=False,
                                                                      ln_epsilon=1e-5),
                lambda x, qkv_w, lin_w: np_ln(x + np_mha(x, qkv_w, np.zeros((3, 2, 2)), lin_w, 0.0, 0.0)[0],
                                              None, None, 1e-5),
                [x, qkv_w, lin_w], tol=1e-5)


def test_variable_length_memory_efficient_attention():
    b, h, lq, lk, d = 2, 2, 4, 5, 3
    q, k, v = rand(b, h, lq, d), rand(b, h, lk, d), rand(b, h, lk, d)
    seq_lens, kv_lens = np.array([[4], [2]], np.int32), np.array([[5], [3]], np.int32)
    out = IF.variable_length_memory_efficient_attention(T(q), T(k), T(v), T(seq_lens), T(kv_lens), causal=True,
                                                        pre_cache_length=1).numpy()
    for i in range(b):
        n, m = int(seq_lens[i, 0]), int(kv_lens[i, 0])
        mask = np.where(np.arange(m)[None] > np.arange(n)[:, None] + 1, -np.inf, 0.0)
        ref = np_softmax(q[i, :, :n] @ k[i, :, :m].transpose(0, 2, 1) / np.sqrt(d) + mask) @ v[i, :, :m]
        np.testing.assert_allclose(out[i, :, :n], ref, rtol=1e-10)
        assert not out[i, :, n:].any()  # rows past seq_lens are zeros
    with pytest.raises(ValueError, match="kv_seq_lens must lie"):
        IF.variable_length_memory_efficient_attention(T(q), T(k), T(v), T(seq_lens), T(kv_lens + 1))


def test_memory_efficient_attention_with_its_biases():
    q, k, v = rand(2, 4, 3, 5), rand(2, 4, 3, 5), rand(2, 4, 3, 6)
    qh, kh, vh = (t.transpose(0, 2, 1, 3) for t in (q, k, v))

    def ref(bias, scale=5 ** -0.5):
        return (np_softmax(qh @ kh.transpose(0, 1, 3, 2) * scale + bias) @ vh).transpose(0, 2, 1, 3)
    causal = np.where(np.triu(np.ones((4, 4)), 1) > 0, -np.inf, 0.0)
    np.testing.assert_allclose(memory_efficient_attention(T(q), T(k), T(v), ab.LowerTriangularMask()).numpy(),
                               ref(causal), rtol=1e-10)
    extra = rand(1, 3, 4, 4)
    np.testing.assert_allclose(memory_efficient_attention(T(q), T(k), T(v), ab.LowerTriangularMask().add_bias(T(extra)),
                                                          scale=0.3).numpy(), ref(causal + extra, 0.3), rtol=1e-10)
    np.testing.assert_allclose(memory_efficient_attention(T(q), T(k), T(v), T(extra)).numpy(), ref(extra), rtol=1e-10)
    # paddle 3.3.1: BlockDiagonalMask.from_seqlens([2, 3], [3, 1]).make_causal().materialize([1, 1, 5, 4])
    inf = np.inf
    paddle_mask = [[0, -inf, -inf, -inf], [0, 0, -inf, -inf], [-inf, -inf, -inf, 0], [-inf, -inf, -inf, 0],
                   [-inf, -inf, -inf, 0]]
    mask = ab.BlockDiagonalMask.from_seqlens([2, 3], [3, 1]).make_causal().materialize([1, 1, 5, 4])
    np.testing.assert_array_equal(mask.numpy()[0, 0], paddle_mask)
    packed = ab.BlockDiagonalMask.from_seqlens([1, 3])
    np.testing.assert_allclose(memory_efficient_attention(T(q[:1]), T(k[:1]), T(v[:1]), packed).numpy()[0, 1:],
                               memory_efficient_attention(T(q[:1, 1:]), T(k[:1, 1:]), T(v[:1, 1:])).numpy()[0],
                               rtol=1e-10)  # the second packed sequence attends to itself alone
    tq = T(q, grad=True)
    memory_efficient_attention(tq, T(k), T(v), ab.LowerTriangularMask()).sum().backward()
    assert tq.grad is not None and np.isfinite(tq.grad.numpy()).all()


def np_multi_transformer(x, layers, pre, mask=0.0, eps=1e-5):
    """The documented layer stack (gelu FFN), written out in NumPy."""
    for p in layers:
        h = np_ln(x, p["ln_s"], p["ln_b"], eps) if pre else x
        attn, _, _ = np_mha(h, p["qkv_w"], p["qkv_b"], p["lin_w"], p["lin_b"], mask)
        x = x + attn
        if not pre:
            x = np_ln(x, p["ln_s"], p["ln_b"], eps)
        h = np_ln(x, p["ffn_ln_s"], p["ffn_ln_b"], eps) if pre else x
        x = x + np_gelu(h @ p["ffn1_w"] + p["ffn1_b"]) @ p["ffn2_w"] + p["ffn2_b"]
        if not pre:
            x = np_ln(x, p["ffn_ln_s"], p["ffn_ln_b"], eps)
    return x


def multi_transformer_params(n, e=8, heads=2, ff=6):
    return [dict(ln_s=rand(e), ln_b=rand(e), qkv_w=rand(3, heads, e // heads, e) / 2, qkv_b=rand(3, heads, e // heads),
                 lin_w=rand(e, e) / 2, lin_b=rand(e), ffn_ln_s=rand(e), ffn_ln_b=rand(e), ffn1_w=rand(e, ff) / 2,
                 ffn1_b=rand(ff), ffn2_w=rand(ff, e) / 2, ffn2_b=rand(e)) for _ in range(n)]


def run_multi_transformer(x, params, **kw):
    lists = [[T(p[k]) for p in params] for k in ("ln_s", "ln_b", "qkv_w", "qkv_b", "lin_w", "lin_b", "ffn_ln_s",
                                                  "ffn_ln_b", "ffn1_w", "ffn1_b", "ffn2_w", "ffn2_b")]
    return IF.fused_multi_transformer(x, *lists, **kw)


def test_fused_multi_transformer_pre_and_post_norm():
    params, x = multi_transformer_params(2), rand(2, 3, 8)
    causal = np.where(np.triu(np.ones((3, 3)), 1) > 0, -1e9, 0.0)[None, None]
    for pre in (True, False):
        out = run_multi_transformer(T(x), params, pre_layer_norm=pre, attn_mask=T(causal))
        np.testing.assert_allclose(out.numpy(), np_multi_transformer(x, params, pre, causal), rtol=1e-9, atol=1e-10)
    with pytest.raises(NotImplementedError, match="rotary_embs"):
        run_multi_transformer(T(x), params, rotary_embs=T(rand(2, 2, 1, 3, 4)))


def test_fused_multi_transformer_decodes_from_its_caches():
    params, x = multi_transformer_params(2), rand(1, 4, 8)
    causal = np.where(np.triu(np.ones((4, 4)), 1) > 0, -1e9, 0.0)[None, None]
    full = np_multi_transformer(x, params, True, causal)
    caches = [T(np.zeros((2, 1, 2, 6, 4))) for _ in params]
    out, caches = run_multi_transformer(T(x[:, :3]), params, cache_kvs=caches, attn_mask=T(causal[..., :3, :3]))
    np.testing.assert_allclose(out.numpy(), full[:, :3], rtol=1e-9, atol=1e-10)  # the prompt
    step, _ = run_multi_transformer(T(x[:, 3:]), params, cache_kvs=caches, time_step=T(np.array([3], np.int32)))
    np.testing.assert_allclose(step.numpy(), full[:, 3:], rtol=1e-9, atol=1e-10)  # the 4th token from the caches
    assert not caches[0].numpy()[:, :, :, 4:].any()  # positions past the step stay untouched


def test_fused_multi_transformer_layer_parameters_are_paddles():
    m = inn.FusedMultiTransformer(8, 2, 16, num_layers=2)
    # paddle 3.3.1: generated names, no biases unless their attributes are given, 12 weights
    assert [(k.split(".")[1], list(v.shape)) for k, v in m.state_dict().items()] == [
        ("w_0", [8]), ("w_1", [3, 2, 4, 8]), ("w_2", [8, 8]), ("w_3", [8]), ("w_4", [8, 16]), ("w_5", [16, 8]),
        ("w_6", [8]), ("w_7", [3, 2, 4, 8]), ("w_8", [8, 8]), ("w_9", [8]), ("w_10", [8, 16]), ("w_11", [16, 8])]
    assert m.ln_biases is None and len(m.qkv_weights) == 2
    with_bias = inn.FusedMultiTransformer(8, 2, 16, num_layers=1, ln_bias_attrs=True, qkv_bias_attrs=True,
                                          linear_bias_attrs=True, ffn_ln_bias_attrs=True, ffn1_bias_attrs=True,
                                          ffn2_bias_attrs=True, activation="swiglu")
    assert [k.split(".")[1] for k in with_bias.state_dict()] == ["w_0", "b_0", "w_1", "b_1", "w_2", "b_2", "w_3",
                                                                 "b_3", "w_4", "b_4", "w_5", "b_5"]
    assert list(with_bias.ffn1_weights[0].shape) == [8, 32]  # a gated activation doubles ffn1
    x = T(rand(1, 3, 8).astype(np.float32))
    assert list(with_bias(x).shape) == [1, 3, 8]


# ---- layers -----------------------------------------------------------------------------------

# paddle 3.3.1: state_dict keys and shapes of FusedTransformerEncoderLayer(8, 2, 16)
PADDLE_ENCODER_KEYS = [("fused_attn.qkv_weight", [3, 2, 4, 8]), ("fused_attn.qkv_bias", [3, 2, 4]),
                       ("fused_attn.linear_weight", [8, 8]), ("fused_attn.linear_bias", [8]),
                       ("fused_attn.ln_scale", [8]), ("fused_attn.ln_bias", [8]), ("ffn._linear1_weight", [8, 16]),
                       ("ffn._linear1_bias", [16]), ("ffn._linear2_weight", [16, 8]), ("ffn._linear2_bias", [8]),
                       ("ffn._ln2_scale", [8]), ("ffn._ln2_bias", [8])]


def test_layer_parameters_are_paddles():
    enc = inn.FusedTransformerEncoderLayer(8, 2, 16)
    assert [(k, list(v.shape)) for k, v in enc.state_dict().items()] == PADDLE_ENCODER_KEYS
    pre = inn.FusedMultiHeadAttention(8, 2, normalize_before=True, transpose_qkv_wb=True)
    assert [(k, list(v.shape)) for k, v in pre.state_dict().items()] == [
        ("qkv_weight", [8, 24]), ("qkv_bias", [24]), ("linear_weight", [8, 8]), ("linear_bias", [8]),
        ("pre_ln_scale", [8]), ("pre_ln_bias", [8])]  # paddle 3.3.1's
    assert list(inn.FusedLinear(8, 4, transpose_weight=True).weight.shape) == [4, 8]
    assert list(inn.FusedBiasDropoutResidualLayerNorm(8).state_dict()) == ["linear_bias", "ln_scale", "ln_bias"]
    np.testing.assert_array_equal(enc.fused_attn.ln_scale.numpy(), np.ones(8, np.float32))
    with pytest.raises(NotImplementedError, match="nranks"):
        inn.FusedFeedForward(8, 16, nranks=2)
    with pytest.raises(ValueError, match="divisible"):
        inn.FusedMultiHeadAttention(8, 3)


def test_encoder_layer_loads_a_state_dict_and_trains():
    enc = inn.FusedTransformerEncoderLayer(8, 2, 16, dropout_rate=0.0)
    state = {k: T(rand(*shape).astype(np.float32)) for k, shape in PADDLE_ENCODER_KEYS}
    enc.set_state_dict(state)
    x = rand(2, 3, 8).astype(np.float32)
    s = {k: v.numpy() for k, v in state.items()}
    attn, _, _ = np_mha(x, s["fused_attn.qkv_weight"], s["fused_attn.qkv_bias"], s["fused_attn.linear_weight"],
                        s["fused_attn.linear_bias"], 0.0)
    h = np_ln(x + attn, s["fused_attn.ln_scale"], s["fused_attn.ln_bias"], 1e-5)
    ff = np.maximum(h @ s["ffn._linear1_weight"] + s["ffn._linear1_bias"], 0) @ s["ffn._linear2_weight"]
    ref = np_ln(h + ff + s["ffn._linear2_bias"], s["ffn._ln2_scale"], s["ffn._ln2_bias"], 1e-5)
    out = enc(T(x))
    np.testing.assert_allclose(out.numpy(), ref, rtol=2e-4, atol=2e-5)
    out.sum().backward()
    assert all(p.grad is not None for p in enc.parameters())


def test_small_layers():
    lin = inn.FusedLinear(4, 3)
    x = rand(2, 4).astype(np.float32)
    np.testing.assert_allclose(lin(T(x)).numpy(), x @ lin.weight.numpy() + lin.bias.numpy(), rtol=1e-6)
    drop = inn.FusedDropoutAdd(p=0.5)
    drop.eval()
    np.testing.assert_array_equal(drop(T(x), T(x)).numpy(), 2 * x)
    assert "p=0.5" in repr(drop)
    dropout = inn.FusedDropout(p=0.5, axis=1)  # paddle's dropout_nd layer: whole columns kept or dropped
    assert isinstance(dropout, pycoll.nn.Dropout) and dropout.axis == 1
    dropout.eval()
    np.testing.assert_array_equal(dropout(T(x)).numpy(), x)
    dropout.train()
    kept = dropout(T(np.ones([6, 40], np.float32))).numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0} and all(len(set(column)) == 1 for column in kept.T)


# ---- GPU arrays -------------------------------------------------------------------------------

def _every_op_forward_and_backward():
    """Each function and layer once, outputs and gradients (float32 tensors on the current device)."""
    rng = np.random.default_rng(0)

    def x(*shape, grad=True):
        return pycoll.to_tensor(rng.standard_normal(shape).astype(np.float32), stop_gradient=not grad)
    a, r, w, b = x(2, 3, 8), x(2, 3, 8), x(8), x(8)
    q, k, qq, qb = x(2, 4, 2, 6), x(2, 4, 1, 6), x(2, 2, 4, 3), x(1, 5, 2, 4)
    sin, cos = x(4, 6, grad=False), x(4, 6, grad=False)
    ids = pycoll.to_tensor(np.array([[3, 2, 1, 0], [0, 1, 2, 3]], np.int64))
    mask = pycoll.to_tensor(np.tril(np.ones((3, 4), bool), 1)[None, None])
    layers = [inn.FusedTransformerEncoderLayer(8, 2, 16, dropout_rate=0.0), inn.FusedLinear(8, 3),
              inn.FusedMultiTransformer(8, 2, 16, num_layers=2, qkv_bias_attrs=True)]
    caches = [pycoll.zeros([2, 2, 2, 5, 4]) for _ in range(2)]
    outs = [IF.fused_rms_norm(a, w, b, 1e-6, 2, bias=b, residual=r), IF.fused_layer_norm(a, w, b, 1e-5, 0.5, 2, b, r),
            IF.fast_ln(a, w, b), IF.fast_rms_norm(a, w), IF.fused_rotary_position_embedding(q, k, None),
            IF.fused_rotary_position_embedding(q, k, None, sin, cos, ids, use_neox_rotary_style=False),
            IF.fused_rotary_position_embedding(q, None, None, sin, cos, time_major=True),
            IF.fused_bias_act(a, b), IF.fused_bias_act(a, None, shift=x(4), smooth=x(4), act_method="swiglu"),
            IF.fused_linear_activation(a, x(8, 5), x(5), activation="gelu"), IF.fused_dropout_add(a, r, p=0.0),
            IF.fused_bias_dropout_residual_layer_norm(a, r, b, w, b, training=False),
            IF.fused_feedforward(a, x(8, 6), x(6, 8), ln2_scale=w, ln2_bias=b, training=False),
            IF.fused_multi_head_attention(a, x(3, 2, 4, 8), x(8, 8), ln_scale=w, ln_bias=b, attn_mask=mask,
                                          training=False, cache_kv=x(2, 2, 2, 1, 4, grad=False)),
            IF.variable_length_memory_efficient_attention(qq, qq, qq, pycoll.to_tensor(np.array([4, 2], np.int32)),
                                                          pycoll.to_tensor(np.array([3, 4], np.int32)), causal=True),
            memory_efficient_attention(qb, qb, qb, ab.LowerTriangularMask()),
            memory_efficient_attention(qb, qb, qb, ab.BlockDiagonalMask.from_seqlens([2, 3]).make_causal()),
            layers[0](a), layers[1](a), layers[2](a, caches=caches),
            layers[2](x(2, 1, 8), caches=caches, time_step=pycoll.to_tensor(np.array([3], np.int32)))]
    flat = []

    def walk(v):
        if isinstance(v, (list, tuple)):
            for e in v:
                walk(e)
        elif v is not None:
            flat.append(v)
    walk(outs)
    sum(t.sum() for t in flat if t.dtype == pycoll.float32 and not t.stop_gradient).backward()
    return flat + [t.grad for t in (a, r, w, b, q, k, qq, qb)] + [p.grad for m in layers for p in m.parameters()]


def test_every_op_gives_the_same_on_gpu_arrays():
    """tests/strict_cupy.py in CuPy's place (it refuses what CuPy refuses, e.g. host arrays meeting
    device arrays): the same numbers on the CPU and on the stand-in's GPU, held in device arrays."""
    with strict_cupy.installed():
        results = strict_cupy.on_each_place(_every_op_forward_and_backward, seed=1)
        assert len(results["cpu"]) == len(results["gpu"]) > 70
        for want, got in zip(results["cpu"], results["gpu"]):
            assert isinstance(got.array, strict_cupy.ndarray)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
