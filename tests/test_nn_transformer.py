"""MultiHeadAttention, the Transformer layers and F.scaled_dot_product_attention.

Checked against NumPy references written here (attention, layer norm and the residual wiring of
paddle's layers, in float64) and central differences. Side by side with paddle 3.3.1 (CPU,
float64, paddle's state_dict loaded with set_state_dict): outputs and the gradients of inputs,
masks and every parameter agreed to 2e-10 relative for MultiHeadAttention (bool, int and float
masks, kdim/vdim, need_weights, Cache and StaticCache decoding), the encoder and decoder stacks
(post- and pre-norm), Transformer and scaled_dot_product_attention (bool / float masks, is_causal,
grouped-query heads, 3-D inputs, scale); with activation='gelu' to 7e-5, pycoll's erf being a
1.2e-7 approximation.
"""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F

RNG = np.random.default_rng(7)


def t64(a, grad=False):
    return pycoll.to_tensor(np.asarray(a, np.float64), stop_gradient=not grad)


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def ref_mha(m, q, k, v, mask=None):
    """NumPy MultiHeadAttention with m's weights: (out, weights)."""
    p = {name: t.numpy() for name, t in m.state_dict().items()}
    h, d = m.num_heads, m.head_dim

    def proj(x, name):
        y = x @ p[f"{name}.weight"] + p.get(f"{name}.bias", 0)
        return y.reshape(y.shape[0], y.shape[1], h, -1).transpose(0, 2, 1, 3)
    qh, kh, vh = proj(q, "q_proj"), proj(k, "k_proj"), proj(v, "v_proj")
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(d)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -1e9) if mask.dtype.kind in "biu" else mask)
    w = softmax(s)
    o = (w @ vh).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
    return o @ p["out_proj.weight"] + p["out_proj.bias"], w


def ref_ln(x, ln):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + ln.epsilon) * ln.weight.numpy() + ln.bias.numpy()


def ref_ffn(layer, x):
    h = np.maximum(x @ layer.linear1.weight.numpy() + layer.linear1.bias.numpy(), 0)
    return h @ layer.linear2.weight.numpy() + layer.linear2.bias.numpy()


def ref_block(x, norm, body, pre):
    if pre:
        return x + body(ref_ln(x, norm))
    return ref_ln(x + body(x), norm)


def ref_encoder_layer(layer, x, mask):
    pre = layer.normalize_before
    x = ref_block(x, layer.norm1, lambda y: ref_mha(layer.self_attn, y, y, y, mask)[0], pre)
    return ref_block(x, layer.norm2, lambda y: ref_ffn(layer, y), pre)


def ref_decoder_layer(layer, x, mem, tgt_mask, mem_mask):
    pre = layer.normalize_before
    x = ref_block(x, layer.norm1, lambda y: ref_mha(layer.self_attn, y, y, y, tgt_mask)[0], pre)
    x = ref_block(x, layer.norm2, lambda y: ref_mha(layer.cross_attn, y, mem, mem, mem_mask)[0], pre)
    return ref_block(x, layer.norm3, lambda y: ref_ffn(layer, y), pre)


def perturb(layer):
    """Random values in every parameter (the norms' ones and the zero biases hide mistakes)."""
    for p in layer.parameters():
        p.set_value(RNG.standard_normal(p.shape) * 0.5)
    return layer


@pytest.fixture(autouse=True)
def float64():
    old = pycoll.get_default_dtype()
    pycoll.set_default_dtype("float64")
    yield
    pycoll.set_default_dtype(old)


# ---- MultiHeadAttention --------------------------------------------------------------------------

def test_mha_parameters_and_state_dict_keys_are_paddles():
    m = nn.MultiHeadAttention(8, 2, kdim=6, vdim=5)
    shapes = {k: v.shape for k, v in m.state_dict().items()}
    assert shapes == {"q_proj.weight": [8, 8], "q_proj.bias": [8], "k_proj.weight": [6, 8], "k_proj.bias": [8],
                      "v_proj.weight": [5, 8], "v_proj.bias": [8], "out_proj.weight": [8, 8],
                      "out_proj.bias": [8]}
    assert not m.q_proj.bias.numpy().any()  # zero biases, XavierUniform weights (bounded by sqrt(6/16))
    assert np.abs(m.q_proj.weight.numpy()).max() <= np.sqrt(6 / 16)
    assert list(nn.MultiHeadAttention(4, 1, bias_attr=False).state_dict()) == [
        "q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"]


@pytest.mark.parametrize("mask_kind", [None, "bool", "int", "float"])
def test_mha_matches_numpy(mask_kind):
    m = perturb(nn.MultiHeadAttention(8, 2, kdim=6, vdim=5, need_weights=True))
    q, k, v = RNG.standard_normal((2, 3, 8)), RNG.standard_normal((2, 4, 6)), RNG.standard_normal((2, 4, 5))
    mask = None
    if mask_kind in ("bool", "int"):
        mask = RNG.random((2, 1, 3, 4)) > 0.4
        mask[..., 0] = True
        mask = mask.astype(np.int64) if mask_kind == "int" else mask
    elif mask_kind == "float":
        mask = RNG.standard_normal((3, 4))
    out, weights = m(t64(q), t64(k), t64(v), None if mask is None else pycoll.to_tensor(mask))
    ref_out, ref_w = ref_mha(m, q, k, v, mask)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights.numpy(), ref_w, rtol=1e-10, atol=1e-12)
    if mask_kind == "bool":
        assert (weights.numpy()[np.broadcast_to(~mask, ref_w.shape)] == 0).all()


def numeric(fn, a, r, eps=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = ((fn(hi) - fn(lo)) * r).sum() / (2 * eps)
    return g


def test_mha_gradients_match_central_differences():
    m = perturb(nn.MultiHeadAttention(4, 2, kdim=3))
    q, k, mask = RNG.standard_normal((1, 3, 4)), RNG.standard_normal((1, 2, 3)), RNG.standard_normal((1, 2, 3, 2))
    val = RNG.standard_normal((1, 2, 4))
    tq, tk, tm = t64(q, True), t64(k, True), t64(mask, True)
    out = m(tq, tk, t64(val), tm)
    v = m.v_proj
    r = np.cos(np.arange(out.size)).reshape(out.shape)
    (out * t64(r)).sum().backward()

    def f(qa=q, ka=k, ma=mask):
        with pycoll.no_grad():
            return m(t64(qa), t64(ka), t64(val), t64(ma)).numpy()
    np.testing.assert_allclose(tq.grad.numpy(), numeric(lambda a: f(qa=a), q, r), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tk.grad.numpy(), numeric(lambda a: f(ka=a), k, r), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tm.grad.numpy(), numeric(lambda a: f(ma=a), mask, r), rtol=1e-6, atol=1e-8)
    w0 = v.weight.numpy().copy()

    def fw(a):
        v.weight.set_value(a)
        try:
            return f()
        finally:
            v.weight.set_value(w0)
    np.testing.assert_allclose(v.weight.grad.numpy(), numeric(fw, w0, r), rtol=1e-6, atol=1e-8)


def test_mha_cache_decodes_step_by_step_as_causal_attention():
    m = perturb(nn.MultiHeadAttention(6, 3))
    x = RNG.standard_normal((2, 4, 6))
    causal = np.tril(np.ones((4, 4), bool))
    full = m(t64(x), attn_mask=pycoll.to_tensor(causal)).numpy()
    cache = m.gen_cache(t64(x))
    assert cache.k.shape == [2, 3, 0, 2]
    steps = []
    for i in range(4):
        out, cache = m(t64(x[:, i:i + 1]), cache=cache)
        steps.append(out.numpy())
    assert cache.k.shape == [2, 3, 4, 2]
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-10, atol=1e-12)
    mem = RNG.standard_normal((2, 5, 6))
    static = m.gen_cache(t64(mem), t64(mem), type=nn.MultiHeadAttention.StaticCache)
    out, again = m(t64(x), None, None, None, static)
    assert again is static
    np.testing.assert_allclose(out.numpy(), ref_mha(m, x, mem, mem)[0], rtol=1e-10)
    with pytest.raises(TypeError, match="attn_mask must be a Tensor or None, got a Cache; pass the cache as cache="):
        m(t64(x), t64(x), t64(x), m.gen_cache(t64(x)))  # the cache one place too early
    with pytest.raises(TypeError, match="a StaticCache needs value .* got value=None"):
        m.gen_cache(t64(mem), type=nn.MultiHeadAttention.StaticCache)


def test_sdpa_refuses_an_integer_attn_mask_by_name():
    q = t64(RNG.standard_normal((1, 3, 2, 4)))
    with pytest.raises(TypeError, match="attn_mask must be bool .* or of a floating dtype .* got int32"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=pycoll.to_tensor(np.ones((1, 1, 3, 3), np.int32)))


def test_mha_dropout_drops_weights_in_training_only():
    m = nn.MultiHeadAttention(4, 1, dropout=0.5, need_weights=True)
    x = t64(RNG.standard_normal((1, 6, 4)))
    pycoll.seed(3)
    _, w = m(x)
    kept = w.numpy() != 0
    assert 0.2 < kept.mean() < 0.8
    ref_w = ref_mha(m, x.numpy(), x.numpy(), x.numpy())[1]
    np.testing.assert_allclose(w.numpy()[kept], ref_w[kept] * 2, rtol=1e-10)  # the kept ones scaled by 1/(1-p)
    m.eval()
    np.testing.assert_allclose(m(x)[1].numpy(), ref_mha(m, x.numpy(), x.numpy(), x.numpy())[1], rtol=1e-10)


def test_mha_refuses_bad_arguments():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiHeadAttention(6, 4)
    with pytest.raises(ValueError, match="num_heads must be an int > 0"):
        nn.MultiHeadAttention(6, 0)
    with pytest.raises(ValueError, match="dropout"):
        nn.MultiHeadAttention(6, 2, dropout=1.5)
    with pytest.raises(TypeError, match="cache must be"):
        nn.MultiHeadAttention(4, 2)(t64(np.ones((1, 2, 4))), cache=(1, 2))


# ---- encoder / decoder ---------------------------------------------------------------------------

@pytest.mark.parametrize("normalize_before", [False, True])
def test_encoder_matches_numpy_and_builds_fresh_layers(normalize_before):
    layer = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0, normalize_before=normalize_before)
    enc = perturb(nn.TransformerEncoder(layer, 2, nn.LayerNorm(8)))
    assert enc.layers[0] is layer and enc.layers[1] is not layer
    assert len(enc.state_dict()) == 2 * 16 + 2
    x, mask = RNG.standard_normal((2, 5, 8)), RNG.random((5, 5)) > 0.3
    np.fill_diagonal(mask, True)
    tx = t64(x, True)
    out = enc(tx, pycoll.to_tensor(mask))
    ref = x
    for sub in enc.layers:
        ref = ref_encoder_layer(sub, ref, mask)
    np.testing.assert_allclose(out.numpy(), ref_ln(ref, enc.norm), rtol=1e-9, atol=1e-11)
    out.sum().backward()
    assert tx.grad is not None and all(p.grad is not None for p in enc.parameters())


def test_encoder_layer_state_dict_keys_are_paddles():
    # the keys of paddle 3.3.1's TransformerEncoderLayer(8, 2, 16), in its order
    keys = ["self_attn.q_proj.weight", "self_attn.q_proj.bias", "self_attn.k_proj.weight", "self_attn.k_proj.bias",
            "self_attn.v_proj.weight", "self_attn.v_proj.bias", "self_attn.out_proj.weight",
            "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
            "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
    assert list(nn.TransformerEncoderLayer(8, 2, 16).state_dict()) == keys
    dec = list(nn.TransformerDecoderLayer(8, 2, 16).state_dict())
    assert dec[8:16] == [k.replace("self_attn", "cross_attn") for k in keys[:8]] and dec[-2:] == ["norm3.weight",
                                                                                                  "norm3.bias"]


@pytest.mark.parametrize("normalize_before", [False, True])
def test_decoder_matches_numpy(normalize_before):
    layer = nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, normalize_before=normalize_before)
    dec = perturb(nn.TransformerDecoder(layer, 2))
    x, mem = RNG.standard_normal((2, 4, 8)), RNG.standard_normal((2, 3, 8))
    tgt_mask = np.tril(np.ones((4, 4), bool))
    mem_mask = RNG.standard_normal((2, 1, 4, 3))
    out = dec(t64(x), t64(mem), pycoll.to_tensor(tgt_mask), t64(mem_mask))
    ref = x
    for sub in dec.layers:
        ref = ref_decoder_layer(sub, ref, mem, tgt_mask, mem_mask)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-9, atol=1e-11)


def test_decoder_cache_matches_full_decoding():
    dec = perturb(nn.TransformerDecoder(nn.TransformerDecoderLayer(6, 2, 8, dropout=0.0), 2))
    x, mem = RNG.standard_normal((1, 3, 6)), RNG.standard_normal((1, 4, 6))
    full = dec(t64(x), t64(mem), pycoll.to_tensor(np.tril(np.ones((3, 3), bool)))).numpy()
    cache = dec.gen_cache(t64(mem))
    steps = []
    for i in range(3):
        out, cache = dec(t64(x[:, i:i + 1]), t64(mem), cache=cache)
        steps.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-9, atol=1e-11)
    assert len(dec.gen_cache(t64(mem), do_zip=True)) == 2


def test_transformer_is_encoder_then_decoder():
    model = perturb(nn.Transformer(8, 2, 1, 1, 12, dropout=0.0))
    src, tgt = RNG.standard_normal((2, 3, 8)), RNG.standard_normal((2, 4, 8))
    mask = model.generate_square_subsequent_mask(4)
    m = mask.numpy()
    assert np.isneginf(m[np.triu_indices(4, 1)]).all() and not m[np.tril_indices(4)].any()
    out = model(t64(src), t64(tgt), tgt_mask=mask)
    memory = ref_ln(ref_encoder_layer(model.encoder.layers[0], src, None), model.encoder.norm)
    ref = ref_ln(ref_decoder_layer(model.decoder.layers[0], tgt, memory, m, None), model.decoder.norm)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-9, atol=1e-11)


def test_transformer_layers_refuse_bad_arguments():
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(8, 2, 16, activation="nope")
    with pytest.raises(ValueError, match="dim_feedforward"):
        nn.TransformerEncoderLayer(8, 2, 0)
    with pytest.raises(ValueError, match="weight_attr"):
        nn.TransformerDecoderLayer(8, 2, 16, weight_attr=[None, None])
    with pytest.raises(TypeError, match="num_layers"):  # paddle's TypeError
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1.5)
    layer = nn.TransformerEncoderLayer(8, 2, 16, bias_attr=[False, None])
    assert "self_attn.q_proj.bias" not in layer.state_dict() and "linear1.bias" in layer.state_dict()


# ---- scaled_dot_product_attention ----------------------------------------------------------------

def ref_sdpa(q, k, v, mask=None, causal=False, scale=None):
    q, k, v = (a.transpose(0, 2, 1, 3) for a in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) * (scale or q.shape[-1] ** -0.5)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -np.inf), 1)
    return (softmax(s) @ v).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("case", ["plain", "bool", "float", "causal", "gqa", "scale"])
def test_sdpa_matches_numpy(case):
    hk = 2 if case == "gqa" else 4
    q, k, v = RNG.standard_normal((2, 5, 4, 8)), RNG.standard_normal((2, 6, hk, 8)), RNG.standard_normal((2, 6, hk, 3))
    mask = None
    if case == "bool":
        mask = RNG.random((2, 1, 5, 6)) > 0.3
        mask[..., 0] = True
    elif case == "float":
        mask = RNG.standard_normal((5, 6))
    kw = {"is_causal": case == "causal", "scale": 0.3 if case == "scale" else None}
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), None if mask is None else pycoll.to_tensor(mask),
                                         **kw)
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q, k, v, mask, kw["is_causal"], kw["scale"]), rtol=1e-10)


def test_sdpa_unbatched_and_gradients():
    q, k, v = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((4, 1, 4)), RNG.standard_normal((4, 1, 2))
    ts = [t64(a, True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ts, is_causal=True)
    np.testing.assert_allclose(out.numpy(), ref_sdpa(q[None], k[None], v[None], causal=True)[0], rtol=1e-10)
    r = np.cos(np.arange(out.size)).reshape(out.shape)
    (out * t64(r)).sum().backward()
    arrays = [q, k, v]
    for i, t in enumerate(ts):
        def f(a, i=i):
            args = [a if j == i else arrays[j] for j in range(3)]
            return ref_sdpa(*(x[None] for x in args), causal=True)[0]
        np.testing.assert_allclose(t.grad.numpy(), numeric(f, arrays[i], r), rtol=1e-6, atol=1e-8)


def test_sdpa_dropout_and_bad_arguments():
    q = t64(RNG.standard_normal((1, 6, 1, 4)))
    pycoll.seed(1)
    dropped = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    plain = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5, training=False).numpy()
    np.testing.assert_allclose(plain, ref_sdpa(q.numpy(), q.numpy(), q.numpy()), rtol=1e-10)
    assert not np.allclose(dropped, plain)
    with pytest.raises(ValueError, match="heads"):
        F.scaled_dot_product_attention(t64(np.ones((1, 2, 3, 4))), t64(np.ones((1, 2, 2, 4))),
                                       t64(np.ones((1, 2, 2, 4))))
    with pytest.raises(ValueError, match="4-D"):
        F.scaled_dot_product_attention(t64(np.ones((2, 4))), t64(np.ones((2, 4))), t64(np.ones((2, 4))))
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=2)


def test_heads_that_do_not_divide_embed_dim_raise_paddles_assertion_error_too():
    # paddle 3.3.1 asserts (AssertionError); pycoll's ValueError names both sizes: the class is both
    for build in (lambda: nn.MultiHeadAttention(10, 3), lambda: nn.TransformerEncoderLayer(10, 3, 20),
                  lambda: nn.Transformer(10, 3)):
        with pytest.raises(AssertionError, match=r"embed_dim \(10\) must be divisible by num_heads \(3\)"):
            build()
    for embed_dim, num_heads, name in ((8, 0, "num_heads"), (-8, 2, "embed_dim")):  # asserted by paddle too
        with pytest.raises(AssertionError, match=f"{name} must be an int > 0"):
            nn.MultiHeadAttention(embed_dim, num_heads)


def test_an_encoder_or_decoder_of_no_layers_applies_only_its_norm():
    # paddle 3.3.1 builds them, and forward returns norm(input)
    x = pycoll.to_tensor(np.arange(24, dtype="float32").reshape(2, 3, 4))
    norm = nn.LayerNorm(4)
    np.testing.assert_allclose(nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 0, norm)(x).numpy(),
                               norm(x).numpy())
    assert nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 0)(x) is x
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), 0)
    assert decoder(x, x) is x
    with pytest.raises(ValueError, match="num_layers must be an int >= 0, got -1"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), -1)
