"""paddle 3.3.1 names pycoll lacked: paddle.compat.nn's torch-style layers and functions,
paddle.distribution.constraint / variable / transform.Type and the LKJ / MultivariateNormal helpers,
and paddle.nn.layer.rnn's functional rnn / birnn and state helpers. Values are checked against NumPy
by hand, or against numbers measured on paddle 3.3.1's CPU build (said so where they are)."""
import math

import numpy as np
import pytest

import pycoll
import pycoll.compat.nn as cnn
import pycoll.compat.nn.functional as CF
from pycoll.distribution import constraint, variable
from pycoll.distribution.lkj_cholesky import mvlgamma, tril_indices, tril_matrix_to_vec, vec_to_tril_matrix
from pycoll.distribution.multivariate_normal import batch_mahalanobis, precision_to_scale_tril
from pycoll.distribution.transform import Type
from pycoll.nn.layer.rnn import ArrayWrapper, RNNBase, birnn, concat_states, rnn, split_states

RS = np.random.RandomState(0)


def t(a):
    return pycoll.to_tensor(np.asarray(a, np.float32))


def test_compat_pad_is_torch_order_from_the_last_axis():
    x = RS.randn(2, 3, 4).astype(np.float32)
    got = CF.pad(t(x), (1, 2, 0, 1), value=1.5).numpy()
    np.testing.assert_array_equal(got, np.pad(x, [(0, 0), (0, 1), (1, 2)], constant_values=1.5))
    x4 = RS.randn(1, 2, 4, 5).astype(np.float32)
    np.testing.assert_array_equal(CF.pad(t(x4), (1, 2, 2, 1), mode="reflect").numpy(),
                                  np.pad(x4, [(0, 0), (0, 0), (2, 1), (1, 2)], mode="reflect"))
    np.testing.assert_array_equal(CF.pad(t(x), (2, 1), mode="replicate").numpy(),
                                  np.pad(x, [(0, 0), (0, 0), (2, 1)], mode="edge"))
    with pytest.raises(ValueError, match="mode should be one of"):
        CF.pad(t(x), (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="len\\(pad\\) must be at most 4"):
        CF.pad(t(x), (1, 1, 1, 1, 1, 1), mode="reflect")


def test_compat_unfold_avgpool_and_linear():
    x = RS.randn(1, 2, 4, 4).astype(np.float32)
    cols = CF.unfold(t(x), 2, stride=2).numpy()  # 2x2 blocks, no overlap: column l is block l
    blocks = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 8, 4)
    np.testing.assert_allclose(cols, blocks)
    np.testing.assert_allclose(cnn.Unfold(kernel_size=2, stride=2)(t(x)).numpy(), blocks)
    x1 = np.arange(6, dtype=np.float32).reshape(1, 1, 6)
    # padding counted (count_include_pad=True): windows [0,0,1] [1,2,3] [3,4,5] / 3
    np.testing.assert_allclose(cnn.AvgPool1D(3, stride=2, padding=1)(t(x1)).numpy(), [[[1 / 3, 2, 4]]], rtol=1e-6)
    np.testing.assert_allclose(cnn.AvgPool1d(3, 2, 1, count_include_pad=False)(t(x1)).numpy(), [[[0.5, 2, 4]]])
    np.testing.assert_allclose(cnn.AvgPool2D(2, divisor_override=3)(t(x)).numpy(),
                               x.reshape(1, 2, 2, 2, 2, 2).sum((3, 5)) / 3, rtol=1e-6)
    x3 = RS.randn(1, 1, 2, 2, 2).astype(np.float32)
    np.testing.assert_allclose(cnn.AvgPool3d(2)(t(x3)).numpy().ravel(), [x3.mean()], rtol=1e-6)
    lin = cnn.Linear(5, 3)
    assert lin.weight.shape == [3, 5] and lin.bias.shape == [3]
    assert np.abs(lin.bias.numpy()).max() <= 1 / math.sqrt(5)
    xin = RS.randn(4, 5).astype(np.float32)
    np.testing.assert_allclose(lin(t(xin)).numpy(), xin @ lin.weight.numpy().T + lin.bias.numpy(), rtol=1e-5)
    with pytest.raises(TypeError):
        cnn.Linear(5, 3, bias_attr=False)


def _attention(q, k, v, mask=None, scale=None):
    s = q @ k.swapaxes(-1, -2) * (scale or 1 / math.sqrt(q.shape[-1]))
    s = s if mask is None else s + mask
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def test_compat_scaled_dot_product_attention_takes_batch_heads_seq_dim():
    q, k, v = (RS.randn(2, 2, n, 8).astype(np.float32) for n in (4, 5, 5))
    mask = RS.randn(4, 5).astype(np.float32)
    np.testing.assert_allclose(CF.scaled_dot_product_attention(t(q), t(k), t(v)).numpy(), _attention(q, k, v),
                               atol=1e-5)
    np.testing.assert_allclose(CF.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(mask), scale=0.3).numpy(),
                               _attention(q, k, v, mask, 0.3), atol=1e-5)
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal"):
        CF.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(mask), is_causal=True)


def test_compat_multihead_attention_matches_numpy():
    m = cnn.MultiheadAttention(8, 2, kdim=6, vdim=5, batch_first=True, add_zero_attn=True)
    m.eval()
    q, k, v = RS.randn(3, 4, 8), RS.randn(3, 6, 6), RS.randn(3, 6, 5)
    padding = np.zeros((3, 6), bool)
    padding[0, -2:] = True
    out, w = m(t(q), t(k), t(v), key_padding_mask=pycoll.to_tensor(padding), average_attn_weights=False)
    P = {n: p.numpy().astype(np.float64) for n, p in m.named_parameters()}

    def heads(a):
        return a.reshape(3, a.shape[1], 2, 4).transpose(0, 2, 1, 3)
    qh = heads(q @ P["q_proj_weight"].T + P["q_proj_bias"])
    kh = np.concatenate([heads(k @ P["k_proj_weight"].T + P["k_proj_bias"]), np.zeros((3, 2, 1, 4))], 2)
    vh = np.concatenate([heads(v @ P["v_proj_weight"].T + P["v_proj_bias"]), np.zeros((3, 2, 1, 4))], 2)
    mask = np.where(np.concatenate([padding, np.zeros((3, 1), bool)], 1), np.finfo(np.float32).min, 0)
    ctx = _attention(qh, kh, vh, mask[:, None, None, :])
    ref = ctx.transpose(0, 2, 1, 3).reshape(3, 4, 8) @ P["out_proj.weight"].T + P["out_proj.bias"]
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-5)
    assert w.shape == [3, 2, 4, 7] and np.all(w.numpy()[0, :, :, 4:6] == 0)
    fast, none = m(t(q), t(k), t(v), key_padding_mask=pycoll.to_tensor(padding), need_weights=False)
    assert none is None
    np.testing.assert_allclose(fast.numpy(), ref, atol=1e-5)


def test_distribution_constraints_and_variables():
    x = pycoll.to_tensor([-1.0, 0.5, 2.0])
    assert constraint.Range(0.0, 1.0)(x).numpy().tolist() == [False, True, False]
    assert constraint.positive.check(x).numpy().tolist() == [False, True, True]
    assert constraint.real(pycoll.to_tensor([1.0, float("nan")])).numpy().tolist() == [True, False]
    assert constraint.simplex(pycoll.to_tensor([[0.2, 0.8], [0.5, 0.6]])).numpy().tolist() == [True, False]
    ind = variable.Independent(variable.real, 1)
    assert (ind.event_rank, ind.is_discrete) == (1, False)
    assert ind.constraint(pycoll.to_tensor([[1.0, float("nan")], [1.0, 2.0]])).numpy().tolist() == [False, True]
    st = variable.Stack([variable.real, variable.positive], 1)
    assert st.constraint(pycoll.to_tensor([[1.0, -1.0], [1.0, 2.0]])).numpy().tolist() == [[True, False],
                                                                                             [True, True]]
    assert variable.Positive(2).event_rank == 2
    assert Type.is_injective(Type.BIJECTION) and not Type.is_injective(Type.SURJECTION)
    assert [ty.value for ty in Type] == ["bijection", "injection", "surjection", "other"]


def test_distribution_matrix_helpers_equal_paddle():
    # paddle 3.3.1 CPU: mvlgamma([2.5, 3.0], 3) (float64)
    np.testing.assert_allclose(mvlgamma(pycoll.to_tensor([2.5, 3.0], "float64"), 3).numpy(),
                               [1.88099546, 2.69492488], rtol=1e-8)
    rows, cols = tril_indices(3, -1)
    assert rows.numpy().tolist() == [1, 2, 2] and cols.numpy().tolist() == [0, 0, 1]
    m = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    np.testing.assert_array_equal(tril_matrix_to_vec(t(m), -1).numpy(), [[3, 6, 7], [12, 15, 16]])
    mats = vec_to_tril_matrix(t(np.arange(1, 13)), 3, 3, 12, (2,)).numpy()
    assert mats.shape == (2, 2, 3, 3)
    np.testing.assert_array_equal(mats[1, 0], [[0, 0, 0], [7, 0, 0], [8, 9, 0]])
    P = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    L = precision_to_scale_tril(pycoll.to_tensor(P))
    np.testing.assert_allclose(L.numpy() @ L.numpy().T, np.linalg.inv(P), rtol=1e-10)
    x = np.arange(12.0).reshape(4, 3) / 3 - 1
    # paddle 3.3.1 CPU: batch_mahalanobis(precision_to_scale_tril(P), x)
    np.testing.assert_allclose(batch_mahalanobis(L, pycoll.to_tensor(x)).numpy(),
                               [7.31111111, 1.31111111, 20.11111111, 63.71111111], rtol=1e-8)


def test_nn_layer_rnn_functional_forms_and_state_helpers():
    cell = pycoll.nn.SimpleRNNCell(3, 4)
    x = RS.randn(2, 5, 3).astype(np.float32)
    out, h = rnn(cell, t(x), sequence_length=pycoll.to_tensor([5, 3]))
    w = {n: p.numpy() for n, p in cell.named_parameters()}
    state, outs = np.zeros((2, 4), np.float32), []
    for step in range(5):
        new = np.tanh(x[:, step] @ w["weight_ih"].T + w["bias_ih"] + state @ w["weight_hh"].T + w["bias_hh"])
        outs.append(new)
        state = np.where(np.array([[True], [step < 3]]), new, state)
    np.testing.assert_allclose(out.numpy(), np.stack(outs, 1), atol=1e-5)
    np.testing.assert_allclose(h.numpy(), state, atol=1e-5)
    bw = pycoll.nn.SimpleRNNCell(3, 4)
    both, (h_fw, h_bw) = birnn(cell, bw, t(x))
    rev, h_rev = rnn(bw, t(x), is_reverse=True)
    np.testing.assert_allclose(both.numpy()[..., 4:], rev.numpy())
    np.testing.assert_allclose(h_bw.numpy(), h_rev.numpy())
    packed = (t(RS.randn(4, 2, 3)), t(RS.randn(4, 2, 3)))  # LSTM-style (h, c), 2 layers x 2 directions
    layers = split_states(packed, bidirectional=True, state_components=2)
    assert len(layers) == 2 and len(layers[1]) == 2
    np.testing.assert_array_equal(layers[1][0][1].numpy(), packed[1].numpy()[2])
    again = concat_states(layers, bidirectional=True, state_components=2)
    np.testing.assert_array_equal(again[0].numpy(), packed[0].numpy())
    assert ArrayWrapper(t([1.0])).append(t([2.0]))[1].numpy().tolist() == [2.0]
    assert issubclass(pycoll.nn.LSTM, RNNBase)
    with pytest.raises(ValueError, match="birnn: initial_states must be a list/tuple of 2"):
        birnn(cell, bw, t(x), [None])
