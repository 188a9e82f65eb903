"""interpolate / upsample (nearest, linear, bilinear, trilinear, area), Upsample and the
UpsamplingNearest2D / UpsamplingBilinear2D layers, pixel_shuffle / pixel_unshuffle, and
conv1d_transpose / conv2d_transpose with their layers.

Checked against NumPy references written here as plain loops over output pixels (paddle's
index rules) or input pixels (a transposed convolution spreads each input pixel over a window),
the adjoint identity <conv(y), x> = <y, conv_transpose(x)>, central differences, and values read
off paddle 3.3.1 (CPU) where said. Side by side with paddle 3.3.1 in float64 (197 outputs and
gradients: every mode and align setting, NCHW/NHWC, scale factors and sizes, strides, paddings,
output_padding, output_size, dilation, groups): transposed convolutions agreed to 1e-14, resampling
to 7e-7 absolute (paddle's float32 interpolation weights; its gradients exactly).
"""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
from pycoll.nn._resample_functional import _axis_taps
from pycoll.nn._sliding import apply_axis_maps, apply_axis_taps, transpose_taps

RNG = np.random.default_rng(5)


def t(a, grad=False):
    return pycoll.to_tensor(np.asarray(a), stop_gradient=not grad)


def grads(fn, *arrays):
    ts = [t(a, True) for a in arrays]
    out = fn(*ts)
    r = np.cos(np.arange(out.size)).reshape(out.shape)
    (out * t(r)).sum().backward()
    return out.numpy(), [x.grad.numpy() for x in ts], r


def numeric(fn, arrays, i, r, eps=1e-6):
    g = np.zeros_like(arrays[i])
    for idx in np.ndindex(g.shape):
        hi, lo = [a.copy() for a in arrays], [a.copy() for a in arrays]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        with pycoll.no_grad():
            g[idx] = ((fn(*map(t, hi)).numpy() - fn(*map(t, lo)).numpy()) * r).sum() / (2 * eps)
    return g


# ---- interpolate ---------------------------------------------------------------------------------

def ref_source(k, n_in, n_out, scale, align_corners, align_mode):
    """(low index, high index, weight of high) of output pixel k on one axis, paddle's rules."""
    if n_out == 1:
        ratio = 0.0
    elif align_corners:
        ratio = (n_in - 1) / (n_out - 1)
    else:
        ratio = 1 / scale if scale else n_in / n_out
    if align_mode == 0 and not align_corners:
        src = max(ratio * (k + 0.5) - 0.5, 0.0)
    else:
        src = ratio * k
    lo = int(src)
    return lo, min(lo + 1, n_in - 1), src - lo


def ref_bilinear(x, out_hw, scale=(0, 0), align_corners=False, align_mode=0):
    n, c, h, w = x.shape
    out = np.zeros((n, c, *out_hw))
    for i in range(out_hw[0]):
        y0, y1, dy = ref_source(i, h, out_hw[0], scale[0], align_corners, align_mode)
        for j in range(out_hw[1]):
            x0, x1, dx = ref_source(j, w, out_hw[1], scale[1], align_corners, align_mode)
            out[:, :, i, j] = ((1 - dy) * ((1 - dx) * x[:, :, y0, x0] + dx * x[:, :, y0, x1])
                               + dy * ((1 - dx) * x[:, :, y1, x0] + dx * x[:, :, y1, x1]))
    return out


@pytest.mark.parametrize("size,scale", [([7, 11], None), ([3, 4], None), (None, 1.5), (None, [0.5, 1.7]),
                                        ([1, 1], None)])
@pytest.mark.parametrize("align_corners,align_mode", [(False, 0), (True, 0), (False, 1)])
def test_bilinear_matches_loops(size, scale, align_corners, align_mode):
    x = RNG.standard_normal((2, 3, 5, 7))
    fn = lambda a: F.interpolate(a, size, scale, "bilinear", align_corners, align_mode)  # noqa: E731
    out = fn(t(x)).numpy()
    scales = [0, 0] if scale is None else ([scale] * 2 if np.isscalar(scale) else scale)
    out_hw = size or [int(n * s) for n, s in zip((5, 7), scales)]
    np.testing.assert_allclose(out, ref_bilinear(x, out_hw, scales, align_corners, align_mode), atol=2e-6)
    nhwc = F.interpolate(t(x.transpose(0, 2, 3, 1)), size, scale, "bilinear", align_corners, align_mode,
                         data_format="NHWC")
    np.testing.assert_allclose(nhwc.numpy(), out.transpose(0, 2, 3, 1), atol=1e-12)


def test_interpolation_is_linear_so_its_gradient_is_the_transpose():
    x = RNG.standard_normal((1, 2, 3, 4))
    for mode, kw in [("bilinear", {"size": [5, 3]}), ("bilinear", {"scale_factor": 1.5, "align_corners": True}),
                     ("nearest", {"scale_factor": [2, 0.5]})]:
        fn = lambda a: F.interpolate(a, mode=mode, **kw)  # noqa: E731
        _, (g,), r = grads(fn, x)
        np.testing.assert_allclose(g, numeric(fn, [x], 0, r), rtol=1e-6, atol=1e-9)
    x3 = RNG.standard_normal((2, 2, 5))
    fn = lambda a: F.interpolate(a, size=[8], mode="linear", align_mode=1)  # noqa: E731
    _, (g,), r = grads(fn, x3)
    np.testing.assert_allclose(g, numeric(fn, [x3], 0, r), rtol=1e-6, atol=1e-9)


def test_values_read_off_paddle():
    x = t(np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4))
    # paddle 3.3.1: a scale factor maps output pixel k to input floor(k / scale), a size to floor(k * in / out)
    np.testing.assert_array_equal(F.interpolate(x, scale_factor=[1, 1.7]).numpy().ravel(), [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(F.interpolate(x, size=[1, 6]).numpy().ravel(), [0, 0, 1, 2, 2, 3])
    np.testing.assert_allclose(F.interpolate(x, size=[1, 6], mode="bilinear").numpy().ravel(),
                               [0, 0.5, 1.1666667, 1.8333335, 2.5, 3], rtol=1e-7)
    np.testing.assert_allclose(F.interpolate(x, size=[1, 6], mode="bilinear", align_corners=True).numpy().ravel(),
                               [0, 0.6, 1.2, 1.8000001, 2.4, 3], rtol=1e-7)
    np.testing.assert_allclose(F.interpolate(x, size=[1, 6], mode="bilinear", align_mode=1).numpy().ravel(),
                               [0, 0.6666667, 1.3333334, 2, 2.6666667, 3], rtol=1e-7)


def test_trilinear_linear_area_and_layers():
    x5 = RNG.standard_normal((1, 2, 3, 4, 2))
    out = F.interpolate(t(x5), size=[5, 3, 4], mode="trilinear", align_corners=True).numpy()
    # separable: trilinear = bilinear on (D, H) then linear on W
    dh = ref_bilinear(x5.transpose(0, 1, 4, 2, 3).reshape(1, 4, 3, 4), [5, 3], align_corners=True)
    ref = ref_bilinear(dh.reshape(1, 2, 2, 15).transpose(0, 1, 3, 2).reshape(1, 30, 2, 1), [4, 1],
                       align_corners=True).reshape(1, 2, 15, 4).reshape(1, 2, 5, 3, 4)
    np.testing.assert_allclose(out, ref, atol=1e-6)
    x3 = RNG.standard_normal((2, 3, 6))
    lin = F.interpolate(t(x3), scale_factor=2.5, mode="linear").numpy()
    np.testing.assert_allclose(lin, ref_bilinear(x3[:, :, None], [1, 15], (0, 2.5))[:, :, 0], atol=2e-6)
    x4 = RNG.standard_normal((2, 3, 4, 6))
    np.testing.assert_allclose(F.interpolate(t(x4), size=[2, 3], mode="area").numpy(),
                               x4.reshape(2, 3, 2, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-12)
    np.testing.assert_allclose(nn.Upsample(scale_factor=2)(t(x4)).numpy(), x4.repeat(2, 2).repeat(2, 3))
    np.testing.assert_array_equal(nn.UpsamplingNearest2D(size=[8, 12])(t(x4)).numpy(), x4.repeat(2, 2).repeat(2, 3))
    np.testing.assert_allclose(nn.UpsamplingBilinear2D(size=[7, 11])(t(x4)).numpy(),
                               ref_bilinear(x4, [7, 11], align_corners=True), atol=2e-6)
    np.testing.assert_array_equal(F.upsample(t(x4), size=[3, 5], mode="bilinear").numpy(),
                                  F.interpolate(t(x4), size=[3, 5], mode="bilinear").numpy())


def test_interpolate_refuses_bad_arguments():
    x = t(np.ones((1, 1, 4, 4)))
    with pytest.raises(ValueError, match="one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="not both"):
        F.interpolate(x, size=[2, 2], scale_factor=2)
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=[2, 2], align_corners=True)
    with pytest.raises(ValueError, match="mode 'linear' takes a 3-D"):
        F.interpolate(x, size=[2], mode="linear")
    with pytest.raises(ValueError, match="size must be a list of 2"):
        F.interpolate(x, size=[2, 2, 2], mode="bilinear")
    with pytest.raises(ValueError, match="align_mode"):
        F.interpolate(x, size=[2, 2], mode="bilinear", align_mode=2)
    with pytest.raises(ValueError, match="data_format"):
        F.interpolate(x, size=[2, 2], data_format="NCW")
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(x, size=[2, 2], mode="bicubic", antialias=True)


# ---- pixel shuffle -------------------------------------------------------------------------------

def test_pixel_shuffle_layout_and_inverse():
    x = np.arange(8.0).reshape(1, 8, 1, 1)
    # paddle 3.3.1's results for these two inputs
    np.testing.assert_array_equal(F.pixel_shuffle(t(x), 2).numpy()[0], [[[0, 1], [2, 3]], [[4, 5], [6, 7]]])
    np.testing.assert_array_equal(F.pixel_shuffle(t(x.reshape(1, 1, 1, 8)), 2, "NHWC").numpy()[0],
                                  [[[0, 4], [1, 5]], [[2, 6], [3, 7]]])
    y = RNG.standard_normal((2, 18, 2, 3))
    out = nn.PixelShuffle(3)(t(y)).numpy()
    for c, i, j in [(0, 0, 0), (1, 2, 1), (1, 1, 2)]:
        np.testing.assert_array_equal(out[:, c, i::3, j::3], y[:, c * 9 + i * 3 + j])
    np.testing.assert_array_equal(F.pixel_unshuffle(t(out), 3).numpy(), y)
    np.testing.assert_array_equal(nn.PixelUnshuffle(3, "NHWC")(t(out.transpose(0, 2, 3, 1))).numpy(),
                                  y.transpose(0, 2, 3, 1))
    _, (g,), r = grads(lambda a: F.pixel_shuffle(a, 3), y)
    np.testing.assert_array_equal(g, F.pixel_unshuffle(t(r), 3).numpy())
    with pytest.raises(ValueError, match="divisible"):
        F.pixel_shuffle(t(np.ones((1, 8, 2, 2))), 3)


# ---- transposed convolution ----------------------------------------------------------------------

def ref_conv_transpose2d(x, w, stride, pads, dilation, groups, extra=(0, 0)):
    """Each input pixel adds weight * value over its window of the padded output, then the pads go."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    full = np.zeros((n, og * groups, (h - 1) * sh + dh * (kh - 1) + 1 + extra[0],
                     (wd - 1) * sw + dw * (kw - 1) + 1 + extra[1]))
    cg = c // groups
    for ci in range(c):
        grp = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for b in range(kw):
                        full[:, grp * og:(grp + 1) * og, i * sh + a * dh, j * sw + b * dw] += \
                            x[:, ci, i, j, None] * w[ci, :, a, b]
    (pt, pb), (pl, pr) = pads
    return full[:, :, pt:full.shape[2] - pb, pl:full.shape[3] - pr]


CONV_CASES = [  # kernel, stride, padding, output_padding, dilation, groups, pads as (before, after) pairs
    (3, 1, 0, 0, 1, 1, [(0, 0), (0, 0)]),
    (3, 2, 1, 1, 1, 1, [(1, 1), (1, 1)]),
    ([2, 3], [2, 3], [1, 0], [1, 2], 1, 2, [(1, 1), (0, 0)]),
    (3, 2, [1, 2, 0, 1], 0, 2, 2, [(1, 2), (0, 1)]),
]


@pytest.mark.parametrize("k,s,p,op,d,g,pads", CONV_CASES)
def test_conv2d_transpose_matches_loops_and_differences(k, s, p, op, d, g, pads):
    x = RNG.standard_normal((2, 4, 3, 4))
    ks = [k, k] if isinstance(k, int) else k
    w, b = RNG.standard_normal((4, 6 // g, *ks)), RNG.standard_normal(6)
    fn = lambda a, wt, bt: F.conv2d_transpose(a, wt, bt, stride=s, padding=p, output_padding=op,  # noqa: E731
                                              dilation=d, groups=g)
    out, (gx, gw, gb), r = grads(fn, x, w, b)
    two = lambda v: [v, v] if isinstance(v, int) else v  # noqa: E731
    ref = ref_conv_transpose2d(x, w, two(s), pads, two(d), g, two(op)) + b.reshape(1, 6, 1, 1)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gx, numeric(fn, [x, w, b], 0, r), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, numeric(fn, [x, w, b], 1, r), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, r.sum(axis=(0, 2, 3)), rtol=1e-12)


def test_conv_transpose_is_the_adjoint_of_conv():
    x, w = RNG.standard_normal((2, 4, 5, 6)), RNG.standard_normal((4, 3, 3, 3))
    kw = {"stride": 2, "padding": 1, "dilation": 2}
    out = F.conv2d_transpose(t(x), t(w), **kw).numpy()
    y = RNG.standard_normal(out.shape)
    conv_y = F.conv2d(t(y), t(w), **kw).numpy()  # conv2d's weight [out=4, in=3, k, k] is the same array
    assert conv_y.shape == x.shape
    np.testing.assert_allclose((conv_y * x).sum(), (y * out).sum(), rtol=1e-12)
    nhwc = F.conv2d_transpose(t(x.transpose(0, 2, 3, 1)), t(w), data_format="NHWC", **kw).numpy()
    np.testing.assert_allclose(nhwc, out.transpose(0, 2, 3, 1), rtol=1e-12)


def test_output_size_same_and_1d():
    x, w = RNG.standard_normal((1, 2, 4, 5)), RNG.standard_normal((2, 3, 3, 3))
    base = F.conv2d_transpose(t(x), t(w), stride=3, padding=1).numpy()
    assert base.shape == (1, 3, 10, 13)
    sized = F.conv2d_transpose(t(x), t(w), stride=3, padding=1, output_size=[12, 13]).numpy()
    np.testing.assert_allclose(sized[:, :, :10], base, rtol=1e-12)
    uncropped = F.conv2d_transpose(t(x), t(w), stride=3, padding=[1, 0, 1, 1]).numpy()  # no pad after H
    np.testing.assert_allclose(sized[:, :, 10], uncropped[:, :, 10], rtol=1e-12)
    np.testing.assert_array_equal(sized[:, :, 11], 0)  # past every window
    # paddle 3.3.1 gives these shapes (SAME takes the pads a convolution of x would take)
    assert F.conv2d_transpose(t(x), t(w), stride=2, padding="SAME").shape == [1, 3, 8, 9]
    assert F.conv2d_transpose(t(x), t(w), stride=2, padding="VALID").shape == [1, 3, 9, 11]
    with pytest.raises(ValueError, match=r"output_size .* must lie in \[10, 13\)"):
        F.conv2d_transpose(t(x), t(w), stride=3, padding=1, output_size=[13, 13])
    with pytest.raises(ValueError, match="exclude each other"):
        F.conv2d_transpose(t(x), t(w), stride=3, output_padding=1, output_size=[12, 13])
    with pytest.raises(ValueError, match="output_padding"):
        F.conv2d_transpose(t(x), t(w), stride=2, output_padding=2)
    with pytest.raises(ValueError, match="in_channels=2"):
        F.conv2d_transpose(t(np.ones((1, 3, 4, 4))), t(w))
    xl, wl, bl = RNG.standard_normal((2, 4, 5)), RNG.standard_normal((4, 3, 3)), RNG.standard_normal(6)
    out = F.conv1d_transpose(t(xl), t(wl), t(bl), stride=2, padding=1, output_padding=1, groups=2).numpy()
    ref = ref_conv_transpose2d(xl[:, :, None], wl[:, :, None], (1, 2), [(0, 0), (1, 1)], (1, 1), 2, (0, 1))
    np.testing.assert_allclose(out, ref[:, :, 0] + bl.reshape(1, 6, 1), rtol=1e-12)
    nlc = F.conv1d_transpose(t(xl.transpose(0, 2, 1)), t(wl), t(bl), stride=2, padding=1, output_padding=1,
                             groups=2, data_format="NLC").numpy()
    np.testing.assert_allclose(nlc, out.transpose(0, 2, 1), rtol=1e-12)


def test_conv_transpose_layers():
    layer = nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert list(layer.state_dict()) == ["weight", "bias"] and layer.weight.shape == [4, 3, 3, 3]
    limit = np.sqrt(6 / (3 * 9 + 4 * 9))  # XavierUniform over paddle's fans of [in, out / groups, k, k]
    assert np.abs(layer.weight.numpy()).max() <= limit and not layer.bias.numpy().any()
    x = RNG.standard_normal((1, 4, 3, 3)).astype(np.float32)
    expected = F.conv2d_transpose(t(x), layer.weight, layer.bias, stride=2, padding=1, output_padding=1, groups=2)
    np.testing.assert_array_equal(layer(t(x)).numpy(), expected.numpy())
    assert layer(t(x), output_size=[5, 6]).shape == [1, 6, 5, 6]
    one = nn.Conv1DTranspose(4, 2, 3, stride=2, data_format="NLC", bias_attr=False)
    assert one.weight.shape == [4, 2, 3] and one.bias is None
    assert one(t(x[:, :, 0].transpose(0, 2, 1))).shape == [1, 7, 2]
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2DTranspose(4, 6, 3, groups=4)


# -- the sparse form of nearest and the linear modes: taps, and their transpose for the gradient --

TAPS_RS = np.random.RandomState(7)


def dense(index, weight, n_in):
    """The [n_out, n_in] matrix of taps, in float64."""
    m = np.zeros((index.shape[0], n_in))
    np.add.at(m, (np.arange(index.shape[0])[:, None], index), 1.0 if weight is None else weight)
    return m


MODES = [("nearest", False, 0), ("bilinear", False, 0), ("bilinear", True, 0), ("bilinear", False, 1)]
SIZES = [(20, 31), (80, 121), (1, 1), (37, 53), (37, 400)]


@pytest.mark.parametrize("mode,align_corners,align_mode", MODES)
def test_interpolate_taps_and_their_transpose_map_as_the_dense_matrices(mode, align_corners, align_mode):
    x = TAPS_RS.rand(2, 3, 37, 53).astype(np.float32)
    for size in SIZES:
        taps = [_axis_taps(n_in, n_out, mode, align_corners, align_mode, 0.0) for n_in, n_out in zip((37, 53), size)]
        mats = [dense(i, w, n_in) for (i, w), n_in in zip(taps, (37, 53))]
        np.testing.assert_allclose(apply_axis_taps(x, taps, (2, 3)), apply_axis_maps(x, mats, (2, 3)), rtol=2e-6, atol=2e-7)
        g = TAPS_RS.rand(2, 3, *size).astype(np.float32)
        back = [transpose_taps(i, w, n_in) for (i, w), n_in in zip(taps, (37, 53))]
        for (i, w), n_in, mat, n_out in zip(back, (37, 53), mats, size):
            np.testing.assert_array_equal(dense(i, w, n_out), mat.T)  # the transpose, exactly
        np.testing.assert_allclose(apply_axis_taps(g, back, (2, 3)), apply_axis_maps(g, mats, (2, 3), transposed=True),
                                   rtol=2e-5, atol=2e-6)


def test_an_output_of_one_cell_takes_paddles_rule_per_kernel():
    # paddle 3.3.1 (align_corners=False, align_mode=0): its linear and trilinear kernels sample one
    # output cell at the centre of the axis; bilinear and bicubic at the first cell
    x1 = t(np.arange(7, dtype=np.float32).reshape(1, 1, 7))
    x2 = t(np.arange(35, dtype=np.float32).reshape(1, 1, 5, 7))
    x3 = t(np.arange(60, dtype=np.float32).reshape(1, 1, 3, 4, 5))
    assert F.interpolate(x1, size=[1], mode="linear", data_format="NCW").numpy().ravel().tolist() == [3.0]
    assert F.interpolate(x1, scale_factor=0.2, mode="linear", data_format="NCW").numpy().ravel().tolist() == [2.0]
    assert F.interpolate(x3, size=[1, 2, 1], mode="trilinear").numpy().ravel().tolist() == [24.5, 34.5]
    np.testing.assert_allclose(F.interpolate(x2, size=[1, 3], mode="bilinear").numpy().ravel(), [2 / 3, 3.0, 16 / 3],
                               rtol=1e-6)
    np.testing.assert_allclose(F.interpolate(x2, size=[1, 3], mode="bicubic").numpy().ravel(),
                               [-0.0821758508682251, 2.34375, 4.769674301147461], rtol=1e-5)
    assert F.interpolate(x1, size=[1], mode="linear", align_corners=True, data_format="NCW").numpy().ravel().tolist() == [0.0]
    assert F.interpolate(x1, size=[1], mode="linear", align_mode=1, data_format="NCW").numpy().ravel().tolist() == [0.0]


def test_integer_images_resize_in_float_and_truncate_back():
    # a probe: uint8 weights truncated to 0 gave all-zero images; values measured on paddle 3.3.1
    a4 = pycoll.to_tensor((np.arange(48).reshape(1, 2, 4, 6) * 5).astype("uint8"))
    a5 = pycoll.to_tensor((np.arange(48).reshape(1, 1, 2, 4, 6) * 5).astype("uint8"))
    cases = [(a4, dict(size=(2, 3), mode="bilinear"), [17, 27, 37, 77, 87, 97]),
             (a4, dict(size=(8, 12), mode="bilinear"), [0, 1, 3, 6, 8, 11]),
             (a4, dict(size=(3, 5), mode="bilinear"), [5, 11, 17, 23, 29, 45]),
             (a4, dict(size=(3, 4), mode="bilinear", align_corners=True), [0, 8, 16, 25, 45, 53]),
             (a5, dict(size=(1, 2, 3), mode="trilinear"), [77, 87, 97, 137, 147, 157]),
             (a4, dict(size=(2, 3), mode="nearest"), [0, 10, 20, 60, 70, 80])]
    for x, kwargs, first_six in cases:
        out = F.interpolate(x, **kwargs)
        assert out.dtype == np.uint8 and out.numpy().ravel()[:6].tolist() == first_six, kwargs
    # paddle's uint8 'linear' (1-D) reads the left tap only ([0, 10, 20] here): pycoll interpolates, as
    # for float32 ([2.5, 12.5, 22.5]), then truncates
    line = pycoll.to_tensor((np.arange(12).reshape(1, 2, 6) * 5).astype("uint8"))
    assert F.interpolate(line, size=(3,), mode="linear").numpy().ravel()[:3].tolist() == [2, 12, 22]
    for mode in ("area", "bicubic"):  # paddle has no integer kernel for these
        with pytest.raises(TypeError, match=f"interpolate \\(mode '{mode}'\\): x must hold floating-point"):
            F.interpolate(a4, size=(2, 3), mode=mode)
    for pool in (lambda: F.avg_pool2d(a4, 2), lambda: F.adaptive_avg_pool2d(a4, (2, 3))):
        with pytest.raises(TypeError, match="avg_pool2d: x must hold floating-point numbers, got dtype uint8"):
            pool()  # an average truncated to uint8 came back as zeros
