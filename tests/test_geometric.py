"""pycoll.geometric (and paddle.incubate's segment names): values and gradients measured on
paddle 3.3.1's CPU build with the same calls (loss: sum(result * w))."""
import warnings

import numpy as np
import pytest

import pycoll
import pycoll.geometric as geo


def T(v, dtype=None, grad=False):
    t = pycoll.to_tensor(v, dtype=dtype)
    t.stop_gradient = not grad
    return t


W3 = [[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]]
DATA = [[1., 2., 3.], [3., 2., 1.], [4., 5., 6.], [4., 0., 6.]]

SEGMENTS = {  # paddle's result and gradient, ids [0, 0, 2, 2]
    "sum": ([[4, 4, 4], [0, 0, 0], [8, 5, 12]], [[1, 2, 3], [1, 2, 3], [7, 8, 9], [7, 8, 9]]),
    "mean": ([[2, 2, 2], [0, 0, 0], [4, 2.5, 6]], [[.5, 1, 1.5], [.5, 1, 1.5], [3.5, 4, 4.5], [3.5, 4, 4.5]]),
    "max": ([[3, 2, 3], [0, 0, 0], [4, 5, 6]], [[0, 2, 3], [1, 2, 0], [7, 8, 9], [7, 0, 9]]),
    "min": ([[1, 2, 1], [0, 0, 0], [4, 0, 6]], [[1, 2, 0], [0, 2, 3], [7, 0, 9], [7, 8, 9]]),
}


@pytest.mark.parametrize("op", sorted(SEGMENTS))
def test_segment_ops_equal_paddles(op):
    d = T(DATA, grad=True)
    out = getattr(geo, "segment_" + op)(d, T([0, 0, 2, 2], "int32"))
    (out * T(W3)).sum().backward()
    want, grad = SEGMENTS[op]
    np.testing.assert_allclose(out.numpy(), want)
    np.testing.assert_allclose(d.grad.numpy(), grad)
    assert getattr(pycoll.incubate, "segment_" + op) is getattr(geo, "segment_" + op)


def test_a_segment_of_infinite_rows_keeps_them():
    # paddle 3.3.1 (measured): segment_max of two -inf rows is -inf (not the lowest finite float)
    x = T([[-np.inf], [-np.inf], [1.0]])
    ids = T([0, 0, 2], "int64")
    assert geo.segment_max(x, ids).numpy().ravel().tolist() == [-np.inf, 0.0, 1.0]
    assert geo.segment_min(-x, ids).numpy().ravel().tolist() == [np.inf, 0.0, -1.0]


def test_segment_refusals():
    with pytest.raises(TypeError, match="segment_ids"):
        geo.segment_sum(T(DATA), T([0., 0., 1., 1.]))
    with pytest.raises(ValueError, match="4 entries"):
        geo.segment_sum(T(DATA), T([0, 1], "int64"))
    with pytest.raises(ValueError, match="reduce_op"):
        geo.send_u_recv(T(W3), T([0], "int64"), T([0], "int64"), reduce_op="prod")


X = [[0., 2., 3.], [1., 4., 5.], [2., 6., 7.]]
SRC, DST = [0, 1, 2, 0], [1, 2, 1, 0]
SEND_U_RECV = {
    "sum": ([[0, 2, 3], [2, 8, 10], [1, 4, 5]], [[5, 7, 9], [7, 8, 9], [4, 5, 6]]),
    "mean": ([[0, 2, 3], [1, 4, 5], [1, 4, 5]], [[3, 4.5, 6], [7, 8, 9], [2, 2.5, 3]]),
    "max": ([[0, 2, 3], [2, 6, 7], [1, 4, 5]], [[1, 2, 3], [7, 8, 9], [4, 5, 6]]),
    "min": ([[0, 2, 3], [0, 2, 3], [1, 4, 5]], [[5, 7, 9], [7, 8, 9], [0, 0, 0]]),
}


@pytest.mark.parametrize("op", sorted(SEND_U_RECV))
def test_send_u_recv_equals_paddles(op):
    x = T(X, grad=True)
    out = geo.send_u_recv(x, T(SRC, "int32"), T(DST, "int32"), reduce_op=op)
    (out * T(W3)).sum().backward()
    np.testing.assert_allclose(out.numpy(), SEND_U_RECV[op][0])
    np.testing.assert_allclose(x.grad.numpy(), SEND_U_RECV[op][1])


def test_send_u_recv_out_size():
    out = geo.send_u_recv(T(X), T(SRC, "int32"), T([1, 0, 1, 0], "int32"), out_size=2)
    np.testing.assert_allclose(out.numpy(), [[1, 6, 8], [2, 8, 10]])  # paddle's
    with pytest.raises(ValueError, match="past"):  # paddle: IndexError out of bound
        geo.send_u_recv(T(X), T(SRC, "int32"), T(DST, "int32"), out_size=2)


SEND_UE_RECV = {  # (message_op, reduce_op): result, x's gradient, y's gradient, y = [1, 2, 3, 4]
    ("add", "sum"): ([[4, 6, 7], [6, 12, 14], [3, 6, 7]], [[5, 7, 9], [7, 8, 9], [4, 5, 6]], [15, 24, 15, 6]),
    ("add", "max"): ([[4, 6, 7], [5, 9, 10], [3, 6, 7]], [[1, 2, 3], [7, 8, 9], [4, 5, 6]], [0, 24, 15, 6]),
    ("sub", "max"): ([[-4, -2, -1], [-1, 3, 4], [-1, 2, 3]], [[5, 2, 3], [7, 8, 9], [4, 5, 6]], [-4, -24, -15, -6]),
    ("sub", "min"): ([[-4, -2, -1], [-1, 1, 2], [-1, 2, 3]], [[5, 7, 9], [7, 8, 9], [4, 0, 0]], [-15, -24, -4, -6]),
    ("mul", "mean"): ([[0, 8, 12], [3, 10, 12], [2, 8, 10]], [[6, 10.5, 15], [14, 16, 18], [6, 7.5, 9]],
                      [14, 84, 40, 13]),
    ("div", "sum"): ([[0, .5, .75], [2 / 3, 4, 16 / 3], [.5, 2, 2.5]], [[4.25, 5.5, 6.75], [3.5, 4, 4.5],
                     [4 / 3, 5 / 3, 2]], [-28, -21, -8.888889, -0.8125]),
    ("div", "min"): ([[0, .5, .75], [0, 2, 7 / 3], [.5, 2, 2.5]], [[4.25, 5.5, .75], [3.5, 4, 4.5], [0, 5 / 3, 2]],
                     [-10, -21, -8, -0.8125]),
}


@pytest.mark.parametrize("ops", sorted(SEND_UE_RECV))
def test_send_ue_recv_equals_paddles(ops):
    x, y = T(X, grad=True), T([1., 2., 3., 4.], grad=True)
    out = geo.send_ue_recv(x, y, T(SRC, "int64"), T(DST, "int64"), message_op=ops[0], reduce_op=ops[1])
    (out * T(W3)).sum().backward()
    want, gx, gy = SEND_UE_RECV[ops]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), gy, rtol=1e-6)


SEND_UV = {  # result, x's gradient, y's gradient; loss weights arange(12).reshape(4, 3)
    "add": ([[2, 4, 5], [4, 5, 8], [4, 8, 9], [1, 3, 4]], [[9, 11, 13], [3, 4, 5], [6, 7, 8]],
            [[9, 10, 11], [6, 8, 10], [3, 4, 5]]),
    "mul": ([[0, 4, 6], [3, 4, 15], [4, 12, 14], [0, 2, 3]], [[9, 12, 15], [9, 4, 15], [12, 14, 16]],
            [[0, 20, 33], [12, 44, 62], [3, 16, 25]]),
    "div": ([[0, 1, 1.5], [1 / 3, 4, 5 / 3], [1, 3, 3.5], [0, 2, 3]], [[9, 10.5, 12], [1, 4, 5 / 3], [3, 3.5, 4]],
            [[0, -20, -33], [-3, -11, -15.5], [-1 / 3, -16, -2.7777778]]),
}


@pytest.mark.parametrize("op", sorted(SEND_UV))
def test_send_uv_equals_paddles(op):
    x, y = T(X, grad=True), T([[1., 1., 1.], [2., 2., 2.], [3., 1., 3.]], grad=True)
    out = geo.send_uv(x, y, T(SRC, "int32"), T(DST, "int32"), message_op=op)
    (out * T(np.arange(12, dtype=np.float32).reshape(4, 3))).sum().backward()
    want, gx, gy = SEND_UV[op]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), gy, rtol=1e-6)


def test_div_by_a_zero_weight_is_paddles_times_1e12_without_warnings():
    """paddle divides as x * (1 / (y + 1e-12)): 0 / 0 is 0 and 2 / 0 is 2 * float32(1e12)."""
    x = T([[0., 2., 3.], [1., 4., 5.]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        uv = geo.send_uv(x, x, T([0], "int64"), T([0], "int64"), message_op="div")
        ue = geo.send_ue_recv(x, T([[0.]]), T([0], "int64"), T([0], "int64"), message_op="div")
        neg = geo.send_ue_recv(x, T([[-1e-12]]), T([0], "int64"), T([0], "int64"), message_op="div")
    assert uv.numpy().tolist() == [[0.0, 1.0, 1.0]]  # paddle 3.3.1's, exactly
    assert ue.numpy().tolist() == [[0.0, 1999999991808.0, 3000000053248.0], [0.0, 0.0, 0.0]]
    np.testing.assert_array_equal(neg.numpy()[0], [np.nan, np.inf, np.inf])  # 1 / (y + 1e-12) = 1 / 0


def test_segment_ids_must_be_sorted():
    for ids, first in (([1, 0, 1], "segment_ids\\[0\\] = 1 > segment_ids\\[1\\] = 0"),
                       ([0, 2, 1], "segment_ids\\[1\\] = 2 > segment_ids\\[2\\] = 1")):
        for op in ("sum", "mean", "max", "min"):  # paddle: ValueError 'The segment ids should be sorted'
            with pytest.raises(ValueError, match="must be sorted, got " + first):
                getattr(geo, "segment_" + op)(T([[1., 2.], [3., 4.], [5., 6.]]), T(ids, "int64"))
    np.testing.assert_allclose(geo.send_u_recv(T([[1.], [2.]]), T([1, 0], "int64"), T([1, 0], "int64")).numpy(),
                               [[1.], [2.]])  # message passing takes edges in any order


def test_column_indices_named_range_errors_and_the_math_module():
    # paddle takes [E, 1] index columns (graph_khop_sampler hands its edges out so; probe p177)
    x = pycoll.to_tensor(np.arange(15.0).reshape(5, 3))
    column = geo.send_u_recv(x, pycoll.to_tensor([[0], [1], [1]]), pycoll.to_tensor([[1], [2], [2]]))
    flat = geo.send_u_recv(x, pycoll.to_tensor([0, 1, 1]), pycoll.to_tensor([1, 2, 2]))
    np.testing.assert_array_equal(column.numpy(), flat.numpy())
    ids = pycoll.to_tensor([[0], [0], [1], [1], [2]])
    np.testing.assert_array_equal(geo.segment_sum(x, ids).numpy(), geo.segment_sum(x, ids.reshape([-1])).numpy())
    # an index past the rows is named before any gather (it named index_select)
    with pytest.raises(ValueError, match=r"send_u_recv: src_index must lie in \[0, 5\) \(the rows of x\), got 7"):
        geo.send_u_recv(x, pycoll.to_tensor([0, 7]), pycoll.to_tensor([1, 2]))
    with pytest.raises(ValueError, match=r"send_uv: dst_index must lie in \[0, 2\) \(the rows of y\), got 2"):
        geo.send_uv(x, pycoll.ones([2, 3]), pycoll.to_tensor([0, 1]), pycoll.to_tensor([1, 2]))
    assert pycoll.geometric.math.segment_sum is geo.segment_sum  # paddle.geometric.math.segment_*
    from pycoll.geometric.math import segment_max
    assert segment_max is geo.segment_max
