"""tests/test_strict_device.py's CPU-against-"GPU" sweep over the tensor/nn code paths rewritten
today: the strided-slice pools (max with masks and ties/NaN, avg exclusive or not, ceil_mode,
padding, channel-last), batch_norm's float32 and low-precision paths, the sigmoid family, both
gelus and erf, one_hot, topk/kthvalue with ties and NaNs, linear on 3-D inputs with broadcast
biases, integer floor_divide's zero refusal, sparse embedding rows through lazy Adam,
check_numerics, paddle.compat's max/min/sort/median, fused_partial_rope,
flash_attn_varlen_func and roi_pool/psroi_pool.

Each case runs on the CPU and on tests/strict_cupy.py's "GPU" from the same seed; any refusal
by the stand-in or any difference between the runs is a GPU bug in pycoll."""
from __future__ import annotations

import numpy as np
import pytest

import pycoll
import pycoll.compat as compat
import pycoll.nn as nn
import pycoll.nn.functional as F
import pycoll.optimizer as opt
from pycoll.amp import debugging
from pycoll.incubate.nn.functional import fused_partial_rope
from pycoll.vision.ops import psroi_pool, roi_pool

import test_strict_device
from test_strict_device import _grads, _x, same_on_both

flash_attn_varlen_func = F.flash_attention.flash_attn_varlen_func
cupy = test_strict_device.cupy  # its module fixture: the stand-in in CuPy's place for this module too


def _tied(*shape: int, nan: bool = False) -> pycoll.Tensor:
    """A float32 tensor of small integers (ties in most windows and rows), with a NaN in a few
    places when ``nan``, that takes a gradient."""
    a = np.random.randint(-2, 3, shape).astype(np.float32)
    if nan:
        a.reshape(-1)[::7] = np.nan
    return pycoll.to_tensor(a, stop_gradient=False)


def _backward(outs: list, *inputs: pycoll.Tensor) -> list:
    """Gradients of inputs for a weighted sum of ``outs`` (distinct weights per output)."""
    sum(((o * (i + 1)).sum() for i, o in enumerate(outs))).backward()
    return _grads(*inputs)


# ---- pools ---------------------------------------------------------------------------------------
def case_max_pools():
    x1, x2, x3 = _tied(2, 3, 9), _tied(2, 3, 7, 6, nan=True), _tied(1, 2, 5, 5, 4)
    nhwc = _tied(2, 6, 5, 3)
    o1, m1 = F.max_pool1d(x1, 3, 2, padding=1, return_mask=True, ceil_mode=True)
    o2, m2 = F.max_pool2d(x2, 3, 2, padding=[1, 0], return_mask=True)
    o2c = F.max_pool2d(x2, [2, 3], [2, 2], padding=[[0, 0], [0, 0], [1, 0], [0, 1]], ceil_mode=True)
    o3, m3 = F.max_pool3d(x3, 2, 1, padding=1, return_mask=True)
    oh = F.max_pool2d(nhwc, 3, 2, padding=1, data_format="NHWC")
    same = F.max_pool3d(x3, [2, 3, 2], 2, padding="SAME", data_format="NCDHW")
    outs = [o1, o2, o2c, o3, oh, same]
    return {"outs": outs, "masks": [m1, m2, m3], "grads": _backward(outs, x1, x2, x3, nhwc)}


def case_avg_pools():
    x1, x2, x3, nhwc = _x(2, 3, 9), _x(2, 3, 7, 6), _x(1, 2, 5, 5, 4), _x(2, 6, 5, 3)
    outs = [F.avg_pool1d(x1, 3, 2, padding=1, exclusive=False, ceil_mode=True),
            F.avg_pool2d(x2, 3, 2, padding=1, ceil_mode=True),
            F.avg_pool2d(x2, [2, 3], 1, padding=[0, 1], divisor_override=4),
            F.avg_pool3d(x3, 2, 2, padding=1, exclusive=True),
            F.avg_pool2d(nhwc, 2, 2, padding=1, ceil_mode=True, data_format="NHWC"),
            F.avg_pool2d(x2, 3, 2, padding="SAME", exclusive=False)]
    x16 = pycoll.to_tensor(np.random.standard_normal((2, 3, 7, 6)).astype(np.float16), stop_gradient=False)
    half = [F.avg_pool2d(x16, 2, 2), F.max_pool2d(x16, 3, 2, padding=1)]
    return {"outs": outs, "half": half, "grads": _backward(outs, x1, x2, x3, nhwc),
            "half_grad": _backward(half, x16)}


# ---- batch_norm ----------------------------------------------------------------------------------
def case_batch_norm():
    out = {}
    for dtype in ("float32", "float16"):
        x = pycoll.to_tensor((np.random.standard_normal((4, 3, 5, 2)) * 3 + 20).astype(dtype), stop_gradient=False)
        w = pycoll.to_tensor(np.random.uniform(0.5, 2, 3).astype(dtype), stop_gradient=False)
        b = pycoll.to_tensor(np.random.standard_normal(3).astype(dtype), stop_gradient=False)
        mean, var = pycoll.zeros([3], dtype="float32"), pycoll.ones([3], dtype="float32")
        train = F.batch_norm(x, mean, var, w, b, training=True, momentum=0.8)
        nhwc = F.batch_norm(x.transpose([0, 2, 3, 1]), mean, var, w, b, training=True, data_format="NHWC")
        (train.astype("float32") * 2 + nhwc.astype("float32").transpose([0, 3, 1, 2])).sum().backward()
        grads = _grads(x, w, b)
        x.clear_gradient(), w.clear_gradient(), b.clear_gradient()
        evaluated = F.batch_norm(x, mean, var, w, b, training=False)
        batch_at_test = F.batch_norm(x, mean, var, w, b, training=False, use_global_stats=False)
        global_in_training = F.batch_norm(x, mean, var, None, None, training=True, use_global_stats=True)
        tests = [evaluated, batch_at_test, global_in_training]
        out[dtype] = {"train": train, "nhwc": nhwc, "tests": tests, "running": [mean, var], "grads": grads,
                      "test_grads": _backward([t.astype("float32") for t in tests], x, w, b)}
    return out


# ---- elementwise families --------------------------------------------------------------------------
def case_sigmoid_gelu_erf():
    x, label = _x(3, 5, scale=4.0), pycoll.to_tensor(np.random.uniform(0, 1, (3, 5)).astype(np.float32))
    big = pycoll.to_tensor(np.array([-100.0, -30.0, 0.0, 30.0, 100.0], np.float32), stop_gradient=False)
    outs = [F.sigmoid(x), F.silu(x), F.swish(x), F.gelu(x), F.gelu(x, approximate=True), pycoll.erf(x),
            F.binary_cross_entropy_with_logits(x, label, reduction="none"),
            F.binary_cross_entropy_with_logits(x, label, pos_weight=pycoll.to_tensor(np.full(5, 2.0, np.float32))),
            F.sigmoid(big), F.silu(big)]
    grads = _backward(outs, x, big)
    return {"outs": outs, "grads": grads, "erf64": pycoll.erf(pycoll.to_tensor(np.linspace(-4, 4, 17)))}


def case_one_hot_topk_kthvalue():
    ids = pycoll.to_tensor(np.array([[0, 3, 2], [1, 1, 4]], np.int64))
    x = _tied(4, 6, nan=True)
    nans = pycoll.to_tensor(np.array([[np.nan, 1, np.nan, 2, np.nan], [3, np.nan, 3, 0, 3]], np.float32),
                            stop_gradient=False)  # a NaN k-th value, and ties beyond it
    values, idx = pycoll.topk(x, 3, axis=1)
    small, sidx = pycoll.topk(x, 2, axis=0, largest=False)
    kv, ki = pycoll.kthvalue(x, 2, axis=1)
    kv0, ki0 = pycoll.kthvalue(x, 3, axis=0, keepdim=True)
    ints = pycoll.kthvalue(pycoll.to_tensor(np.array([[3, 1, 1, 2]], np.int32)), 2)
    nan_top, nan_kth = pycoll.topk(nans, 2), pycoll.kthvalue(nans, 4)
    nan_low = pycoll.topk(nans, 4, largest=False)
    return {"one_hot": [F.one_hot(ids, 5), F.one_hot(ids, -1)], "topk": [values, idx, small, sidx],
            "kth": [kv, ki, kv0, ki0], "ints": list(ints), "nan": [nan_top, nan_kth, nan_low],
            "grads": _backward([values, small, kv, kv0], x),
            "nan_grads": _backward([nan_top[0], nan_kth[0], nan_low[0]], nans)}


def case_linear_3d():
    x, w = _x(2, 3, 4), _x(4, 5)
    biases = [_x(5), _x(1), _x(1, 5), _x(3, 5)]
    outs = [F.linear(x, w, b) for b in biases] + [pycoll.matmul(x, w), pycoll.matmul(x, x, transpose_y=True)]
    x2, wide = _x(3, 4), _x(2, 1, 5)
    outs.append(F.linear(x2, w, wide))  # a bias that grows the output: [3, 5] + [2, 1, 5]
    layer = nn.Linear(4, 5)
    outs.append(layer(x))
    return {"outs": outs, "grads": _backward(outs, x, w, x2, wide, *biases) + [layer.weight.grad, layer.bias.grad]}


def case_floor_divide():
    x = pycoll.to_tensor(np.array([7, -7, 9], np.int64))
    y = pycoll.to_tensor(np.array([2, 3, -4], np.int64))
    with pytest.raises(ValueError, match="integer division by zero"):
        pycoll.floor_divide(x, pycoll.to_tensor(np.array([2, 0, 1], np.int64)))
    with pytest.raises(ValueError, match="integer division by zero"):
        x // 0
    return {"floor_divide": pycoll.floor_divide(x, y), "mod": x % y,
            "float_by_zero": pycoll.floor_divide(pycoll.to_tensor([1.0, -1.0]), pycoll.to_tensor([2.0, 4.0]))}


def case_sparse_embedding_lazy_adam():
    emb = nn.Embedding(10, 4, sparse=True)
    adam = opt.Adam(learning_rate=0.1, parameters=emb.parameters(), lazy_mode=True)
    rows = []
    for ids in ([[1, 3], [3, 7]], [[0, 0], [9, 1]], [[2, 3], [3, 3]]):
        (emb(pycoll.to_tensor(np.array(ids, np.int64))) ** 2).sum().backward()
        emb(pycoll.to_tensor(np.array([ids[0][0] + 4], np.int64))).sum().backward()  # a second record
        adam.step()
        adam.clear_grad()
        rows.append(emb.weight.detach().clone())
    dense = nn.Embedding(10, 4, padding_idx=-1, sparse=True)
    plain = opt.Adam(learning_rate=0.1, parameters=dense.parameters())
    looked_up = dense(pycoll.to_tensor(np.array([1, 1, 9, 5], np.int64)))
    looked_up.sum().backward()
    scaled = F.embedding(pycoll.to_tensor(np.array([2, 2, 4], np.int64)), _x(6, 3), sparse=True,
                         scale_grad_by_freq=True)
    plain.step()
    return {"lazy": rows, "dense": [looked_up, dense.weight], "scaled": scaled}


def case_check_numerics():
    good = pycoll.to_tensor(np.array([0.0, 1.5, -2.0, 0.0], np.float32))
    bad = pycoll.to_tensor(np.array([np.nan, 1.0, np.inf, 0.0], np.float16))
    with pytest.raises(RuntimeError, match="num_nan=1, num_inf=1"):
        debugging.check_numerics(bad, "op", "bad")
    return {"good": list(debugging.check_numerics(good, "op", "good")),
            "bad": list(debugging.check_numerics(bad, "op", "bad", debugging.DebugMode.CHECK_NAN_INF)),
            "f64": list(debugging.check_numerics(pycoll.to_tensor([1.0, 3.0]), "op", "f64")),
            "all": list(debugging.check_numerics(good, "op", "all", debugging.DebugMode.CHECK_ALL)),
            "empty": list(debugging.check_numerics(pycoll.zeros([0]), "op", "empty"))}


def case_compat():
    x = _tied(3, 5, nan=True)
    y = _tied(3, 5)
    outs = {"max": compat.max(x, dim=1), "min": compat.min(y, 0, keepdim=True), "max_all": compat.max(y),
            "max_pair": compat.max(x, y), "sort": compat.sort(y, dim=1, descending=True, stable=True),
            "median": compat.median(y, dim=1), "median_all": compat.median(y)}
    (outs["max"].values.sum() + outs["min"].values.sum() + outs["sort"].values.sum()
     + outs["median"].values.sum()).backward()
    return {**{k: list(v) if isinstance(v, tuple) else v for k, v in outs.items()}, "grads": _grads(x, y)}


# ---- fused and vision ops --------------------------------------------------------------------------
def case_fused_partial_rope():
    x = _x(2, 3, 2, 6)
    angle = np.random.uniform(0, 3, (1, 4, 1, 4)).astype(np.float32)
    cos, sin = pycoll.to_tensor(np.cos(angle)), pycoll.to_tensor(np.sin(angle))
    out = fused_partial_rope(x, cos, sin)
    return {"out": out, "grads": _backward([out], x)}


def case_flash_attn_varlen():
    q, k, v = _x(5, 2, 4), _x(6, 2, 4), _x(6, 2, 4)
    cu_q = pycoll.to_tensor(np.array([0, 2, 5], np.int32))
    cu_k = pycoll.to_tensor(np.array([0, 3, 6], np.int32))
    out, lse = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 3, 3)
    causal, _ = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 3, 3, causal=True, softmax_scale=0.3)
    return {"out": [out, causal], "lse": lse, "grads": _backward([out, causal], q, k, v)}


def case_roi_pools():
    x = _x(2, 8, 6, 7)
    boxes = pycoll.to_tensor(np.array([[0, 0, 4, 3], [1.2, 0.6, 6, 5], [2, 1, 3, 2]], np.float32))
    num = pycoll.to_tensor(np.array([2, 1], np.int32))
    pooled = roi_pool(x, boxes, num, 2, spatial_scale=1.0)
    ps = psroi_pool(x, boxes, num, 2, spatial_scale=0.5)
    return {"roi": pooled, "psroi": ps, "grads": _backward([pooled, ps], x)}


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_equals_cpu_today(name):
    same_on_both(CASES[name])


def _grown_linear() -> tuple:
    """(x, weight, bias, linear(x, weight, bias)) where the bias [2, 1, 2] grows x [2, 3] @ weight
    [3, 2] to a [2, 2, 2] output (paddle takes it), on the current device."""
    x = pycoll.to_tensor((np.arange(6).reshape(2, 3) - 2).astype(np.float32), stop_gradient=False)
    w = pycoll.to_tensor((np.arange(6).reshape(3, 2) % 4 - 1).astype(np.float32), stop_gradient=False)
    b = pycoll.to_tensor(np.array([[[1, 2]], [[3, -1]]], np.float32), stop_gradient=False)
    return x, w, b, F.linear(x, w, b)


@pytest.mark.parametrize("place", ["cpu", "gpu"], ids=["host", "stand_in_device"])  # an id "gpu" is the skip marker's
def test_linear_bias_that_grows_the_output_sends_summed_gradients(place):
    """The gradients of x and weight sum over the axis the bias added: their backward got the
    grown gradient and NumPy refused the product (on both places). Values measured on paddle 3.3.1."""
    pycoll.set_device(place)
    try:
        x, w, b, out = _grown_linear()
        (out * pycoll.arange(8, dtype="float32").reshape([2, 2, 2])).sum().backward()
        assert out.place == ("gpu:0" if place == "gpu" else "cpu")
        np.testing.assert_array_equal(out.numpy(), [[[2, 0], [-1, 6]], [[4, -3], [1, 3]]])
        np.testing.assert_array_equal(x.grad.numpy(), [[-4, 16, -4], [-8, 28, -8]])
        np.testing.assert_array_equal(w.grad.numpy(), [[0, -2], [12, 14], [24, 30]])
        np.testing.assert_array_equal(b.grad.numpy(), [[[2, 4]], [[10, 12]]])
    finally:
        pycoll.set_device("gpu")


@pytest.mark.parametrize("place", ["cpu", "gpu"], ids=["host", "stand_in_device"])
def test_linear_create_graph_gives_each_operand_its_own_shape(place):
    """create_graph through linear (pycoll._higher_order's rule): the bias gradient was summed to
    [out_features] whatever the bias's shape ([2, 1, 2] here; [3, 5] and [1] alike), and a bias
    that grew the output broke the weight's product. Values measured on paddle 3.3.1."""
    pycoll.set_device(place)
    try:
        x, w, b, out = _grown_linear()
        gx, gw, gb = pycoll.grad((out * out).sum(), [x, w, b], create_graph=True)
        np.testing.assert_array_equal(gx.numpy(), [[-12, 0, -12], [0, 36, 0]])
        np.testing.assert_array_equal(gw.numpy(), [[-24, 30], [-12, 42], [0, 54]])
        np.testing.assert_array_equal(gb.numpy(), [[[2, 12]], [[10, 0]]])
        (gx.sum() + gw.sum() + gb.sum()).backward()
        np.testing.assert_array_equal(x.grad.numpy(), [[18, -6, 18], [-6, 114, -6]])
        np.testing.assert_array_equal(w.grad.numpy(), [[60, 48], [72, 84], [84, 120]])
        np.testing.assert_array_equal(b.grad.numpy(), [[[6, 18]], [[6, 18]]])
    finally:
        pycoll.set_device("gpu")
