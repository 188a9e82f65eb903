"""paddle 3.3.1 names a PaddleNLP-style LLM script imports: module paths, recompute_sequential /
recompute_hybrid, flash_attn_varlen_func, fused_partial_rope, the fused norms' output dtype,
paddle.amp.debugging, and (2 ranks) SPInnerOverlapLinear / MPScale."""
import importlib
import random

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from pycoll.amp import debugging as D
from pycoll.incubate.nn.functional import fused_layer_norm, fused_partial_rope, fused_rms_norm

from conftest import assert_ok, launch


def test_module_paths_hold_the_same_objects():
    from pycoll.distributed.fleet import recompute as rc
    from pycoll.distributed.fleet.recompute.recompute_hybrid import recompute_hybrid
    from pycoll.nn.functional.flash_attention import flash_attn_varlen_func, sdp_kernel
    inc = importlib.import_module("pycoll.incubate.distributed.fleet")
    assert inc.recompute_hybrid is recompute_hybrid is rc.recompute_hybrid
    assert inc.recompute_sequential is rc.recompute_sequential
    old = importlib.import_module("pycoll.distributed.fleet.layers.mpu.random")
    new = importlib.import_module("pycoll.distributed.fleet.meta_parallel.parallel_layers.random")
    assert all(getattr(new, n) is getattr(old, n) for n in ("RNGStatesTracker", "dropout", "get_rng_state_tracker",
                                                            "model_parallel_random_seed"))
    with sdp_kernel(enable_math=True):
        pass
    with pytest.raises(ValueError, match="at least one backend"):
        with sdp_kernel(False, False, False):
            pass
    assert callable(flash_attn_varlen_func)


def _loss_and_grads(segments):
    pycoll.seed(3)
    layers = nn.Sequential(*[nn.Linear(4, 4) for _ in range(4)])
    x = pycoll.to_tensor(np.random.RandomState(0).uniform(-1, 1, [3, 4]).astype("float32"))
    x.stop_gradient = False
    inc = importlib.import_module("pycoll.incubate.distributed.fleet")
    out = inc.recompute_sequential({"segments": segments}, layers, x) if segments else layers(x)
    loss = pycoll.tanh(out).sum()
    loss.backward()
    return float(loss), [x.grad.numpy()] + [p.grad.numpy() for p in layers.parameters()]


def test_recompute_sequential_with_segments_equals_no_recompute():
    plain_loss, plain_grads = _loss_and_grads(None)
    for segments in (2, 3):
        loss, grads = _loss_and_grads(segments)
        assert loss == pytest.approx(plain_loss, rel=1e-6)
        for g, want in zip(grads, plain_grads):
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)


def test_recompute_hybrid_refuses_a_ctx_that_is_not_a_dict():
    from pycoll.distributed.fleet.recompute.recompute_hybrid import recompute_hybrid
    with pytest.raises(TypeError, match="ctx must be a dict"):
        recompute_hybrid([("mp_group", None)], lambda t: t, pycoll.ones([2]))


def test_flash_attn_varlen_func_attends_within_each_sequence():
    from pycoll.nn.functional.flash_attention import flash_attn_varlen_func
    rs = np.random.RandomState(1)
    q, k, v = (rs.uniform(-1, 1, [5, 2, 4]).astype("float32") for _ in range(3))
    cu = np.array([0, 2, 5], "int32")
    for causal in (False, True):
        out, lse = flash_attn_varlen_func(pycoll.to_tensor(q), pycoll.to_tensor(k), pycoll.to_tensor(v),
                                          pycoll.to_tensor(cu), pycoll.to_tensor(cu), 3, 3, causal=causal)
        assert out.shape == [5, 2, 4] and lse.shape == [2, 5] and lse.dtype == pycoll.float32
        for a, b in zip(cu[:-1], cu[1:]):  # NumPy, one sequence at a time
            s = np.einsum("qhd,khd->hqk", q[a:b], k[a:b]) / 2.0
            if causal:
                s = np.where(np.tril(np.ones((b - a, b - a), bool)), s, -np.inf)
            np.testing.assert_allclose(lse.numpy()[:, a:b], np.log(np.exp(s).sum(-1)), rtol=1e-5)
            w = np.exp(s - s.max(-1, keepdims=True))
            w /= w.sum(-1, keepdims=True)
            np.testing.assert_allclose(out.numpy()[a:b], np.einsum("hqk,khd->qhd", w, v[a:b]), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="qv must be None"):
        flash_attn_varlen_func(*(pycoll.to_tensor(t) for t in (q, k, v, cu, cu)), 3, 3, qv=pycoll.to_tensor(q))


def _rope_by_hand(x, cos, sin):
    """paddle's test reference (test_fused_partial_rope_op.py), in NumPy."""
    pe = cos.shape[-1]
    b, s, h, d = x.shape
    t = x[..., d - pe:].reshape(b, s, h, pe // 2, 2).transpose(0, 1, 2, 4, 3).reshape(b, s, h, pe)
    rot = np.concatenate([-t[..., pe // 2:], t[..., :pe // 2]], -1)
    return np.concatenate([x[..., :d - pe], t * cos[:, :s] + rot * sin[:, :s]], -1)


def test_fused_partial_rope_values_and_gradient():
    rs = np.random.RandomState(2)
    x = rs.standard_normal([2, 3, 2, 6]).astype("float32")
    cos, sin = (rs.standard_normal([1, 4, 1, 4]).astype("float32") for _ in range(2))
    g = rs.standard_normal([2, 3, 2, 6]).astype("float32")
    xt = pycoll.to_tensor(x)
    xt.stop_gradient = False
    out = fused_partial_rope(xt, pycoll.to_tensor(cos), pycoll.to_tensor(sin))
    np.testing.assert_allclose(out.numpy(), _rope_by_hand(x, cos, sin), rtol=1e-6, atol=1e-6)
    (out * pycoll.to_tensor(g)).sum().backward()
    basis = np.eye(x.size, dtype="float32").reshape(x.size, *x.shape)  # the map is linear in x
    want = np.array([(_rope_by_hand(e, cos, sin) * g).sum() for e in basis]).reshape(x.shape)
    np.testing.assert_allclose(xt.grad.numpy(), want, rtol=1e-5, atol=1e-5)
    whole = fused_partial_rope(pycoll.to_tensor(x[..., :4]), pycoll.to_tensor(cos), pycoll.to_tensor(sin))
    np.testing.assert_allclose(whole.numpy(), _rope_by_hand(x[..., :4], cos, sin), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="must be even"):
        fused_partial_rope(pycoll.to_tensor(x), pycoll.to_tensor(cos[..., :3]), pycoll.to_tensor(sin[..., :3]))


def test_fused_norms_output_x_dtype_with_float32_weights():
    # paddle's fused_rms_norm / fused_layer_norm create out with x.dtype (their python static branch)
    x = pycoll.to_tensor(np.random.RandomState(3).uniform(-1, 1, [2, 4]).astype("float32")).astype("bfloat16")
    w, b = pycoll.ones([4]), pycoll.zeros([4])
    assert fused_rms_norm(x, w, None, 1e-6, 1)[0].dtype == pycoll.bfloat16
    assert fused_layer_norm(x, w, b, 1e-6, begin_norm_axis=1)[0].dtype == pycoll.bfloat16
    f32 = fused_rms_norm(x.astype("float32"), w, None, 1e-6, 1)[0].numpy()
    np.testing.assert_allclose(fused_rms_norm(x, w, None, 1e-6, 1)[0].astype("float32").numpy(), f32, rtol=1e-2)


def test_check_numerics_returns_and_raises_as_paddle():
    # values printed by paddle 3.3.1's CPU build for the same tensors
    x = pycoll.to_tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0, 3.0])
    stats, values = D.check_numerics(x, "my_op", "x_var", D.DebugMode.CHECK_NAN_INF)
    assert stats.numpy().tolist() == [1, 2, 1] and stats.dtype == pycoll.int64
    assert values.numpy()[:2].tolist() == [np.inf, -np.inf] and np.isnan(values.numpy()[2])
    stats, values = D.check_numerics(pycoll.to_tensor([1.0, 2.0, -4.0]), "op", "y")
    assert stats.numpy().tolist() == [0, 0, 0]
    np.testing.assert_allclose(values.numpy(), [2.0, -4.0, -0.3333333730697632])
    assert D.check_numerics(pycoll.zeros([0]), "op", "e")[1].numpy().tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match=r"There are NAN or INF \(num_nan=1, num_inf=2, num_zero=1\) in "
                                           r"\[device=cpu, op=my_op, tensor=x_var, dtype=fp32\]"):
        D.check_numerics(x, "my_op", "x_var")
    with pytest.raises(TypeError, match="floating"):
        D.check_numerics(pycoll.to_tensor([1, 2]), "op", "i")


def test_tensor_checker_raises_in_a_checked_op_until_disabled():
    a = pycoll.to_tensor([-1.0, 4.0])
    D.enable_tensor_checker(D.TensorCheckerConfig(enable=True))
    try:
        with pytest.raises(RuntimeError, match="op=sqrt"):
            pycoll.sqrt(a)
    finally:
        D.disable_tensor_checker()
    D.enable_tensor_checker(D.TensorCheckerConfig(enable=True, checked_op_list=["log"]))
    try:
        assert np.isnan(pycoll.sqrt(a).numpy()[0])  # not in the checked list
        with pytest.raises(RuntimeError, match="op=log"):
            pycoll.log(a)
    finally:
        D.disable_tensor_checker()
    assert np.isnan(pycoll.log(a).numpy()[0])
    with pytest.raises(ValueError, match="output_dir"):
        D.TensorCheckerConfig(enable=True, output_dir="/tmp/x")


def test_an_enabled_tensor_checker_config_seeds_the_generators_as_paddles(capsys):
    D.TensorCheckerConfig(enable=True)
    drawn = (pycoll.rand([3]).numpy().tolist(), np.random.rand(), random.random())
    D.TensorCheckerConfig(enable=True)
    assert (pycoll.rand([3]).numpy().tolist(), np.random.rand(), random.random()) == drawn
    assert capsys.readouterr().out == "AMP Debugging TensorCheckerConfig: seed  123\n" * 2
    D.TensorCheckerConfig(enable=False)
    assert capsys.readouterr().out == ""


def test_operator_stats_and_check_all_lines_are_warnings_shown_by_default(caplog):
    # paddle prints these reports; pycoll logs them at WARNING, which its logger shows by default
    a = pycoll.ones([2, 2])
    with caplog.at_level("WARNING", logger="pycoll"):
        with D.collect_operator_stats():
            b = a + a
            pycoll.matmul(b, b)
        D.check_numerics(pycoll.to_tensor([1.0, 0.0]), "op", "t", D.DebugMode.CHECK_ALL)
    table, line = (r.getMessage() for r in caplog.records)
    assert [r.levelname for r in caplog.records] == ["WARNING", "WARNING"]
    assert "op count: 2" in table and "matmul" in table and "add" in table
    assert line == ("[PRECISION] in [device=cpu, op=op, tensor=t, dtype=fp32], numel=2, num_zero=1, "
                    "max=1.000000e+00, min=0.000000e+00, mean=5.000000e-01")


def test_a_nan_first_value_makes_max_and_min_nan_as_paddle():
    # paddle 3.3.1 CPU: [nan, 1, 2] -> [nan, nan, nan]; [1, nan, 2] -> [2, 1, nan]
    for values, expected in (([np.nan, 1, 2], [np.nan] * 3), ([1, np.nan, 2], [2.0, 1.0, np.nan])):
        got = D.check_numerics(pycoll.to_tensor(np.array(values, np.float32)), "op", "t", D.DebugMode.CHECK_NAN_INF)[1]
        np.testing.assert_array_equal(got.numpy(), np.array(expected, np.float32))


class Scaled(pycoll.nn.Layer):
    def __init__(self, invert):
        super().__init__()
        self.invert = invert
        self.w = self.create_parameter([2, 3], default_initializer=pycoll.nn.initializer.Constant(0.5))

    @D.check_layer_numerics
    def forward(self, x):
        return (1 / x if self.invert else x) @ self.w


def test_check_layer_numerics_checks_the_forward_as_paddle(caplog):
    # every expectation below is what paddle 3.3.1's CPU build gave for the same layer
    x = pycoll.ones([2, 2])
    out = Scaled(False)(x)
    assert x.stop_gradient is False and out.stop_gradient is False
    out.sum().backward()
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 1.5, np.float32))
    with pytest.raises(RuntimeError, match=r"There are NAN or INF \(num_nan=0, num_inf=1, num_zero=0\) in "
                                           r"\[device=cpu, op=divide, tensor=, dtype=fp32\]"):
        Scaled(True)(pycoll.to_tensor([[0.0, 1.0], [1.0, 1.0]]))
    assert np.isinf((1 / pycoll.to_tensor([0.0])).numpy()[0])  # the check ended with the forward
    with pytest.raises(RuntimeError, match=r"op=enable_check_model_nan_inf, tensor=, dtype=fp32\]"):
        Scaled(False)(pycoll.to_tensor([[np.nan, 1.0], [1.0, 1.0]]))
    with pytest.raises(RuntimeError, match="No elements found in args"):
        Scaled(False)()
    with pytest.raises(RuntimeError, match="First input of this layer must be tensor"):
        Scaled(False)(np.ones(2))


def test_sp_inner_overlap_linear_and_mp_scale_on_two_ranks():
    assert_ok(launch(2, "sp_overlap_linear.py", timeout=120), expect_lines=2)
