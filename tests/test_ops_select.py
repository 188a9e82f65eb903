"""where, sort/argsort/topk, gather, split/chunk, tile/expand, numel/is_tensor, eye/linspace:
values against NumPy or paddle 3.3.1 (said where), errors, gradients against finite differences."""
import numpy as np
import pytest

import pycoll
from test_gradcheck import _rand, gradcheck

X = np.arange(12, dtype=np.float32).reshape(2, 6)


def _values(tensors):
    return [t.numpy().tolist() for t in tensors]


# ---- where --------------------------------------------------------------------------------

def test_where_picks_and_broadcasts():
    c = np.array([[True, False, True]])
    x, y = _rand(2, 3), _rand(3)
    out = pycoll.where(pycoll.to_tensor(c), pycoll.to_tensor(x), pycoll.to_tensor(y))
    np.testing.assert_array_equal(out.numpy(), np.where(c, x, y))
    f32 = pycoll.to_tensor([1.0, 2.0])
    scalar = pycoll.where(pycoll.to_tensor([True, False]), f32, 0.0)  # paddle 3.3.1: float32 [1, 0]
    assert scalar.dtype == np.float32 and scalar.numpy().tolist() == [1.0, 0.0]
    ints = pycoll.where(pycoll.to_tensor([True, False]), pycoll.to_tensor([1, 2]), 0)
    assert ints.dtype == np.int64 and ints.numpy().tolist() == [1, 0]


def test_where_with_the_condition_only_gives_indices():
    # paddle 3.3.1: one int64 tensor per dimension
    rows, cols = pycoll.where(pycoll.to_tensor([[True, False], [False, True]]))
    assert rows.dtype == np.int64 and rows.numpy().tolist() == [0, 1] and cols.numpy().tolist() == [0, 1]


def test_where_argument_errors():
    with pytest.raises(ValueError, match="condition"):
        pycoll.where(pycoll.to_tensor([1.0, 0.0]), pycoll.ones([2]), pycoll.zeros([2]))
    with pytest.raises(ValueError, match="both x and y"):
        pycoll.where(pycoll.to_tensor([True]), pycoll.ones([1]))


# ---- sort, argsort, topk ------------------------------------------------------------------

def test_sort_and_argsort_match_numpy():
    a = _rand(3, 5)
    t = pycoll.to_tensor(a)
    np.testing.assert_array_equal(pycoll.sort(t).numpy(), np.sort(a))
    np.testing.assert_array_equal(t.sort(axis=0, descending=True).numpy(), -np.sort(-a, axis=0))
    idx = pycoll.argsort(t, axis=0)
    assert idx.dtype == np.int64 and idx.stop_gradient
    np.testing.assert_array_equal(idx.numpy(), np.argsort(a, axis=0, kind="stable"))


def test_descending_order_keeps_ties_in_place():
    # paddle 3.3.1: argsort([1, 3, 1, 3], descending=True, stable=True) = [1, 3, 0, 2]
    t = pycoll.to_tensor([1.0, 3.0, 1.0, 3.0])
    assert pycoll.argsort(t, descending=True, stable=True).numpy().tolist() == [1, 3, 0, 2]
    assert pycoll.argsort(pycoll.to_tensor([3.0, 1.0, 2.0])).numpy().tolist() == [1, 2, 0]
    values, indices = pycoll.topk(t, 2)  # paddle 3.3.1: [3, 3] at [1, 3]
    assert values.numpy().tolist() == [3.0, 3.0] and indices.numpy().tolist() == [1, 3]


def test_topk_follows_paddle():
    t = pycoll.to_tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    values, indices = pycoll.topk(t, 2)  # the last axis by default
    assert values.numpy().tolist() == [[3.0, 2.0], [5.0, 4.0]]
    assert indices.dtype == np.int64 and indices.numpy().tolist() == [[0, 2], [1, 2]]
    values, indices = t.topk(1, axis=0, largest=False)
    assert values.numpy().tolist() == [[0.0, 1.0, 2.0]] and indices.numpy().tolist() == [[1, 0, 0]]
    with pytest.raises(ValueError, match="k must be"):
        pycoll.topk(pycoll.to_tensor([3.0, 1.0, 2.0]), 4)


def test_topk_gradient_reaches_the_picked_elements():
    x = pycoll.to_tensor([1.0, 2.0, 2.0], stop_gradient=False)
    pycoll.topk(x, 2)[0].sum().backward()  # paddle 3.3.1: [0, 1, 1]
    assert x.grad.numpy().tolist() == [0.0, 1.0, 1.0]


# ---- gather -------------------------------------------------------------------------------

def test_gather_follows_paddle():
    t = pycoll.to_tensor(X)
    np.testing.assert_array_equal(pycoll.gather(t, pycoll.to_tensor([1, 0, 1])).numpy(), X[[1, 0, 1]])
    assert pycoll.gather(t, pycoll.to_tensor([5, 0]), axis=1).numpy().tolist() == [[5.0, 0.0], [11.0, 6.0]]
    assert pycoll.gather(t, pycoll.to_tensor(1)).shape == [6]  # a 0-d index drops the axis
    assert t.gather(pycoll.to_tensor([[1], [0]])).shape == [2, 6]  # [N, 1] reads as [N]
    assert pycoll.gather(t, pycoll.to_tensor([1], dtype="int32"), axis=pycoll.to_tensor(1)).shape == [2, 1]


def test_gather_errors():
    t = pycoll.to_tensor(X)
    with pytest.raises(ValueError, match="index"):
        pycoll.gather(t, pycoll.to_tensor([1.0]))
    with pytest.raises(IndexError, match="out of range"):
        pycoll.gather(t, pycoll.to_tensor([5]))


def test_gather_adds_up_repeated_gradients():
    x = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    pycoll.gather(x, pycoll.to_tensor([1, 1, 0])).sum().backward()  # paddle 3.3.1
    assert x.grad.numpy().tolist() == [[1.0, 1.0], [2.0, 2.0]]


# ---- split, chunk, tile, expand -----------------------------------------------------------

def test_split_follows_paddle():
    t = pycoll.to_tensor(X)
    assert _values(pycoll.split(t, 3, axis=1)) == [p.tolist() for p in np.split(X, 3, axis=1)]
    pieces = pycoll.split(t, [1, -1, 2], axis=1)  # paddle 3.3.1: sizes 1, 3, 2
    assert [p.shape for p in pieces] == [[2, 1], [2, 3], [2, 2]]
    assert _values(pieces) == [p.tolist() for p in np.split(X, [1, 4], axis=1)]
    assert [p.shape for p in t.split(2, axis=-1)] == [[2, 3], [2, 3]]
    assert [p.shape for p in pycoll.split(t, 2, axis=pycoll.to_tensor(1))] == [[2, 3], [2, 3]]
    assert _values(pycoll.chunk(t, 2)) == [X[:1].tolist(), X[1:].tolist()]


@pytest.mark.parametrize("sections, match", [
    (4, "evenly"), ([1, 2], "add up"), ([-1, -1, 2], "one -1"), ([7, -1], "exceed"), ("2", "num_or_sections"),
])
def test_split_errors(sections, match):
    with pytest.raises((ValueError, TypeError), match=match):
        pycoll.split(pycoll.to_tensor(X), sections, axis=1)


def test_split_gradient_fills_unused_pieces_with_zeros():
    x = pycoll.to_tensor(X, stop_gradient=False)
    a, _, c = pycoll.split(x, [1, 3, 2], axis=1)
    (a.sum() * 2 + c.sum()).backward()
    assert x.grad.numpy().tolist() == [[2, 0, 0, 0, 1, 1]] * 2


def test_chunk_rejects_uneven_and_bad_counts():
    with pytest.raises(ValueError, match="evenly"):
        pycoll.chunk(pycoll.to_tensor(X), 4, axis=1)  # paddle 3.3.1 refuses it too
    with pytest.raises(TypeError, match="chunks"):
        pycoll.chunk(pycoll.to_tensor(X), 2.0)


def test_tile_and_expand_follow_paddle():
    # values from paddle 3.3.1
    assert pycoll.tile(pycoll.to_tensor([1, 2]), [2, 2]).numpy().tolist() == [[1, 2, 1, 2], [1, 2, 1, 2]]
    assert pycoll.to_tensor([[1, 2]]).tile([2]).numpy().tolist() == [[1, 2, 1, 2]]
    out = pycoll.expand(pycoll.to_tensor([[1], [2]]), [2, -1, 3])
    assert out.numpy().tolist() == [[[1, 1, 1], [2, 2, 2]]] * 2
    with pytest.raises(ValueError, match="-1"):
        pycoll.expand(pycoll.to_tensor([1, 2]), [-1, 2])
    with pytest.raises(ValueError, match="cannot expand"):
        pycoll.expand(pycoll.to_tensor([1, 2]), [3])
    e = pycoll.to_tensor([1.0]).expand([3])
    e[0] = 5.0  # a tensor of its own, not a read-only view
    assert e.numpy().tolist() == [5.0, 1.0, 1.0]


def test_numel_and_is_tensor():
    t = pycoll.to_tensor(X)
    n = pycoll.numel(t)
    assert n.shape == [] and n.dtype == np.int64 and n.item() == 12  # paddle 3.3.1: 0-d int64
    assert t.numel().item() == 12
    assert pycoll.is_tensor(t) and not pycoll.is_tensor(X) and not pycoll.is_tensor(1)


# ---- creation -----------------------------------------------------------------------------

def test_eye_and_linspace_follow_paddle():
    e = pycoll.eye(2, 3)
    assert e.dtype == np.float32 and e.numpy().tolist() == [[1, 0, 0], [0, 1, 0]]
    assert pycoll.eye(2, dtype="int32").dtype == np.int32
    np.testing.assert_array_equal(pycoll.eye(pycoll.to_tensor(3)).numpy(), np.eye(3))
    ls = pycoll.linspace(0, 1, 5)
    assert ls.dtype == np.float32 and ls.numpy().tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert pycoll.linspace(0, 10, 3, dtype="int64").numpy().tolist() == [0, 5, 10]
    assert pycoll.linspace(0, 10, 1).numpy().tolist() == [0.0]
    with pytest.raises(ValueError, match="num_rows"):
        pycoll.eye(-1)
    with pytest.raises(ValueError, match="num"):
        pycoll.linspace(0, 1, 2.5)


GRAD_CASES = {
    "where": (lambda x, y: pycoll.where(pycoll.to_tensor(np.array([[True, False, True]])), x, y),
              [_rand(2, 3), _rand(3)]),
    "where_scalar": (lambda x: pycoll.where(pycoll.to_tensor(np.array([True, False])), x, 0.0), [_rand(2)]),
    "sort": (lambda x: pycoll.sort(x, axis=0), [_rand(4, 3)]),
    "sort_descending": (lambda x: pycoll.sort(x, descending=True), [_rand(3, 4)]),
    "topk": (lambda x: pycoll.topk(x, 2)[0], [_rand(3, 4)]),
    "topk_axis0_smallest": (lambda x: pycoll.topk(x, 2, axis=0, largest=False)[0], [_rand(4, 3)]),
    "gather_repeats": (lambda x: pycoll.gather(x, pycoll.to_tensor([2, 0, 2])), [_rand(3, 2)]),
    "gather_axis1": (lambda x: pycoll.gather(x, pycoll.to_tensor([1, 1]), axis=1), [_rand(2, 3)]),
    "split": (lambda x: pycoll.concat(pycoll.split(x, [1, -1], axis=1)[::-1], axis=1), [_rand(2, 4)]),
    "chunk": (lambda x: pycoll.chunk(x, 2)[1] * pycoll.chunk(x, 2)[0], [_rand(4, 3)]),
    "tile": (lambda x: pycoll.tile(x, [2, 1, 3]), [_rand(2, 3)]),
    "expand": (lambda x: pycoll.expand(x, [2, 3, -1]), [_rand(3, 1)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradient(name):
    fn, inputs = GRAD_CASES[name]
    gradcheck(fn, [a.copy() for a in inputs])
