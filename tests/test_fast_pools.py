"""max_pool / avg_pool over strided slices of the padded input (pycoll.nn._pool_functional):
values, masks and gradients against plain loops over every window, written here in NumPy, for the
cases the slice-by-slice code must get right: ties (the first maximum in window order takes the
gradient, as paddle's), NaN (the first NaN wins), overlapping windows (their gradients add up),
padding that only ceil_mode reaches, channels-last layout, 3-D windows, float16 sums."""
import itertools

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F


def _windows(shape, kernel, stride, pads):
    """(out index, list of (input index or None for padding)) per window, cells in window order."""
    nd = len(kernel)
    outs = [(n + b + e - k) // s + 1 for n, k, s, (b, e) in zip(shape, kernel, stride, pads)]
    for o in itertools.product(*(range(v) for v in outs)):
        cells = []
        for pos in itertools.product(*(range(k) for k in kernel)):
            idx = tuple(o[d] * stride[d] + pos[d] - pads[d][0] for d in range(nd))
            cells.append(idx if all(0 <= i < n for i, n in zip(idx, shape)) else None)
        yield o, cells


def _max_reference(a, g, kernel, stride, pads):
    """Loops over [N, C, *spatial] a: the max, the flat mask index, the gradient of sum(out * g)."""
    n, c, *shape = a.shape
    outs = [(s + b + e - k) // t + 1 for s, k, t, (b, e) in zip(shape, kernel, stride, pads)]
    out, mask, grad = np.zeros((n, c, *outs), a.dtype), np.zeros((n, c, *outs), np.int32), np.zeros_like(a)
    for i, j in itertools.product(range(n), range(c)):
        for o, cells in _windows(shape, kernel, stride, pads):
            inside = [idx for idx in cells if idx is not None]
            vals = [a[(i, j) + idx] for idx in inside]
            nan = [v for v in vals if np.isnan(v)]
            best = inside[[k for k, v in enumerate(vals) if np.isnan(v)][0]] if nan else inside[int(np.argmax(vals))]
            out[(i, j) + o] = a[(i, j) + best]
            mask[(i, j) + o] = np.ravel_multi_index(best, shape)
            grad[(i, j) + best] += g[(i, j) + o]
    return out, mask, grad


def _run(fn, a, g, **kw):
    x = pycoll.to_tensor(a, stop_gradient=False)
    res = fn(x, **kw)
    y, mask = res if isinstance(res, tuple) else (res, None)
    (y * pycoll.to_tensor(g)).sum().backward()
    return y.numpy(), None if mask is None else mask.numpy(), x.grad.numpy()


@pytest.mark.parametrize("nd, kernel, stride, padding, ceil", [
    (2, [3, 3], [2, 2], 1, False),          # overlapping windows, padded
    (2, [2, 3], [1, 2], [0, 1, 1, 0], True),  # asymmetric padding, ceil_mode windows past the end
    (1, [3], [1], 1, True),
    (3, [2, 2, 2], [1, 2, 1], 0, False),
    (3, [3, 2, 2], [2, 1, 2], 1, True),       # 3-D through the host kernel: padded, overlapping, past the end
])
def test_max_pool_ties_and_nan_match_window_loops(nd, kernel, stride, padding, ceil):
    rng = np.random.default_rng(nd)
    shape = [2, 3] + [5, 6, 4][:nd]
    a = rng.integers(-2, 3, shape).astype(np.float64)  # few distinct values: ties in most windows
    a.flat[[1, 7, 20]] = np.nan
    fn = getattr(F, f"max_pool{nd}d")
    y, mask, grad = _run(fn, a, np.ones(1), kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil,
                         return_mask=True)
    g = rng.integers(1, 9, y.shape).astype(np.float64)  # exact sums of distinct gradients
    y, mask, grad = _run(fn, a, g, kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil,
                         return_mask=True)
    flat = [padding] * nd if isinstance(padding, int) else padding
    pads = [(flat[i], flat[i]) for i in range(nd)] if len(flat) == nd else [(flat[2 * i], flat[2 * i + 1]) for i in range(nd)]
    if ceil:  # the extra trailing cells ceil_mode reaches
        pads = [(b, e + (-(-(n + b + e - k) // s) * s - (n + b + e - k))) for n, k, s, (b, e)
                in zip(shape[2:], kernel, stride, pads)]
    ref_out, ref_mask, ref_grad = _max_reference(a, g, kernel, stride, pads)
    np.testing.assert_array_equal(y, ref_out)
    np.testing.assert_array_equal(mask, ref_mask)
    np.testing.assert_array_equal(grad, ref_grad)
    assert np.isnan(y).any() and (grad > 0).sum() < a.size  # the case held NaN windows and unpicked cells


def test_max_pool_nhwc_float16_equals_nchw():
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 3, (2, 4, 7, 5)).astype(np.float16)
    g = rng.integers(1, 5, (2, 4, 4, 3)).astype(np.float16)
    y, _, grad = _run(F.max_pool2d, a, g, kernel_size=3, stride=2, padding=1)
    ref_out, _, ref_grad = _max_reference(a.astype(np.float64), g.astype(np.float64), [3, 3], [2, 2], [(1, 1)] * 2)
    np.testing.assert_array_equal(y, ref_out.astype(np.float16))
    np.testing.assert_array_equal(grad, ref_grad.astype(np.float16))
    t = lambda v: np.ascontiguousarray(np.moveaxis(v, 1, -1))  # noqa: E731
    yl, _, gl = _run(F.max_pool2d, t(a), t(g), kernel_size=3, stride=2, padding=1, data_format="NHWC")
    np.testing.assert_array_equal(yl, t(y))
    np.testing.assert_array_equal(gl, t(grad))


@pytest.mark.parametrize("exclusive", [True, False])
def test_avg_pool_overlapping_windows_match_window_loops(exclusive):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 6, 7))
    g = rng.standard_normal((2, 3, 4, 4))
    y, _, grad = _run(F.avg_pool2d, a, g, kernel_size=3, stride=2, padding=1, ceil_mode=True, exclusive=exclusive)
    pads = [(1, 2), (1, 1)]  # ceil_mode reaches one more row
    ref_out, ref_grad = np.zeros_like(y), np.zeros_like(a)
    for o, cells in _windows(a.shape[2:], [3, 3], [2, 2], pads):
        inside = [idx for idx in cells if idx is not None]
        # paddle's non-exclusive count: a window's cells from its start up to the input's end plus
        # the leading padding (1), per axis
        count = len(inside) if exclusive else np.prod([min(o[d] * 2 + 3, a.shape[2 + d] + 2) - o[d] * 2
                                                       for d in range(2)])
        ref_out[(..., *o)] = sum(a[(..., *idx)] for idx in inside) / count
        for idx in inside:
            ref_grad[(..., *idx)] += g[(..., *o)] / count
    np.testing.assert_allclose(y, ref_out, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-15)


def test_avg_pool_float16_sums_in_float32():
    """2048 + 1 is 2048 in float16: a sum of [2048, 1 x 7] added in float16 would be 2048 (mean 256);
    in float32 it is 2055, whose mean 256.875 rounds to 257 in float16."""
    a = np.array([[[2048] + [1] * 7]], np.float16)
    np.testing.assert_array_equal(F.avg_pool1d(pycoll.to_tensor(a), 8).numpy(), [[[257]]])
