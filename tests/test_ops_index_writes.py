"""take, index_sample, index_put(_), scatter_reduce, scatter_add(_), fill_diagonal_,
diagonal_scatter, slice_scatter and select_scatter; expected values measured on paddle 3.3.1
(CPU), gradients against central differences or paddle's."""
import numpy as np
import pytest
from test_gradcheck import gradcheck

import pycoll

X = np.arange(12, dtype="float32").reshape(3, 4)
SRC = np.arange(1, 13, dtype="float32").reshape(3, 4)
IDX = [[0, 1, 0, 0], [2, 0, 0, 1]]


def test_take_and_index_sample():
    x = pycoll.to_tensor(X)
    assert pycoll.take(x, pycoll.to_tensor([[0, -1], [5, 11]])).numpy().tolist() == [[0, 11], [5, 11]]
    assert x.take(pycoll.to_tensor([13, -14]), mode="wrap").numpy().tolist() == [1, 10]
    assert pycoll.take(x, pycoll.to_tensor([13, -14]), mode="clip").numpy().tolist() == [11, 0]
    with pytest.raises(ValueError, match="index must lie in"):
        pycoll.take(x, pycoll.to_tensor([12]))
    with pytest.raises(TypeError, match="int32 or int64"):
        pycoll.take(x, pycoll.to_tensor([1.0]))
    xg = pycoll.to_tensor(X, stop_gradient=False)
    (pycoll.take(xg, pycoll.to_tensor([1, 1, -1])) * pycoll.to_tensor([1.0, 2, 3])).sum().backward()
    assert xg.grad.numpy().tolist() == [[0, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3]]  # paddle's
    sampled = pycoll.index_sample(x, pycoll.to_tensor([[0, 0], [3, 1], [2, 2]]))
    assert sampled.numpy().tolist() == [[0, 0], [7, 5], [10, 10]]
    gradcheck(lambda t: pycoll.index_sample(t, pycoll.to_tensor([[0, 0], [3, 1], [2, 2]])), [X.astype("float64")])


def test_index_put_overwrites_or_accumulates():
    x = pycoll.to_tensor(X)
    rows, cols = pycoll.to_tensor([0, 2, 0]), pycoll.to_tensor([1, 1, 1])
    v = pycoll.to_tensor([10.0, 20.0, 30.0])
    expected = X.copy()
    expected[[0, 2], [1, 1]] = [30, 20]
    assert pycoll.index_put(x, (rows, cols), v).numpy().tolist() == expected.tolist()  # paddle's
    expected[[0, 2], [1, 1]] = [41, 29]
    assert pycoll.index_put(x, (rows, cols), v, accumulate=True).numpy().tolist() == expected.tolist()
    masked = pycoll.index_put(x, (pycoll.to_tensor([True, False, True]),), pycoll.to_tensor([-1.0]))
    assert masked.numpy().tolist() == [[-1] * 4, [4, 5, 6, 7], [-1] * 4]
    y = pycoll.to_tensor(X)
    assert y.index_put_((rows, cols), v, True) is y and y.numpy()[0, 1] == 41
    xg, vg = pycoll.to_tensor(X, stop_gradient=False), pycoll.to_tensor([10.0, 20.0, 30.0], stop_gradient=False)
    (pycoll.index_put(xg, (rows, cols), vg, True) * pycoll.to_tensor(SRC)).sum().backward()
    assert xg.grad.numpy().tolist() == SRC.tolist() and vg.grad.numpy().tolist() == [2, 10, 2]  # paddle's
    xg.clear_grad()
    vg.clear_grad()
    (pycoll.index_put(xg, (rows, cols), vg) * pycoll.to_tensor(SRC)).sum().backward()
    assert xg.grad.numpy()[[0, 2], [1, 1]].tolist() == [0, 0]  # paddle's; the value overwritten
    assert vg.grad.numpy().tolist() == [0, 10, 2]  # gets nothing (paddle 3.3.1: [2, 10, 2])


@pytest.mark.parametrize("reduce, include_self, expected", [  # paddle 3.3.1, into ones([3, 4])
    ("sum", True, [[2, 7, 11, 5], [1, 3, 1, 9], [6, 1, 1, 1]]),
    ("sum", False, [[1, 6, 10, 4], [1, 2, 1, 8], [5, 1, 1, 1]]),
    ("prod", True, [[1, 6, 21, 4], [1, 2, 1, 8], [5, 1, 1, 1]]),
    ("mean", True, [[1, 3.5, 3.6666667, 2.5], [1, 1.5, 1, 4.5], [3, 1, 1, 1]]),
    ("mean", False, [[1, 6, 5, 4], [1, 2, 1, 8], [5, 1, 1, 1]]),
    ("amin", False, [[1, 6, 3, 4], [1, 2, 1, 8], [5, 1, 1, 1]]),
    ("amax", True, [[1, 6, 7, 4], [1, 2, 1, 8], [5, 1, 1, 1]]),
])
def test_scatter_reduce_as_paddle(reduce, include_self, expected):
    out = pycoll.scatter_reduce(pycoll.ones([3, 4]), 0, pycoll.to_tensor(IDX), pycoll.to_tensor(SRC), reduce,
                                include_self=include_self)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_scatter_add_and_its_gradients():
    out = pycoll.scatter_add(pycoll.zeros([3, 4]), 0, pycoll.to_tensor(IDX), pycoll.to_tensor(SRC))
    assert out.numpy().tolist() == [[1, 6, 10, 4], [0, 2, 0, 8], [5, 0, 0, 0]]
    small = pycoll.zeros([3, 4]).scatter_reduce(1, pycoll.to_tensor([[0, 1], [1, 1]]), pycoll.to_tensor(SRC), "sum")
    assert small.numpy().tolist() == [[1, 2, 0, 0], [0, 11, 0, 0], [0, 0, 0, 0]]  # src read over index's extent
    z = pycoll.zeros([3, 4])
    assert z.scatter_add_(0, pycoll.to_tensor(IDX), pycoll.to_tensor(SRC)) is z and z.numpy()[0, 2] == 10
    b, s = pycoll.ones([3, 4]), pycoll.to_tensor(SRC, stop_gradient=False)
    b.stop_gradient = False
    (pycoll.scatter_reduce(b, 0, pycoll.to_tensor(IDX), s, "mean", include_self=False) * pycoll.to_tensor(SRC)
     ).sum().backward()
    assert b.grad.numpy().tolist() == [[0, 0, 0, 0], [5, 0, 7, 0], [0, 10, 11, 12]]  # paddle's
    assert s.grad.numpy()[:2].tolist() == [[1, 6, 1.5, 4], [9, 2, 1.5, 8]]  # paddle's (whose grad lacks row 2)
    gradcheck(lambda a, c: pycoll.scatter_add(a, 1, pycoll.to_tensor([[0, 0, 2], [1, 1, 1]]), c),
              [np.random.default_rng(0).random((2, 3)), np.random.default_rng(1).random((2, 3))])
    with pytest.raises(ValueError, match="reduce"):
        pycoll.scatter_reduce(b, 0, pycoll.to_tensor(IDX), s, "max")


@pytest.mark.parametrize("shape, offset, wrap, filled", [  # the places paddle 3.3.1 fills
    ([4, 3], 0, False, [(0, 0), (1, 1), (2, 2)]),
    ([7, 3], 0, True, [(0, 0), (1, 1), (2, 2), (4, 0), (5, 1), (6, 2)]),
    ([7, 3], 0, False, [(0, 0), (1, 1), (2, 2)]),
    ([3, 4], 1, False, [(0, 1), (1, 2), (2, 3)]),
    ([3, 4], -1, False, [(1, 0), (2, 1)]),
    ([5, 2], 1, True, [(0, 1), (3, 1)]),
    ([2, 3, 2], 0, False, [(0, 0, 0), (1, 1, 1)]),
])
def test_fill_diagonal_(shape, offset, wrap, filled):
    x = pycoll.zeros(shape)
    assert x.fill_diagonal_(5.0, offset=offset, wrap=wrap) is x
    expected = np.zeros(shape)
    for place in filled:
        expected[place] = 5
    assert x.numpy().tolist() == expected.tolist()


def test_fill_diagonal_gradient_and_the_scatters():
    a = pycoll.to_tensor(np.ones((3, 3)), stop_gradient=False)
    y = a * 2.0
    y.fill_diagonal_(0.0)
    y.sum().backward()
    assert a.grad.numpy().tolist() == (2 * (1 - np.eye(3))).tolist()
    d = pycoll.diagonal_scatter(pycoll.zeros([3, 4]), pycoll.to_tensor([1.0, 2, 3]), offset=1)
    assert d.numpy().tolist() == [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3]]
    d3 = pycoll.zeros([2, 3, 2]).diagonal_scatter(pycoll.to_tensor([[1.0, 2], [3, 4], [5, 6]]), axis1=0, axis2=2)
    assert d3.numpy().tolist() == [[[1, 0], [3, 0], [5, 0]], [[0, 2], [0, 4], [0, 6]]]
    s = pycoll.slice_scatter(pycoll.zeros([4, 4]), pycoll.ones([2, 2]), axes=[0, 1], starts=[0, 1], ends=[4, 4],
                             strides=[2, 2])
    assert s.numpy().tolist() == [[0, 1, 0, 1], [0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 0, 0]]
    assert pycoll.select_scatter(pycoll.zeros([2, 3]), pycoll.to_tensor([1.0, 2]), 1, 1).numpy().tolist() == \
        [[0, 1, 0], [0, 2, 0]]
    rng = np.random.default_rng(2)
    gradcheck(lambda t, v: pycoll.diagonal_scatter(t, v, offset=-1), [rng.random((3, 4)), rng.random(2)])
    gradcheck(lambda t, v: pycoll.slice_scatter(t, v, [1], [0], [4], [2]), [rng.random((3, 4)), rng.random((3, 2))])
    gradcheck(lambda t, v: pycoll.select_scatter(t, v, 0, -1), [rng.random((2, 3)), rng.random(3)])
    with pytest.raises(ValueError, match="y must have shape"):
        pycoll.diagonal_scatter(pycoll.zeros([3, 4]), pycoll.to_tensor([1.0, 2]))
    with pytest.raises(ValueError, match="index"):
        pycoll.select_scatter(pycoll.zeros([2, 3]), pycoll.to_tensor([1.0, 2]), 1, 3)
