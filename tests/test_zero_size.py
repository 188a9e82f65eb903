"""Tensors with an empty dimension, through the layers and ops a training step meets (a rank's
empty shard, an empty cache, a batch filtered to nothing). Expected shapes and values are paddle
3.3.1's; where paddle refuses, pycoll refuses naming the op."""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F


def _empty(*shape):
    x = pycoll.ones(list(shape))
    x.stop_gradient = False
    return x


@pytest.mark.parametrize("layer, shape, out", [
    (lambda: nn.Conv2D(2, 4, 3, padding=1), [0, 2, 5, 5], [0, 4, 5, 5]),
    (lambda: nn.Conv1D(2, 4, 3), [0, 2, 5], [0, 4, 3]),
    (lambda: nn.Conv3D(2, 4, 1), [0, 2, 3, 3, 3], [0, 4, 3, 3, 3]),
    (lambda: nn.Conv2D(4, 4, 3, groups=2, data_format="NHWC"), [0, 5, 5, 4], [0, 3, 3, 4]),
    (lambda: nn.Conv2DTranspose(2, 4, 3), [0, 2, 5, 5], [0, 4, 7, 7]),
    (lambda: nn.GroupNorm(2, 4), [0, 4, 3, 3], [0, 4, 3, 3]),
    (lambda: nn.InstanceNorm2D(4), [0, 4, 3, 3], [0, 4, 3, 3]),
    (lambda: nn.AdaptiveMaxPool2D(1), [0, 4, 3, 3], [0, 4, 1, 1]),
    (lambda: (lambda x: F.unfold(x, 2)), [0, 4, 3, 3], [0, 16, 4]),
    (lambda: (lambda x: F.fold(x, [4, 4], 2)), [0, 8, 9], [0, 2, 4, 4]),
    (lambda: (lambda x: F.grid_sample(x, pycoll.zeros([0, 3, 3, 2]))), [0, 4, 3, 3], [0, 4, 3, 3]),
    (lambda: nn.Linear(0, 4), [2, 0], [2, 4]),
])
def test_layers_run_an_empty_batch_forward_and_backward(layer, shape, out):
    x = _empty(*shape)
    y = layer()(x)
    assert y.shape == out
    y.sum().backward()
    assert x.grad.shape == shape and not np.any(x.grad.numpy())


def test_batch_norm_passes_an_empty_batch_through_and_keeps_its_statistics():
    bn = nn.BatchNorm2D(4)
    bn.train()
    before = bn._mean.numpy().copy(), bn._variance.numpy().copy()
    x = _empty(0, 4, 3, 3)
    y = bn(x)
    y.sum().backward()
    assert y.shape == [0, 4, 3, 3] and x.grad.shape == [0, 4, 3, 3]
    np.testing.assert_array_equal(bn._mean.numpy(), before[0])
    np.testing.assert_array_equal(bn._variance.numpy(), before[1])
    assert F.affine_grid(pycoll.zeros([0, 2, 3]), [0, 1, 3, 3]).shape == [0, 3, 3, 2]


def test_reductions_over_nothing_give_paddles_values():
    e = _empty(0, 3)
    np.testing.assert_array_equal(pycoll.logsumexp(e, axis=0).numpy(), [-np.inf] * 3)
    assert pycoll.logcumsumexp(e, axis=0).shape == [0, 3]
    np.testing.assert_array_equal(pycoll.median(e, axis=0).numpy(), [np.nan] * 3)
    assert pycoll.median(e, axis=1).shape == [0] and pycoll.quantile(e, 0.5, axis=1).shape == [0]
    assert np.isnan(pycoll.nanmedian(e).numpy())
    np.testing.assert_array_equal(pycoll.linalg.cov(pycoll.ones([2, 0])).numpy(), np.full([2, 2], np.nan))
    np.testing.assert_array_equal(e.mean(axis=0).numpy(), [np.nan] * 3)
    for kwargs in ({"axis": 0}, {"axis": 1}, {}, {"axis": 0, "keepdim": True}):
        x = _empty(0, 3)
        pycoll.prod(x, **kwargs).sum().backward()
        assert x.grad.shape == [0, 3]
    with pytest.raises(ValueError, match=r"max: cannot reduce x of shape \[0, 3\] along axis 0, of size 0"):
        e.max(axis=0)


def test_empty_indexes_and_gather_nd_of_depth_0():
    x = pycoll.arange(12, dtype="float32").reshape([3, 4])
    assert x[[]].shape == [0, 4] and x[:, []].shape == [3, 0]
    x.stop_gradient = False
    rows = pycoll.gather_nd(x, pycoll.zeros([2, 0], dtype="int64"))  # each row of the index picks all of x
    assert rows.shape == [2, 3, 4]
    rows.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full([3, 4], 2.0))
    assert pycoll.gather_nd(pycoll.ones([0, 3]), pycoll.zeros([2, 0], dtype="int64")).shape == [2, 0, 3]


@pytest.mark.parametrize("call, words", [
    (lambda s: pycoll.split(s, 1), "split: x is 0-d, so it has no axis 0"),
    (lambda s: pycoll.chunk(s, 1), "chunk: x is 0-d"),
    (lambda s: pycoll.unbind(s), "unbind: x is 0-d"),
    (lambda s: pycoll.take_along_axis(s, pycoll.to_tensor(0), 0), "take_along_axis: x is 0-d"),
    (lambda s: pycoll.nonzero(s), "nonzero: x must have at least 1 dimension"),
])
def test_ops_along_an_axis_refuse_a_0d_tensor_by_name(call, words):
    with pytest.raises(ValueError, match=words):
        call(pycoll.to_tensor(2.0))
