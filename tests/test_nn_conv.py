"""Convolution, pooling, pad and batch norm (pycoll.nn.conv, pooling, norm and their functionals).

Checked against NumPy references written here as plain loops over output positions (in float64,
following paddle's kernels' window rules), against central differences, and where paddle 3.3.1
has a rule no formula would guess, against values read off paddle 3.3.1 (CPU) on the same input
(said so at each). Every layer here was also run side by side with paddle 3.3.1 on random float32
inputs with identical weights: forward outputs, input and parameter gradients, running statistics
over three training steps and eval outputs agreed to 5e-7 relative.
"""
import math

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F

RNG = np.random.default_rng(2024)


def rand(*shape):
    return RNG.standard_normal(shape)


def f32(*values):
    return np.array(values, np.float32)


def backward_of(fn, *arrays, r=None):
    """fn's output, the gradients of sum(out * r) for the arrays (as float64 Tensors), and r
    (a fixed pattern unless given)."""
    ts = [pycoll.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    r = np.cos(np.arange(out.size)).reshape(out.shape) if r is None else r
    (out * pycoll.to_tensor(r)).sum().backward()
    return out.numpy(), [t.grad.numpy() for t in ts], r


def numeric_grad(fn, a, r, eps=1e-6):
    """d sum(fn(a) * r) / da by central differences (fn on float64 arrays, no graph)."""
    grad = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += eps
        lo[idx] -= eps
        with pycoll.no_grad():
            grad[idx] = ((fn(pycoll.to_tensor(hi)).numpy() - fn(pycoll.to_tensor(lo)).numpy()) * r).sum() / (2 * eps)
    return grad


# ---- convolution ---------------------------------------------------------------------------------

def ref_conv2d(x, w, b, stride, pads, dilation, groups):
    """(out, vjp) of a 2-D convolution, window by window."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    og = o // groups

    def cells(i, j, oc):
        g = oc // og
        return (slice(None), slice(g * cg, (g + 1) * cg), slice(i * sh, i * sh + dh * (kh - 1) + 1, dh),
                slice(j * sw, j * sw + dw * (kw - 1) + 1, dw))

    positions = [(i, j, oc) for i in range(oh) for j in range(ow) for oc in range(o)]
    out = np.zeros((n, o, oh, ow))
    for i, j, oc in positions:
        out[:, oc, i, j] = (xp[cells(i, j, oc)] * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]

    def vjp(g):
        gx, gw = np.zeros_like(xp), np.zeros_like(w)
        for i, j, oc in positions:
            gx[cells(i, j, oc)] += g[:, oc, i, j, None, None, None] * w[oc]
            gw[oc] += (g[:, oc, i, j, None, None, None] * xp[cells(i, j, oc)]).sum(axis=0)
        (t, _), (l, _) = pads
        return gx[:, :, t:t + h, l:l + wd], gw, g.sum(axis=(0, 2, 3))
    return out, vjp


CONV_CASES = {  # name: (kwargs of F.conv2d, (before, after) pads the reference uses)
    "plain": (dict(), [(0, 0), (0, 0)]),
    "stride_pad": (dict(stride=2, padding=1), [(1, 1), (1, 1)]),
    "pad_hw": (dict(padding=[1, 2]), [(1, 1), (2, 2)]),
    "pad_4": (dict(padding=[1, 0, 2, 1], stride=[2, 1]), [(1, 0), (2, 1)]),
    "pad_pairs": (dict(padding=[[0, 0], [0, 0], [2, 1], [0, 1]]), [(2, 1), (0, 1)]),
    "valid": (dict(padding="VALID", stride=[1, 2]), [(0, 0), (0, 0)]),
    "dilation": (dict(dilation=[2, 1], padding=2), [(2, 2), (2, 2)]),
    "groups": (dict(groups=2, padding=1), [(1, 1), (1, 1)]),
    # SAME: ceil(size / stride) outputs, the odd cell of padding after (7 rows: 1/1, 8 columns: 0/1)
    "same": (dict(padding="SAME", stride=2), [(1, 1), (0, 1)]),
}


@pytest.mark.parametrize("name", sorted(CONV_CASES))
@pytest.mark.parametrize("channel_last", [False, True])
def test_conv2d_matches_the_window_loop(name, channel_last):
    kwargs, pads = CONV_CASES[name]
    groups = kwargs.get("groups", 1)
    x, w, b = rand(2, 4, 7, 8), rand(6, 4 // groups, 3, 3), rand(6)
    stride = kwargs.get("stride", 1)
    stride = [stride] * 2 if isinstance(stride, int) else stride
    dil = kwargs.get("dilation", 1)
    dil = [dil] * 2 if isinstance(dil, int) else dil
    want, vjp = ref_conv2d(x, w, b, stride, pads, dil, groups)
    if channel_last:
        if name == "pad_pairs":
            kwargs = dict(padding=[[0, 0], [2, 1], [0, 1], [0, 0]])
        got, (gx, gw, gb), r = backward_of(
            lambda x, w, b: F.conv2d(x, w, b, data_format="NHWC", **kwargs), x.transpose(0, 2, 3, 1), w, b)
        got, gx, r = got.transpose(0, 3, 1, 2), gx.transpose(0, 3, 1, 2), r.transpose(0, 3, 1, 2)
    else:
        got, (gx, gw, gb), r = backward_of(lambda x, w, b: F.conv2d(x, w, b, **kwargs), x, w, b)
    np.testing.assert_allclose(got, want, atol=1e-12)
    for mine, ref in zip((gx, gw, gb), vjp(r)):
        np.testing.assert_allclose(mine, ref, atol=1e-12)


def test_conv2d_same_ignores_dilation_as_paddle():
    # paddle 3.3.1 gives exactly this: 'SAME' pads 1/1 for the 3x3 kernel and sets dilation to 1
    x = pycoll.to_tensor(np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5))
    out = F.conv2d(x, pycoll.ones([1, 1, 3, 3]), padding="SAME", dilation=2).numpy()
    np.testing.assert_array_equal(out[0, 0, :2], [[12, 21, 27, 33, 24], [33, 54, 63, 72, 51]])


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(padding=[2, 1]),
                                    dict(dilation=2, groups=2, padding=2), dict(padding="SAME", stride=3)])
def test_conv1d_is_conv2d_over_a_row(kwargs):
    x, w, b = rand(3, 4, 11), rand(6, 4 // kwargs.get("groups", 1), 3), rand(6)
    got, grads, r = backward_of(lambda x, w, b: F.conv1d(x, w, b, **kwargs), x, w, b)
    two = dict(kwargs)
    for key in ("stride", "dilation"):
        if key in two:
            two[key] = [1, two[key]]
    pad = two.pop("padding", 0)
    two["padding"] = pad if isinstance(pad, str) else [0, 0, *pad] if isinstance(pad, list) else [0, pad]
    want, wgrads, _ = backward_of(lambda x, w, b: F.conv2d(x, w, b, **two), x[:, :, None], w[:, :, None], b)
    np.testing.assert_allclose(got, want[:, :, 0], atol=1e-12)
    for mine, ref in zip(grads, (wgrads[0][:, :, 0], wgrads[1][:, :, 0], wgrads[2])):
        np.testing.assert_allclose(mine, ref, atol=1e-12)
    nlc, (gx,), _ = backward_of(lambda x: F.conv1d(x, pycoll.to_tensor(w), pycoll.to_tensor(b),
                                                   data_format="NLC", **kwargs), x.transpose(0, 2, 1),
                                r=r.transpose(0, 2, 1))
    np.testing.assert_allclose(nlc.transpose(0, 2, 1), got, atol=1e-12)
    np.testing.assert_allclose(gx.transpose(0, 2, 1), grads[0], atol=1e-12)


def test_conv_layers_parameters_init_and_padding_modes():
    pycoll.seed(3)
    conv = nn.Conv2D(8, 16, 3, stride=2, padding=1)
    assert conv.weight.shape == [16, 8, 3, 3] and conv.bias.shape == [16]
    assert conv.weight.dtype == np.float32 and conv.weight.name.startswith("conv2d_")
    # paddle's default: N(0, sqrt(2 / (in_channels * kh * kw))), bias zeros
    assert abs(conv.weight.numpy().std() / math.sqrt(2 / 72) - 1) < 0.1
    np.testing.assert_array_equal(conv.bias.numpy(), 0)
    assert repr(conv) == "Conv2D(8, 16, kernel_size=[3, 3], stride=[2, 2], padding=1, data_format=NCHW)"
    assert nn.Conv2D(4, 4, 1, bias_attr=False).bias is None and nn.Conv1D(4, 4, 1, bias=False).bias is None
    assert repr(nn.Conv1D(2, 4, 3, dilation=2, padding_mode="reflect", padding=1)) == \
        "Conv1D(2, 4, kernel_size=[3], padding=1, padding_mode=reflect, dilation=[2], data_format=NCL)"
    x = rand(2, 3, 5, 6).astype(np.float32)
    for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        layer = nn.Conv2D(3, 4, 3, padding=2, padding_mode=mode)
        padded = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode=np_mode)
        want = F.conv2d(pycoll.to_tensor(padded), layer.weight, layer.bias).numpy()
        np.testing.assert_allclose(layer(pycoll.to_tensor(x)).numpy(), want, atol=1e-5)
    assert nn.Conv1D(4, 6, 3, data_format="NLC")(pycoll.ones([2, 9, 4])).shape == [2, 7, 6]


def test_conv_errors_name_the_argument():
    x, w = pycoll.ones([1, 4, 5, 5]), pycoll.ones([6, 4, 3, 3])
    with pytest.raises(ValueError, match="groups"):
        F.conv2d(x, w, groups=3)
    with pytest.raises(ValueError, match="padding"):
        F.conv2d(x, w, padding="FULL")
    with pytest.raises(ValueError, match="batch and channel"):
        F.conv2d(x, w, padding=[[1, 1], [0, 0], [1, 1], [1, 1]])
    with pytest.raises(ValueError, match="data_format"):
        F.conv2d(x, w, data_format="NCL")
    with pytest.raises(ValueError, match="larger than"):
        F.conv2d(pycoll.ones([1, 4, 2, 2]), w)
    with pytest.raises(TypeError, match="padding must be an int"):
        nn.Conv2D(3, 3, 3, padding=[1, 1], padding_mode="reflect")
    with pytest.raises(ValueError, match="weight_attr"):
        nn.Conv2D(3, 3, 3, weight_attr=False)


# ---- pooling and pad --------------------------------------------------------------------------

def ref_pool(x, k, s, pads, ceil, kind, exclusive=True):
    """paddle's pool2d kernel: windows in input coordinates, clipped to the input; a
    non-exclusive average divides by the window's extent up to the input's end plus the
    leading pad."""
    n, c, h, w = x.shape
    (pt, pb), (pl, pr) = pads
    size = [(m + b + e - kk + (ss - 1 if ceil else 0)) // ss + 1
            for m, kk, ss, b, e in ((h, k[0], s[0], pt, pb), (w, k[1], s[1], pl, pr))]
    out = np.empty((n, c, *size))
    for i in range(size[0]):
        for j in range(size[1]):
            hs, ws = i * s[0] - pt, j * s[1] - pl
            win = x[:, :, max(hs, 0):min(hs + k[0], h), max(ws, 0):min(ws + k[1], w)]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                div = win.shape[2] * win.shape[3] if exclusive else \
                    (min(hs + k[0], h + pt) - hs) * (min(ws + k[1], w + pl) - ws)
                out[:, :, i, j] = win.sum(axis=(2, 3)) / div
    return out


POOL_CASES = {  # name: (kwargs, kernel, stride, pads)
    "k2": (dict(kernel_size=2), [2, 2], [2, 2], [(0, 0), (0, 0)]),
    "k3s2p1": (dict(kernel_size=3, stride=2, padding=1), [3, 3], [2, 2], [(1, 1), (1, 1)]),
    "ceil": (dict(kernel_size=3, stride=2, ceil_mode=True), [3, 3], [2, 2], [(0, 0), (0, 0)]),
    "ceil_pad": (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), [3, 3], [2, 2], [(1, 1), (1, 1)]),
    "asym": (dict(kernel_size=[3, 2], stride=[2, 1], padding=[0, 1, 1, 0]), [3, 2], [2, 1], [(0, 1), (1, 0)]),
    "same": (dict(kernel_size=3, stride=2, padding="SAME"), [3, 3], [2, 2], [(1, 1), (0, 1)]),
}


@pytest.mark.parametrize("name", sorted(POOL_CASES))
@pytest.mark.parametrize("kind", ["max", "avg", "avg_inclusive"])
def test_pool2d_matches_paddles_window_rules(name, kind):
    kwargs, k, s, pads = POOL_CASES[name]
    x = rand(2, 2, 7, 6)
    if kind == "max":
        fn = lambda t, fmt="NCHW": F.max_pool2d(t, data_format=fmt, **kwargs)  # noqa: E731
    else:
        fn = lambda t, fmt="NCHW": F.avg_pool2d(t, exclusive=kind == "avg", data_format=fmt, **kwargs)  # noqa: E731
    got, (gx,), r = backward_of(fn, x)
    np.testing.assert_allclose(got, ref_pool(x, k, s, pads, kwargs.get("ceil_mode", False), kind[:3],
                                             kind == "avg"), atol=1e-12)
    np.testing.assert_allclose(gx, numeric_grad(fn, x, r), atol=1e-6)
    nhwc = fn(pycoll.to_tensor(x.transpose(0, 2, 3, 1)), "NHWC").numpy()
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), got, atol=1e-12)


def test_pooling_details_that_are_paddles():
    # values read off paddle 3.3.1: 'SAME' pads this 6x6 input 0/1, and the non-exclusive divisor
    # of the last windows counts only the leading pad's size (here none): 63 / 6 = 10.5
    x = pycoll.to_tensor(np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6))
    np.testing.assert_array_equal(F.avg_pool2d(x, 3, 2, padding="SAME", exclusive=False).numpy()[0, 0],
                                  [[7, 9, 10.5], [19, 21, 22.5], [28, 30, 31.5]])
    # a ceil-mode window over nothing but padding holds float32's lowest value (paddle 3.3.1)
    y = pycoll.to_tensor(np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4))
    lowest = np.finfo(np.float32).min
    np.testing.assert_array_equal(F.max_pool2d(y, 2, 3, padding=[0, 0, 0, 2], ceil_mode=True).numpy()[0, 0],
                                  [[5, 7, lowest], [lowest, lowest, lowest]])
    # divisor_override rescales paddle's way: the exclusive mean times k*k / divisor
    want = ref_pool(x.numpy().astype(np.float64), [3, 3], [2, 2], [(1, 1), (1, 1)], False, "avg") * 9 / 5
    np.testing.assert_allclose(F.avg_pool2d(x, 3, 2, 1, divisor_override=5).numpy(), want, rtol=1e-6)
    out, mask = F.max_pool2d(x, 3, 2, 1, return_mask=True)  # flat h * W + w of each maximum
    assert mask.dtype == np.int32
    np.testing.assert_array_equal(np.take(x.numpy().ravel(), mask.numpy()), out.numpy())
    with pytest.raises(ValueError, match="ceil_mode"):
        F.max_pool2d(x, 2, padding="VALID", ceil_mode=True)
    with pytest.raises(ValueError, match="return_mask"):
        F.max_pool2d(x, 2, return_mask=True, data_format="NHWC")


def ref_adaptive(x, size, kind):
    n, c, h, w = x.shape
    out = np.empty((n, c, *size))
    for i in range(size[0]):
        for j in range(size[1]):
            win = x[:, :, i * h // size[0]:-(-(i + 1) * h // size[0]), j * w // size[1]:-(-(j + 1) * w // size[1])]
            out[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("size, full", [(1, [1, 1]), (3, [3, 3]), ([2, 4], [2, 4]), ([None, 3], [7, 3]),
                                        ([5, 4], [5, 4])])
def test_adaptive_pools(size, full):
    x = rand(2, 2, 7, 9)
    for kind, layer in (("avg", nn.AdaptiveAvgPool2D(size)), ("max", nn.AdaptiveMaxPool2D(size))):
        got, (gx,), r = backward_of(layer, x)
        np.testing.assert_allclose(got, ref_adaptive(x, full, kind), atol=1e-12)
        np.testing.assert_allclose(gx, numeric_grad(layer, x, r), atol=1e-6)
    nhwc = F.adaptive_avg_pool2d(pycoll.to_tensor(x.transpose(0, 2, 3, 1)), size, "NHWC").numpy()
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), ref_adaptive(x, full, "avg"), atol=1e-12)
    out, mask = F.adaptive_max_pool2d(pycoll.to_tensor(x), size, return_mask=True)
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 2, -1), mask.numpy().reshape(2, 2, -1), -1),
                                  out.numpy().reshape(2, 2, -1))


@pytest.mark.parametrize("shape, kwargs, widths", [
    ((2, 3, 4, 5), dict(pad=[1, 2, 0, 3], value=1.5), [(0, 0), (0, 0), (0, 3), (1, 2)]),  # [l, r, t, b]
    ((2, 3, 4, 5), dict(pad=[0, 1, 1, 0, 2, 0, 0, 3]), [(0, 1), (1, 0), (2, 0), (0, 3)]),  # from the first axis
    ((2, 3, 4, 5), dict(pad=[0, 1, 1, 0, 2, 0, 0, 3], pad_from_left_axis=False), [(0, 3), (2, 0), (1, 0), (0, 1)]),
    ((2, 3, 4, 5), dict(pad=[2, 1]), [(0, 0), (0, 0), (0, 0), (2, 1)]),  # short lists: from the last axis
    ((3, 4), dict(pad=[1, 2]), [(0, 0), (1, 2)]),
    ((2, 4, 5, 3), dict(pad=[1, 2, 2, 0], data_format="NHWC"), [(0, 0), (2, 0), (1, 2), (0, 0)]),
    ((2, 3, 4, 5), dict(pad=[1, 2, 3, 1], mode="reflect"), [(0, 0), (0, 0), (3, 1), (1, 2)]),
    ((2, 3, 4, 5), dict(pad=[1, 2, 3, 1], mode="replicate"), [(0, 0), (0, 0), (3, 1), (1, 2)]),
    ((2, 3, 4, 5), dict(pad=[1, 2, 3, 1], mode="circular"), [(0, 0), (0, 0), (3, 1), (1, 2)]),
    ((2, 6, 3), dict(pad=[2, 3], mode="replicate", data_format="NLC"), [(0, 0), (2, 3), (0, 0)]),
    ((1, 2, 3, 4, 5), dict(pad=[1, 1, 2, 0, 1, 2], mode="reflect"), [(0, 0), (0, 0), (1, 2), (2, 0), (1, 1)]),
])
def test_pad_follows_paddles_list_order(shape, kwargs, widths):
    x = rand(*shape)
    mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[
        kwargs.get("mode", "constant")]
    extra = dict(constant_values=kwargs.get("value", 0.0)) if mode == "constant" else {}
    fn = lambda t: F.pad(t, **kwargs)  # noqa: E731
    got, (gx,), r = backward_of(fn, x)
    np.testing.assert_array_equal(got, np.pad(x, widths, mode=mode, **extra))
    np.testing.assert_allclose(gx, numeric_grad(fn, x, r), atol=1e-6)


def test_pad_layers_and_errors():
    x = pycoll.to_tensor(rand(2, 3, 4, 5))
    np.testing.assert_array_equal(nn.Pad2D([1, 0, 2, 1], mode="replicate")(x).numpy(),
                                  np.pad(x.numpy(), [(0, 0), (0, 0), (2, 1), (1, 0)], mode="edge"))
    assert nn.Pad1D(2)(pycoll.ones([2, 3, 5])).shape == [2, 3, 9]
    assert repr(nn.Pad2D([1, 0, 2, 0])) == "Pad2D(padding=[1, 0, 2, 0], mode=constant, value=0.0, data_format=NCHW)"
    with pytest.raises(ValueError, match="mode"):
        F.pad(x, [1, 1, 1, 1], mode="symmetric")
    with pytest.raises(ValueError, match="smaller"):
        F.pad(x, [5, 0, 0, 0], mode="reflect")
    with pytest.raises(ValueError, match="4 ints"):
        F.pad(x, [1, 1], mode="reflect")


def test_pool_layers_call_their_functions():
    x = pycoll.to_tensor(rand(2, 3, 8, 8))
    np.testing.assert_array_equal(nn.MaxPool2D(2)(x).numpy(), F.max_pool2d(x, 2).numpy())
    np.testing.assert_array_equal(nn.AvgPool2D(3, 1, 1, exclusive=False)(x).numpy(),
                                  F.avg_pool2d(x, 3, 1, 1, exclusive=False).numpy())
    assert repr(nn.MaxPool2D(2)) == "MaxPool2D(kernel_size=2, stride=None, padding=0)"
    assert repr(nn.AvgPool2D(3, 1, 1)) == "AvgPool2D(kernel_size=3, stride=1, padding=1)"
    assert repr(nn.AdaptiveMaxPool2D([2, None])) == "AdaptiveMaxPool2D(output_size=[2, None], return_mask=False)"


# ---- batch norm -------------------------------------------------------------------------------------

def test_batch_norm_trains_and_evaluates_like_the_formulas():
    bn = nn.BatchNorm2D(3, momentum=0.8, data_format="NHWC")
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias", "_mean", "_variance"]  # paddle's
    assert list(bn.state_dict()) == ["weight", "bias", "_mean", "_variance"]
    assert [p.stop_gradient for p in bn.parameters()] == [False, False, True, True]
    with pytest.warns(UserWarning, match="Skip loading for _(mean|variance)"):  # the running stats stay (paddle's warning)
        bn.set_state_dict({"weight": f32(1.0, 2.0, -1.0), "bias": f32(0.5, 0, 1)})
    mean, var = np.zeros(3), np.ones(3)
    for step in range(3):
        x = rand(4, 5, 6, 3).astype(np.float32)
        out = bn(pycoll.to_tensor(x)).numpy()
        m, v = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))  # the biased variance, as paddle 3.3.1
        np.testing.assert_allclose(out, (x - m) / np.sqrt(v + 1e-5) * [1, 2, -1] + [0.5, 0, 1], atol=2e-5)
        mean, var = 0.8 * mean + 0.2 * m, 0.8 * var + 0.2 * v
        np.testing.assert_allclose(bn._mean.numpy(), mean, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(bn._variance.numpy(), var, rtol=1e-5)
    bn.eval()
    x = rand(2, 5, 6, 3).astype(np.float32)
    np.testing.assert_allclose(bn(pycoll.to_tensor(x)).numpy(),
                               (x - mean) / np.sqrt(var + 1e-5) * [1, 2, -1] + [0.5, 0, 1], atol=2e-5)
    np.testing.assert_allclose(bn._mean.numpy(), mean, rtol=1e-5, atol=1e-7)  # eval leaves them


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.BatchNorm1D(3), (5, 3)),
    (lambda: nn.BatchNorm1D(3), (4, 3, 2)),
    (lambda: nn.BatchNorm1D(3, data_format="NLC"), (4, 2, 3)),
    (lambda: nn.BatchNorm2D(3, weight_attr=False, bias_attr=False), (3, 3, 2, 2)),
    (lambda: nn.BatchNorm3D(2), (2, 2, 2, 1, 2)),
    (lambda: nn.BatchNorm(3, act="tanh"), (3, 3, 2, 2)),
    (lambda: nn.BatchNorm2D(3, use_global_stats=True), (3, 3, 2, 2)),
])
def test_batch_norm_gradients_match_central_differences(make, shape):
    bn = make().to(dtype="float64")
    if bn.weight is not None:
        bn.weight.set_value(np.linspace(0.5, 1.5, bn.weight.shape[0]))
        bn.bias.set_value(np.linspace(-1, 1, bn.weight.shape[0]))
    x = rand(*shape)
    # the running statistics move at every call: differences are taken on a copy held still
    still = make().to(dtype="float64")
    frozen = {k: v.numpy().copy() for k, v in bn.state_dict().items()}

    def run(t, **replaced):
        still.set_state_dict({**frozen, **replaced})
        return still(t)
    got, (gx,), r = backward_of(bn, x)
    np.testing.assert_allclose(gx, numeric_grad(run, x, r), atol=1e-6)
    xt = pycoll.to_tensor(x)
    for name in ("weight", "bias"):
        if getattr(bn, name) is not None:
            want = numeric_grad(lambda v: run(xt, **{name: v}), frozen[name], r)
            np.testing.assert_allclose(getattr(bn, name).grad.numpy(), want, atol=1e-6)


def test_batch_norm_outside_training_with_batch_statistics_is_paddles():
    # values read off paddle 3.3.1: in eval with use_global_stats=False the batch's statistics
    # normalise and update the running ones, but the backward holds the (updated) running ones
    x = np.sin(np.arange(24.0)).reshape(4, 3, 2, 1).astype(np.float32)
    g = np.cos(np.arange(24.0)).reshape(4, 3, 2, 1).astype(np.float32)
    bn = nn.BatchNorm2D(3, use_global_stats=False)
    bn.eval()
    bn.set_state_dict({"weight": f32(1, 2, -1), "bias": f32(0.5, 0, 1), "_mean": f32(0.1, 0.2, 0.3),
                       "_variance": f32(1.5, 2, 0.5)})
    xt = pycoll.to_tensor(x, stop_gradient=False)
    out = bn(xt)
    (out * pycoll.to_tensor(g)).sum().backward()
    np.testing.assert_allclose(out.numpy()[:, 0, 0, 0], [0.38145447, -0.14690822, -0.6331819, -1.0386301], rtol=1e-5)
    np.testing.assert_allclose(xt.grad.numpy()[0, :, 0, 0], [0.8518816, -0.61892295, 0.9622341], rtol=1e-5)
    np.testing.assert_allclose(bn.weight.grad.numpy(), [-0.3221737, -0.49504322, 3.6515212], rtol=1e-5)
    np.testing.assert_allclose(bn.bias.grad.numpy(), [6.6546965, -3.2253673, -3.970244], rtol=1e-5)
    np.testing.assert_allclose(bn._variance.numpy(), [1.3779653, 1.8083295, 0.46143568], rtol=1e-6)


def test_functional_batch_norm_and_layer_details():
    x = pycoll.to_tensor(rand(4, 3, 2, 2).astype(np.float32))
    mean, var = pycoll.zeros([3]), pycoll.ones([3])
    F.batch_norm(x, mean, var, training=True, momentum=0.5)
    np.testing.assert_allclose(mean.numpy(), 0.5 * x.numpy().mean(axis=(0, 2, 3)), rtol=1e-5)
    before = mean.numpy().copy()
    out = F.batch_norm(x, mean, var, use_global_stats=True, training=True)  # running ones, no update
    np.testing.assert_array_equal(mean.numpy(), before)
    np.testing.assert_allclose(out.numpy(), (x.numpy() - before[:, None, None]) /
                               np.sqrt(var.numpy()[:, None, None] + 1e-5), rtol=1e-5)
    assert repr(nn.BatchNorm2D(3)) == "BatchNorm2D(num_features=3, momentum=0.9, epsilon=1e-05)"
    assert repr(nn.BatchNorm1D(4, data_format="NLC")) == \
        "BatchNorm1D(num_features=4, momentum=0.9, epsilon=1e-05, data_format=NLC)"
    legacy = nn.BatchNorm(3, is_test=True, moving_mean_name="m", moving_variance_name="v")
    assert not legacy.training and legacy._mean.name == "m" and legacy._variance.name == "v"
    assert nn.BatchNorm2D(3, weight_attr=False).weight is None
    with pytest.raises(ValueError, match="4 dimensions"):
        nn.BatchNorm2D(3)(pycoll.ones([2, 3]))
    with pytest.raises(ValueError, match="expects num_features=2 channels, got x with 3"):
        F.batch_norm(x, pycoll.zeros([2]), var)
    with pytest.raises(ValueError, match=r"running_var must have shape \[3\]"):
        F.batch_norm(x, mean, pycoll.ones([2]))
    # paddle 3.3.1 has no integer batch_norm kernel (an int output was all zeros); the running stats stay
    for layer in (nn.BatchNorm1D(1), nn.SyncBatchNorm(1)):
        with pytest.raises(TypeError, match="x must be a floating-point Tensor .*got int64"):
            layer(pycoll.to_tensor([[1], [2]]))
        assert layer._mean.numpy().tolist() == [0.0]
    with pytest.raises(ValueError, match="act"):
        nn.BatchNorm(3, act="nope")

