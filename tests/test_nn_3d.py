"""3-D convolution and pooling, max_unpool1d/2d/3d, and bicubic, trilinear, nearest and area
resampling of 5-D inputs (pycoll.nn, pycoll.nn.functional), against paddle 3.3.1 and against
references computed here another way.

PADDLE holds what paddle 3.3.1 (CPU, float64) gave for each case of CASES on the deterministic
inputs `inputs_of` makes: the output's shape and `fingerprint`s (weighted sums that move with every
entry) of the output, of the mask where the op returns one, and of each input's gradient of
sum(out * cos(k / 2)). gen: the block between the `# ---- cases` markers ran under paddle as is.
Two kinds of paddle's float64 gradients round through float32 and so agree to ~1e-7 only: the
average pools' 1 / count (paddle's backward multiplies by float32(1 / count)) and bicubic's
half-pixel source index (computed in float32 by paddle's backward, in float64 by its forward);
pycoll's gradients are the exact adjoints of its forwards (checked below by central differences).
"""
import itertools

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F

# ---- cases measured on paddle 3.3.1 (the block below ran under paddle as is) ----
def _unpool_chain(pool, unpool, k, s, p, **kw):
    """x -> max-pool with mask -> unpool (the mask also returned)."""
    def fn(x):
        out, mask = pool(x, k, s, p, return_mask=True)
        return unpool(out, mask, k, s, p, **kw), mask
    return fn


X5, X5L = (2, 3, 4, 5, 6), (2, 4, 5, 6, 3)
CASES = {  # name: (fn(F, T, *inputs) with F the functional module and T to_tensor, input shapes)
    "conv3d_groups_stride_dilation": (lambda F, T, x, w, b: F.conv3d(
        x, w, b, stride=[1, 2, 1], padding=[1, 0, 2], dilation=[2, 1, 1], groups=3), [X5, (6, 1, 3, 2, 3), (6,)]),
    "conv3d_same_ndhwc": (lambda F, T, x, w, b: F.conv3d(x, w, b, stride=2, padding="SAME", data_format="NDHWC"),
                          [X5L, (4, 3, 3, 3, 2), (4,)]),
    "conv3d_six_pads": (lambda F, T, x, w: F.conv3d(x, w, stride=[2, 1, 3], padding=[0, 1, 1, 2, 2, 0]),
                        [X5, (2, 3, 2, 3, 3)]),
    "conv3d_pairs_depthwise": (lambda F, T, x, w, b: F.conv3d(
        x, w, b, padding=[[0, 0], [0, 0], [1, 1], [2, 0], [0, 1]], dilation=2, groups=3), [X5, (6, 1, 2, 2, 3), (6,)]),
    "conv3d_valid": (lambda F, T, x, w: F.conv3d(x, w, padding="VALID", stride=[1, 1, 2]), [X5, (2, 3, 2, 3, 3)]),
    "convT3d_output_padding": (lambda F, T, x, w, b: F.conv3d_transpose(x, w, b, stride=2, padding=1, output_padding=1),
                               [(2, 4, 3, 4, 3), (4, 3, 2, 3, 2), (3,)]),
    "convT3d_groups_same": (lambda F, T, x, w, b: F.conv3d_transpose(
        x, w, b, stride=[2, 1, 2], padding="SAME", groups=2), [(2, 4, 3, 4, 3), (4, 2, 3, 3, 3), (4,)]),
    "convT3d_output_size_ndhwc": (lambda F, T, x, w: F.conv3d_transpose(
        x, w, stride=[2, 3, 2], padding=[1, 0, 1], dilation=[1, 2, 2], output_size=[5, 16, 6], data_format="NDHWC"),
        [(2, 3, 4, 3, 4), (4, 5, 2, 3, 2)]),
    "convT3d_six_pads_depthwise": (lambda F, T, x, w, b: F.conv3d_transpose(
        x, w, b, stride=2, padding=[0, 1, 2, 1, 1, 0], dilation=2, groups=4), [(2, 4, 3, 4, 3), (4, 1, 3, 2, 3), (4,)]),
    "max_pool3d_mask": (lambda F, T, x: F.max_pool3d(x, 3, 2, 1, return_mask=True), [X5]),
    "max_pool3d_ceil": (lambda F, T, x: F.max_pool3d(x, 3, 2, 0, ceil_mode=True), [X5]),
    "max_pool3d_pads_mask": (lambda F, T, x: F.max_pool3d(x, [2, 3, 2], [2, 2, 3], [1, 0, 1], return_mask=True),
                             [X5]),
    "max_pool3d_same_ndhwc": (lambda F, T, x: F.max_pool3d(x, [3, 2, 3], 2, "SAME", data_format="NDHWC"), [X5L]),
    "max_pool3d_six_pads": (lambda F, T, x: F.max_pool3d(x, 2, [1, 2, 2], [0, 1, 1, 0, 1, 1]), [X5]),
    "avg_pool3d_exclusive": (lambda F, T, x: F.avg_pool3d(x, 3, 2, 1), [X5]),
    "avg_pool3d_inclusive_ceil": (lambda F, T, x: F.avg_pool3d(
        x, [2, 3, 3], [2, 2, 2], [1, 1, 0], ceil_mode=True, exclusive=False), [X5]),
    "avg_pool3d_divisor": (lambda F, T, x: F.avg_pool3d(x, 2, 1, 1, divisor_override=3), [X5]),
    "avg_pool3d_same_ndhwc": (lambda F, T, x: F.avg_pool3d(
        x, [3, 2, 3], 2, "SAME", data_format="NDHWC", exclusive=False), [X5L]),
    "avg_pool3d_six_pads": (lambda F, T, x: F.avg_pool3d(x, 3, 2, [1, 0, 0, 2, 1, 1], exclusive=False), [X5]),
    "adaptive_avg_pool3d": (lambda F, T, x: F.adaptive_avg_pool3d(x, [3, None, 4]), [X5]),
    "adaptive_avg_pool3d_ndhwc": (lambda F, T, x: F.adaptive_avg_pool3d(x, 4, data_format="NDHWC"), [X5L]),
    "adaptive_max_pool3d_mask": (lambda F, T, x: F.adaptive_max_pool3d(x, [3, 4, 5], return_mask=True), [X5]),
    "adaptive_max_pool3d_int": (lambda F, T, x: F.adaptive_max_pool3d(x, 2, return_mask=True), [X5]),
    "max_unpool1d": (lambda F, T, x: _unpool_chain(F.max_pool1d, F.max_unpool1d, 3, 2, 1)(x), [(2, 3, 11)]),
    "max_unpool1d_output_size": (lambda F, T, x: _unpool_chain(
        F.max_pool1d, F.max_unpool1d, 2, 2, 0, output_size=[2, 3, 11])(x), [(2, 3, 11)]),
    "max_unpool2d": (lambda F, T, x: _unpool_chain(F.max_pool2d, F.max_unpool2d, 2, 2, 0, output_size=[6, 7])(x),
                     [(2, 3, 6, 7)]),
    "max_unpool2d_overlapping": (lambda F, T, x: _unpool_chain(
        F.max_pool2d, F.max_unpool2d, 3, 2, 1, output_size=[6, 7])(x), [(2, 3, 6, 7)]),
    "max_unpool3d": (lambda F, T, x: _unpool_chain(F.max_pool3d, F.max_unpool3d, 2, 2, 0, output_size=[4, 5, 6])(x),
                     [X5]),
    "max_unpool3d_nc_output_size": (lambda F, T, x: _unpool_chain(
        F.max_pool3d, F.max_unpool3d, [2, 3, 2], [2, 2, 3], [1, 1, 0], output_size=[2, 3, 4, 5, 6])(x), [X5]),
    "max_unpool2d_repeated_index": (lambda F, T, x: F.max_unpool2d(
        x, T([[[[0, 5], [5, 15]]]]), 2), [(1, 1, 2, 2)]),
    "bicubic_trilinear_nearest_area": None,  # filled below
}
del CASES["bicubic_trilinear_nearest_area"]
for _i, _kw in enumerate([dict(size=[8, 11]), dict(size=[3, 4]), dict(scale_factor=1.7),
                          dict(scale_factor=[0.6, 2.3]), dict(size=[1, 9])]):
    for _ac in (False, True):
        CASES[f"bicubic{_i}_align_corners_{_ac}"] = (
            lambda F, T, x, kw=_kw, ac=_ac: F.interpolate(x, mode="bicubic", align_corners=ac, **kw), [(2, 3, 5, 7)])
CASES.update({
    "bicubic_nhwc": (lambda F, T, x: F.interpolate(x, size=[4, 9], mode="bicubic", data_format="NHWC"),
                     [(2, 5, 7, 3)]),
    "trilinear": (lambda F, T, x: F.interpolate(x, size=[7, 4, 9], mode="trilinear"), [X5]),
    "trilinear_align_corners": (lambda F, T, x: F.interpolate(
        x, scale_factor=[1.5, 0.7, 2], mode="trilinear", align_corners=True), [X5]),
    "trilinear_align_mode_1": (lambda F, T, x: F.interpolate(x, size=[3, 8, 4], mode="trilinear", align_mode=1),
                               [X5]),
    "nearest_5d_ndhwc": (lambda F, T, x: F.interpolate(x, size=[3, 8, 4], data_format="NDHWC"), [X5L]),
    "area_5d": (lambda F, T, x: F.interpolate(x, size=[3, 4, 5], mode="area"), [X5]),
})


def inputs_of(shapes):
    """Deterministic float64 inputs (sines of a ramp, no RNG, so paddle saw the same)."""
    return [np.sin(np.arange(np.prod(s)) * 0.37 + i).reshape(s) * 1.5 for i, s in enumerate(shapes)]


def fingerprint(a, k=0.91):
    """A weighted sum that moves with every entry of `a`."""
    return float((np.asarray(a, np.float64).ravel() * np.cos(np.arange(a.size) * k)).sum())
# ---- end of cases


PADDLE = {  # name: (output shape, fingerprints: output, mask (if any), each input"s gradient)
    "conv3d_groups_stride_dilation": ([2, 6, 2, 2, 8],
        [-9.87278175744, -18.93998309699, 41.5856895636, -0.08498087068869]),
    "conv3d_same_ndhwc": ([2, 2, 3, 3, 4], [135.2802996405, 8.351920944626, -0.03611274353033, 1.431936184331]),
    "conv3d_six_pads": ([2, 2, 2, 6, 2], [177.5559361153, 4.424935190066, -0.205394601184]),
    "conv3d_pairs_depthwise": ([2, 6, 4, 5, 3], [180.7404550818, -14.36569919395, 2.973282596948, 5.858866783758]),
    "conv3d_valid": ([2, 2, 3, 3, 2], [259.8875330344, 0.8684657106944, 1.945816022675]),
    "convT3d_output_padding": ([2, 3, 5, 8, 5], [-0.4620415931112, 32.61846357836, -33.93935257674, -1.187412909611]),
    "convT3d_groups_same": ([2, 4, 5, 4, 5], [7.107022679356, -1.506924540059, -0.5132980572396, -0.6513307141825]),
    "convT3d_output_size_ndhwc": ([2, 5, 16, 6, 5], [1.394428388332, 0.7618729346678, 0.05131508874747]),
    "convT3d_six_pads_depthwise": ([2, 4, 8, 6, 8], [20.04838890638, -3.285827233282, 1.628085385055, -1.522492815589]),
    "max_pool3d_mask": ([2, 3, 2, 3, 3], [-0.1162330540641, -105.7826151547, 27.12104847924]),
    "max_pool3d_ceil": ([2, 3, 2, 2, 3], [2.029405066748, -2.066498499498]),
    "max_pool3d_pads_mask": ([2, 3, 3, 2, 3], [0.9501513020952, -22.17254517887, -7.085470174062]),
    "max_pool3d_same_ndhwc": ([2, 2, 3, 3, 3], [0.7455205869796, 1.508414418282]),
    "max_pool3d_six_pads": ([2, 3, 4, 3, 4], [26.21232668283, 13.72537744508]),
    "avg_pool3d_exclusive": ([2, 3, 2, 3, 3], [0.3834510113022, -0.6160214001084]),
    "avg_pool3d_inclusive_ceil": ([2, 3, 3, 3, 3], [2.834148823353, -0.3506215658667]),
    "avg_pool3d_divisor": ([2, 3, 5, 6, 7], [1.524835035683, 0.2739638309059]),
    "avg_pool3d_same_ndhwc": ([2, 2, 3, 3, 3], [-1.946153938289, -0.0982977753943]),
    "avg_pool3d_six_pads": ([2, 3, 2, 3, 3], [-0.4221223500315, -0.08047941529461]),
    "adaptive_avg_pool3d": ([2, 3, 3, 5, 4], [-1.953867162452, -0.8385894591918]),
    "adaptive_avg_pool3d_ndhwc": ([2, 4, 4, 4, 3], [-0.6072293860171, 0.0223467692758]),
    "adaptive_max_pool3d_mask": ([2, 3, 3, 4, 5], [0.6018163371702, 70.55607725231, 0.8433038958814]),
    "adaptive_max_pool3d_int": ([2, 3, 2, 2, 2], [-0.3043852845591, 73.14713918641, -0.8307973908249]),
    "max_unpool1d": ([2, 3, 11], [3.859144132124, 5.68328789752, 2.080672018213]),
    "max_unpool1d_output_size": ([2, 3, 11], [-2.368641600689, 1.553717212934, 2.29670511997]),
    "max_unpool2d": ([2, 3, 6, 7], [-5.055748423773, 13.07984943864, -2.644608611738]),
    "max_unpool2d_overlapping": ([2, 3, 6, 7], [3.056818437988, 13.26338631785, -6.754316289401]),
    "max_unpool3d": ([2, 3, 4, 5, 6], [-1.205601651271, 118.3549399184, 0.1620855352808]),
    "max_unpool3d_nc_output_size": ([2, 3, 4, 5, 6], [-6.106797054192, 9.367414416491, 2.366270631164]),
    "max_unpool2d_repeated_index": ([1, 1, 4, 4], [0.4654230055356, 1.220552200284]),
    "bicubic0_align_corners_False": ([2, 3, 8, 11], [-0.003146851694641, 4.551747074139]),
    "bicubic0_align_corners_True": ([2, 3, 8, 11], [0.07430890801265, 2.835034746648]),
    "bicubic1_align_corners_False": ([2, 3, 3, 4], [-0.08982288781351, -0.2696176958055]),
    "bicubic1_align_corners_True": ([2, 3, 3, 4], [-0.1560715215535, -0.1597892476557]),
    "bicubic2_align_corners_False": ([2, 3, 8, 11], [-0.004025852014969, 2.946333065595]),
    "bicubic2_align_corners_True": ([2, 3, 8, 11], [0.07430890801265, 2.835034746648]),
    "bicubic3_align_corners_False": ([2, 3, 3, 16], [5.2969080193, -7.14719339048]),
    "bicubic3_align_corners_True": ([2, 3, 3, 16], [5.249799851781, -6.535569984174]),
    "bicubic4_align_corners_False": ([2, 3, 1, 9], [0.7509969956127, 1.896905829679]),
    "bicubic4_align_corners_True": ([2, 3, 1, 9], [0.6111963785456, 1.376631384883]),
    "bicubic_nhwc": ([2, 4, 9, 3], [0.2264737323344, 1.986582855293]),
    "trilinear": ([2, 3, 7, 4, 9], [-0.7145601872351, 6.690213108506]),
    "trilinear_align_corners": ([2, 3, 6, 3, 12], [-3.299312535018, 4.748383436671]),
    "trilinear_align_mode_1": ([2, 3, 3, 8, 4], [0.4453595328076, 0.4505130663026]),
    "nearest_5d_ndhwc": ([2, 3, 8, 4, 3], [0.23435583051, -0.1544676538162]),
    "area_5d": ([2, 3, 3, 4, 5], [-1.593185528403, -1.91051850693]),
}


def _run(fn, arrays):
    """fn's outputs (a list) and each input's gradient of sum(out * cos(k / 2))."""
    ts = [pycoll.to_tensor(a, stop_gradient=False) for a in arrays]
    outs = fn(*ts)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    r = np.cos(np.arange(outs[0].size) * 0.5).reshape(outs[0].shape)
    (outs[0] * pycoll.to_tensor(r)).sum().backward()
    return [o.numpy() for o in outs], [t.grad.numpy() for t in ts], r


_ROUNDED_BY_PADDLE = ("avg_pool3d", "bicubic", "adaptive_avg", "area")  # see the module's docstring


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_paddle(name):
    fn, shapes = CASES[name]
    outs, grads, _ = _run(lambda *ts: fn(F, pycoll.to_tensor, *ts), inputs_of(shapes))
    shape, want = PADDLE[name]
    assert list(outs[0].shape) == shape
    got = [fingerprint(o) for o in outs] + [fingerprint(g, 1.3) for g in grads]
    n_out = len(outs)
    np.testing.assert_allclose(got[:n_out], want[:n_out], rtol=1e-10, atol=1e-10)
    rounded = any(name.startswith(prefix) or prefix in name for prefix in _ROUNDED_BY_PADDLE)
    np.testing.assert_allclose(got[n_out:], want[n_out:], rtol=1e-6 if rounded else 1e-10, atol=1e-10)


def check_gradients(fn, arrays, directions=2, eps=1e-6):
    """fn's gradients (of sum(out * r)) against central differences along random directions."""
    _, grads, r = _run(fn, arrays)
    rng = np.random.default_rng(5)
    for i, (a, g) in enumerate(zip(arrays, grads)):
        for _ in range(directions):
            v = rng.standard_normal(a.shape)
            sides = []
            for sign in (1, -1):
                moved = [b + sign * eps * v if j == i else b for j, b in enumerate(arrays)]
                with pycoll.no_grad():
                    out = fn(*[pycoll.to_tensor(b) for b in moved])
                out = out[0] if isinstance(out, (list, tuple)) else out
                sides.append((out.numpy() * r).sum())
            numeric = (sides[0] - sides[1]) / (2 * eps)
            assert abs(numeric - (g * v).sum()) <= 1e-6 * max(1.0, abs(numeric)), (i, numeric, (g * v).sum())


def rand(*shape, seed=0):
    return np.random.default_rng(seed + len(shape) * 31 + sum(shape)).standard_normal(shape)


# ---- convolution ---------------------------------------------------------------------------------

def ref_conv3d(x, w, stride, pads, dilation, groups):
    """A 3-D convolution as one channel contraction per kernel offset, over strided slices of padded x."""
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    o, cg, *k = w.shape
    sizes = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    out, og = np.zeros((x.shape[0], o, *sizes)), o // groups
    for g in range(groups):
        for pos in itertools.product(*(range(n) for n in k)):
            cells = tuple(slice(p * d, p * d + s * (m - 1) + 1, s) for p, d, s, m in zip(pos, dilation, stride, sizes))
            part = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + cells]
            out[:, g * og:(g + 1) * og] += np.einsum("ncdhw,oc->nodhw", part, w[(slice(g * og, (g + 1) * og),
                                                                                  slice(None)) + pos])
    return out


CONV3D = {  # name: (stride, padding argument, its (before, after) pairs, dilation, groups)
    "plain": ([1, 1, 1], 0, [(0, 0)] * 3, [1, 1, 1], 1),
    "strided_padded": ([2, 1, 2], [1, 0, 2], [(1, 1), (0, 0), (2, 2)], [1, 1, 1], 1),
    "six_pads_dilated": ([1, 2, 1], [2, 0, 1, 1, 0, 1], [(2, 0), (1, 1), (0, 1)], [2, 1, 2], 1),
    "grouped": ([1, 1, 2], 1, [(1, 1)] * 3, [1, 2, 1], 2),
    "same": ([2, 2, 3], "SAME", [(1, 1), (0, 1), (0, 1)], [1, 1, 1], 1),  # D 5, H 6, W 7 by 3, 3, 2
}


@pytest.mark.parametrize("name", sorted(CONV3D))
@pytest.mark.parametrize("channel_last", [False, True])
def test_conv3d_matches_the_offset_loop_and_central_differences(name, channel_last):
    stride, padding, pairs, dilation, groups = CONV3D[name]
    x, w, b = rand(2, 4, 5, 6, 7), rand(6, 4 // groups, 3, 3, 2), rand(6)
    want = ref_conv3d(x, w, stride, pairs, dilation, groups) + b[None, :, None, None, None]
    if channel_last:
        def fn(x, w, b):
            return F.conv3d(x, w, b, stride, padding, dilation, groups, "NDHWC")
        x = x.transpose(0, 2, 3, 4, 1)
        want = want.transpose(0, 2, 3, 4, 1)
    else:
        def fn(x, w, b):
            return F.conv3d(x, w, b, stride, padding, dilation, groups)
    np.testing.assert_allclose(_run(fn, [x, w, b])[0][0], want, atol=1e-12)
    check_gradients(fn, [x, w, b])


@pytest.mark.parametrize("stride, padding, dilation, groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), ([2, 1, 3], [1, 0, 0, 2, 1, 1], [1, 2, 1], 2), (2, "VALID", 1, 1), (3, 2, 2, 2)])
def test_conv3d_transpose_is_the_adjoint_of_conv3d(stride, padding, dilation, groups):
    # <conv3d(x, w), y> = <x, conv3d_transpose(y, w)> with the output sized back to x
    x, w = rand(2, 4, 6, 7, 5), rand(6, 4 // groups, 3, 2, 3)
    y = F.conv3d(pycoll.to_tensor(x), pycoll.to_tensor(w), None, stride, padding, dilation, groups)
    y = rand(*y.shape, seed=1)
    back = F.conv3d_transpose(pycoll.to_tensor(y), pycoll.to_tensor(w), None, stride, padding, groups=groups,
                              dilation=dilation, output_size=list(x.shape[2:]))
    assert back.shape == list(x.shape)
    forward = F.conv3d(pycoll.to_tensor(x), pycoll.to_tensor(w), None, stride, padding, dilation, groups).numpy()
    np.testing.assert_allclose((x * back.numpy()).sum(), (forward * y).sum(), rtol=1e-12)
    check_gradients(lambda y, w: F.conv3d_transpose(y, w, None, stride, padding, groups=groups, dilation=dilation,
                                                    output_size=list(x.shape[2:])), [y, w])


def test_conv3d_layers():
    # reprs read off paddle 3.3.1 for the same constructions
    conv = nn.Conv3D(4, 6, 3, stride=2, padding=1, groups=2)
    assert repr(conv) == "Conv3D(4, 6, kernel_size=[3, 3, 3], stride=[2, 2, 2], padding=1, groups=2, data_format=NCDHW)"
    assert conv.weight.shape == [6, 2, 3, 3, 3] and conv.bias.shape == [6]
    flat = nn.Conv3D(4, 6, [1, 2, 3], data_format="NDHWC", bias_attr=False)
    assert repr(flat) == "Conv3D(4, 6, kernel_size=[1, 2, 3], data_format=NDHWC)" and flat.bias is None
    up = nn.Conv3DTranspose(4, 6, [2, 3, 2], stride=2, output_padding=1)
    assert repr(up) == "Conv3DTranspose(4, 6, kernel_size=[2, 3, 2], stride=[2, 2, 2], output_padding=1, " \
                       "data_format=NCDHW)"
    assert up.weight.shape == [4, 6, 2, 3, 2]
    assert repr(nn.Conv3DTranspose(2, 4, 3, groups=2, dilation=2)) == \
        "Conv3DTranspose(2, 4, kernel_size=[3, 3, 3], dilation=[2, 2, 2], groups=2, data_format=NCDHW)"
    x = pycoll.to_tensor(rand(2, 4, 5, 6, 7).astype(np.float32))
    np.testing.assert_array_equal(conv(x).numpy(), F.conv3d(x, conv.weight, conv.bias, 2, 1, 1, 2).numpy())
    assert up(x).shape == [2, 6, 11, 14, 15]
    assert up(x, output_size=[10, 13, 14]).shape == [2, 6, 10, 13, 14]
    reflect = nn.Conv3D(4, 2, 3, padding=1, padding_mode="reflect")
    want = F.conv3d(F.pad(x, [1] * 6, mode="reflect"), reflect.weight, reflect.bias)
    np.testing.assert_array_equal(reflect(x).numpy(), want.numpy())


def test_conv3d_errors_name_the_argument():
    x, w = pycoll.to_tensor(rand(1, 4, 3, 3, 3)), pycoll.to_tensor(rand(2, 4, 2, 2, 2))
    with pytest.raises(ValueError, match="x must have 5 dimensions"):
        F.conv3d(pycoll.to_tensor(rand(1, 4, 3, 3)), w)
    with pytest.raises(ValueError, match="data_format must be 'NCDHW' or 'NDHWC'"):
        F.conv3d(x, w, data_format="NCHW")
    with pytest.raises(ValueError, match="groups=3"):
        F.conv3d(x, w, groups=3)
    with pytest.raises(ValueError, match="padding must be"):
        F.conv3d(x, w, padding=[1, 1])
    with pytest.raises(ValueError, match="stride must be"):
        F.conv3d(x, w, stride=[1, 1])
    with pytest.raises(ValueError, match="larger than the padded input"):
        F.conv3d(x, pycoll.to_tensor(rand(2, 4, 4, 2, 2)))
    with pytest.raises(ValueError, match=r"output_size \[9, 9, 9\] must lie in"):
        F.conv3d_transpose(x, pycoll.to_tensor(rand(4, 2, 2, 2, 2)), stride=2, output_size=[9, 9, 9])
    with pytest.raises(ValueError, match="output_size"):  # paddle's conv3d_transpose takes no single size
        F.conv3d_transpose(x, pycoll.to_tensor(rand(4, 2, 2, 2, 2)), output_size=[4])
    with pytest.raises(ValueError, match="data_format must be one of"):
        nn.Conv3D(4, 2, 3, data_format="NCHW")


# ---- pooling -------------------------------------------------------------------------------------

def ref_pool3d(x, kernel, stride, pads, kind):
    """Max (padding never wins) or exclusive mean over each window, output cell by output cell."""
    n, c, *sizes = x.shape
    outs = [(m + b + e - k) // s + 1 for m, k, s, (b, e) in zip(sizes, kernel, stride, pads)]
    out = np.zeros((n, c, *outs))
    for cell in itertools.product(*(range(o) for o in outs)):
        box = tuple(slice(max(i * s - b, 0), min(i * s - b + k, m))
                    for i, s, (b, _), k, m in zip(cell, stride, pads, kernel, sizes))
        part = x[(Ellipsis,) + box].reshape(n, c, -1)
        out[(Ellipsis,) + cell] = part.max(axis=-1) if kind == "max" else part.mean(axis=-1)
    return out


@pytest.mark.parametrize("kernel, stride, padding, pads", [
    ([2, 2, 2], [2, 2, 2], 0, [(0, 0)] * 3), ([3, 2, 3], [1, 2, 2], [1, 0, 1], [(1, 1), (0, 0), (1, 1)]),
    ([2, 3, 2], [2, 1, 3], [1, 0, 0, 1, 1, 0], [(1, 0), (0, 1), (1, 0)])])
def test_pool3d_matches_the_window_loop(kernel, stride, padding, pads):
    x = rand(2, 3, 5, 6, 7)
    (out, mask), grads, _ = _run(lambda t: F.max_pool3d(t, kernel, stride, padding, return_mask=True), [x])
    np.testing.assert_allclose(out, ref_pool3d(x, kernel, stride, pads, "max"), atol=1e-12)
    assert mask.dtype == np.int32  # flat d * H * W + h * W + w of each maximum
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 3, -1), mask.reshape(2, 3, -1), -1),
                                  out.reshape(2, 3, -1))
    check_gradients(lambda t: F.max_pool3d(t, kernel, stride, padding), [x])
    avg = F.avg_pool3d(pycoll.to_tensor(x), kernel, stride, padding).numpy()
    np.testing.assert_allclose(avg, ref_pool3d(x, kernel, stride, pads, "avg"), atol=1e-12)
    check_gradients(lambda t: F.avg_pool3d(t, kernel, stride, padding, exclusive=False, divisor_override=2.5), [x])
    # channels last is the same pool
    last = F.max_pool3d(pycoll.to_tensor(x.transpose(0, 2, 3, 4, 1)), kernel, stride, padding, data_format="NDHWC")
    np.testing.assert_allclose(last.numpy().transpose(0, 4, 1, 2, 3), out, atol=1e-12)


def test_max_pool_window_of_padding_alone_holds_float32s_lowest():
    # paddle 3.3.1, float64 too: -3.4028234663852886e+38 (its kernel starts from float32's lowest)
    x = pycoll.to_tensor(rand(1, 1, 5, 5, 5))
    out = F.max_pool3d(x, 2, 3, 1, ceil_mode=True).numpy()
    assert out.shape == (1, 1, 3, 3, 3) and out.min() == np.finfo(np.float32).min
    assert F.max_pool1d(pycoll.to_tensor(rand(1, 1, 5)), 2, 3, 1, ceil_mode=True).numpy()[0, 0, -1] == \
        np.finfo(np.float32).min


@pytest.mark.parametrize("size", [[2, 3, 4], [3, None, 5], 1])
def test_adaptive_pools_3d_match_the_window_loop(size):
    x = rand(2, 3, 5, 6, 7)
    sizes = [size] * 3 if isinstance(size, int) else [n if s is None else s for s, n in zip(size, x.shape[2:])]
    spans = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)] for n, o in zip(x.shape[2:], sizes)]
    means, maxes = np.zeros((2, 3, *sizes)), np.zeros((2, 3, *sizes))
    for cell in itertools.product(*(range(o) for o in sizes)):
        part = x[(Ellipsis,) + tuple(slice(*axis[i]) for axis, i in zip(spans, cell))].reshape(2, 3, -1)
        means[(Ellipsis,) + cell], maxes[(Ellipsis,) + cell] = part.mean(-1), part.max(-1)
    np.testing.assert_allclose(F.adaptive_avg_pool3d(pycoll.to_tensor(x), size).numpy(), means, atol=1e-12)
    out, mask = F.adaptive_max_pool3d(pycoll.to_tensor(x), size, return_mask=True)
    np.testing.assert_allclose(out.numpy(), maxes, atol=1e-12)
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 3, -1), mask.numpy().reshape(2, 3, -1), -1),
                                  maxes.reshape(2, 3, -1))
    channels_last = F.adaptive_avg_pool3d(pycoll.to_tensor(x.transpose(0, 2, 3, 4, 1)), size, "NDHWC")
    np.testing.assert_allclose(channels_last.numpy().transpose(0, 4, 1, 2, 3), means, atol=1e-12)
    check_gradients(lambda t: F.adaptive_avg_pool3d(t, size), [x])
    check_gradients(lambda t: F.adaptive_max_pool3d(t, size), [x])


def test_pool3d_layers():
    # reprs read off paddle 3.3.1
    layers = {"MaxPool3D(kernel_size=3, stride=2, padding=1)": nn.MaxPool3D(3, 2, 1),
              "AvgPool3D(kernel_size=2, stride=None, padding=0)": nn.AvgPool3D(2),
              "AdaptiveAvgPool3D(output_size=[2, None, 3])": nn.AdaptiveAvgPool3D([2, None, 3]),
              "AdaptiveMaxPool3D(output_size=2, return_mask=True)": nn.AdaptiveMaxPool3D(2, return_mask=True),
              "Pad3D(padding=[1, 1, 1, 1, 1, 1], mode=constant, value=0.0, data_format=NCDHW)": nn.Pad3D(1)}
    for text, layer in layers.items():
        assert repr(layer) == text
    x = pycoll.to_tensor(rand(2, 3, 5, 6, 7))
    out, mask = nn.MaxPool3D(3, 2, 1, return_mask=True)(x)
    want, want_mask = F.max_pool3d(x, 3, 2, 1, return_mask=True)
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    np.testing.assert_array_equal(mask.numpy(), want_mask.numpy())
    np.testing.assert_array_equal(nn.AvgPool3D(2, 1, 1, ceil_mode=True, exclusive=False, divisor_override=3)(x).numpy(),
                                  F.avg_pool3d(x, 2, 1, 1, True, False, 3).numpy())
    np.testing.assert_array_equal(nn.AdaptiveAvgPool3D([2, None, 3])(x).numpy(),
                                  F.adaptive_avg_pool3d(x, [2, None, 3]).numpy())
    assert [t.shape for t in nn.AdaptiveMaxPool3D(2, return_mask=True)(x)] == [[2, 3, 2, 2, 2]] * 2
    assert nn.Pad3D([1, 0, 2, 0, 0, 3])(x).shape == [2, 3, 8, 8, 8]


def test_pool3d_errors_name_the_argument():
    x = pycoll.to_tensor(rand(1, 2, 4, 4, 4))
    with pytest.raises(ValueError, match="return_mask needs data_format='NCDHW'"):
        F.max_pool3d(x, 2, return_mask=True, data_format="NDHWC")
    with pytest.raises(ValueError, match="kernel_size must be"):
        F.max_pool3d(x, [2, 2])
    with pytest.raises(ValueError, match="x must have 5 dimensions"):
        F.avg_pool3d(pycoll.to_tensor(rand(2, 4, 4, 4)), 2)
    with pytest.raises(ValueError, match="divisor_override"):
        F.avg_pool3d(x, 2, divisor_override=0)
    # a kernel up to a stride longer than the input: one window over what it holds (paddle's)
    np.testing.assert_allclose(F.avg_pool3d(x, 5).numpy().reshape(2), x.numpy().mean(axis=(2, 3, 4)).reshape(2),
                               rtol=1e-6)
    with pytest.raises(ValueError, match=r"kernel_size \[9, 9, 9\] at stride \[1, 1, 1\] leaves no window"):
        F.avg_pool3d(x, 9, 1)
    with pytest.raises(ValueError, match="output_size must be"):
        F.adaptive_avg_pool3d(x, [2, 2])
    with pytest.raises(ValueError, match="output_size must be"):
        F.adaptive_max_pool3d(x, [2, 0, 2])


# ---- max_unpool ----------------------------------------------------------------------------------

@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("odd", [False, True])
def test_max_unpool_puts_the_maxima_back(nd, odd):
    # even sizes: the default output, (in - 1) * stride - 2 * padding + kernel_size per axis, is x's
    # own; odd sizes need output_size to hold every index of the mask
    x = rand(2, 3, *([7, 5, 9] if odd else [6, 4, 8])[:nd])
    pool, unpool = [(F.max_pool1d, F.max_unpool1d), (F.max_pool2d, F.max_unpool2d),
                    (F.max_pool3d, F.max_unpool3d)][nd - 1]
    out, mask = pool(pycoll.to_tensor(x), 2, 2, 0, return_mask=True)
    size = list(x.shape[2:]) if odd else None
    back = unpool(out, mask, 2, output_size=size).numpy()
    want = np.zeros((6, x[0, 0].size))
    np.put_along_axis(want, mask.numpy().reshape(6, -1), out.numpy().reshape(6, -1), axis=1)
    np.testing.assert_array_equal(back, want.reshape(x.shape))
    check_gradients(lambda t: unpool(t, mask, 2, output_size=size), [out.numpy()])


def test_max_unpool_layers_and_repeated_indices():
    # reprs read off paddle 3.3.1; where an index repeats the last value written stays (paddle's CPU
    # kernel), and every x still gets its place's gradient
    assert repr(nn.MaxUnPool1D(2)) == "MaxUnPool1D(output_size=None)"
    assert repr(nn.MaxUnPool3D(2, output_size=[4, 4, 4])) == "MaxUnPool3D(output_size=[4, 4, 4])"
    x = pycoll.to_tensor(np.array([[[[1.0, 2.0], [3.0, 4.0]]]]), stop_gradient=False)
    idx = pycoll.to_tensor(np.array([[[[0, 5], [5, 15]]]]))
    out = nn.MaxUnPool2D(2)(x, idx)
    np.testing.assert_array_equal(out.numpy().ravel()[[0, 5, 15]], [1, 3, 4])
    (out * pycoll.to_tensor(np.arange(16.0).reshape(1, 1, 4, 4))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy().ravel(), [0, 5, 5, 15])
    y = pycoll.to_tensor(rand(1, 2, 2, 3, 2))
    pooled, mask = F.max_pool3d(y, 2, 1, 0, return_mask=True)
    np.testing.assert_array_equal(nn.MaxUnPool3D(2, 1, output_size=[2, 3, 2])(pooled, mask).numpy(),
                                  F.max_unpool3d(pooled, mask, 2, 1, output_size=[2, 3, 2]).numpy())


def test_max_unpool_errors_name_the_argument():
    x = pycoll.to_tensor(rand(1, 1, 2, 2))
    idx = pycoll.to_tensor(np.array([[[[0, 1], [4, 5]]]]))
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 16\)"):
        F.max_unpool2d(x, pycoll.to_tensor(np.array([[[[0, 1], [4, 16]]]])), 2)
    with pytest.raises(ValueError, match="indices must have x's shape"):
        F.max_unpool2d(x, pycoll.to_tensor(np.zeros((1, 1, 2, 3), np.int64)), 2)
    with pytest.raises(TypeError, match="indices must hold integers"):
        F.max_unpool2d(x, pycoll.to_tensor(np.zeros((1, 1, 2, 2))), 2)
    with pytest.raises(ValueError, match="output_size .* strictly between"):
        F.max_unpool2d(x, idx, 2, output_size=[6, 4])
    with pytest.raises(ValueError, match="output_size must be a list of 2"):
        F.max_unpool2d(x, idx, 2, output_size=[4, 4, 4])
    with pytest.raises(ValueError, match="data_format must be 'NCHW'"):
        F.max_unpool2d(x, idx, 2, data_format="NHWC")
    with pytest.raises(ValueError, match="padding must be"):
        F.max_unpool2d(x, idx, 2, padding=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="x must have 5 dimensions"):
        F.max_unpool3d(x, idx, 2)


# ---- resampling ----------------------------------------------------------------------------------

def test_bicubic_keeps_constants_and_samples_and_its_gradients_are_exact():
    x = rand(1, 2, 4, 5)
    # aligned corners at 2 * in - 1 points: every other output sample is an input sample
    out = F.interpolate(pycoll.to_tensor(x), size=[7, 9], mode="bicubic", align_corners=True).numpy()
    np.testing.assert_allclose(out[:, :, ::2, ::2], x, atol=1e-6)
    # the four weights of each output cell sum to 1, clamped at the edges too
    ones = F.interpolate(pycoll.to_tensor(np.ones((1, 1, 4, 5))), scale_factor=[2.5, 0.6], mode="bicubic").numpy()
    np.testing.assert_allclose(ones, np.ones((1, 1, 10, 3)), atol=1e-12)
    # Keys' kernel with a = -0.75 at a source index a quarter past cell 1 (4 -> 8 half-pixel: exactly 1.25)
    line = F.interpolate(pycoll.to_tensor(np.eye(4).reshape(4, 1, 4, 1)), size=[8, 1], mode="bicubic").numpy()
    t, a = 0.25, -0.75
    taps = [((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d > 1 else ((a + 2) * d - (a + 3)) * d * d + 1
            for d in (1 + t, t, 1 - t, 2 - t)]
    np.testing.assert_allclose(line[:, 0, 3, 0], taps, atol=1e-15)
    for kwargs in (dict(size=[6, 3]), dict(scale_factor=1.7, align_corners=True)):
        check_gradients(lambda t: F.interpolate(t, mode="bicubic", **kwargs), [x])
    check_gradients(lambda t: F.interpolate(t, size=[3, 7, 4], mode="trilinear"), [rand(1, 2, 4, 5, 3)])


def test_upsample_layers_and_resampling_errors():
    x = pycoll.to_tensor(rand(1, 2, 4, 5))
    np.testing.assert_array_equal(nn.Upsample(size=[6, 7], mode="bicubic", align_corners=True)(x).numpy(),
                                  F.interpolate(x, [6, 7], mode="bicubic", align_corners=True).numpy())
    x5 = pycoll.to_tensor(rand(1, 2, 4, 5, 3))
    np.testing.assert_allclose(F.interpolate(x5, size=[2, 5, 1], mode="area").numpy(),
                               F.adaptive_avg_pool3d(x5, [2, 5, 1]).numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="mode 'bicubic' takes a 4-D"):
        F.interpolate(x5, size=[2, 2, 2], mode="bicubic")
    with pytest.raises(ValueError, match="mode 'trilinear' takes a 5-D"):
        F.interpolate(x, size=[2, 2], mode="trilinear")
    with pytest.raises(ValueError, match="size must be a list of 3"):
        F.interpolate(x5, size=[2, 2], mode="trilinear")
