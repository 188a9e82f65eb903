"""paddle's argument forms: one-element Tensors where ints or numbers go, dtype= and name=
keywords, argmax/unique/clip details; expected values measured on paddle 3.3.1 (CPU) and
written in, or worked out by hand."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F

NAN = np.nan


def test_argmax_keepdim_dtype_and_unique_with_nan():
    x = pycoll.to_tensor([[-1, 0.5], [1, 1.5]])
    assert pycoll.argmax(x, keepdim=True).shape == [1, 1] and pycoll.argmin(x, keepdim=True).shape == [1, 1]
    assert pycoll.argmax(pycoll.to_tensor([[[1.0, 2], [3, 0]]]), keepdim=True).numpy().tolist() == [[[2]]]
    i = pycoll.argmax(x, axis=1, dtype="int32")
    assert i.dtype == np.int32 and i.numpy().tolist() == [1, 1]
    with pytest.raises(ValueError, match="dtype"):
        pycoll.argmax(x, dtype="float32")
    # paddle keeps each NaN; its index/inverse/counts for NaNs are garbage, pycoll's say where each one is
    out, index, inverse, counts = pycoll.unique(pycoll.to_tensor([1.0, NAN, 2, NAN, 1]), return_index=True,
                                                return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(out.numpy(), [1, 2, NAN, NAN])
    assert index.numpy().tolist() == [0, 2, 1, 3] and inverse.numpy().tolist() == [0, 2, 1, 3, 0]
    assert counts.numpy().tolist() == [2, 1, 1, 1]
    # the values alone (a sort, without the rest): the same values, each NaN kept, empty stays empty
    np.testing.assert_array_equal(pycoll.unique(pycoll.to_tensor([1.0, NAN, 2, NAN, 1])).numpy(), [1, 2, NAN, NAN])
    assert pycoll.unique(pycoll.to_tensor([[3, 1], [3, 0]])).numpy().tolist() == [0, 1, 3]
    assert pycoll.unique(pycoll.zeros([0])).shape == [0]


def test_clip_bounds_and_dtypes():
    ints = pycoll.to_tensor([1, 3, 5, 7])
    r = pycoll.clip(ints, 2.5, 6.5)  # paddle: a float bound makes an integer x float32
    assert r.dtype == np.float32 and r.numpy().tolist() == [2.5, 3.0, 5.0, 6.5]
    r = pycoll.clip(ints, 2, 6)
    assert r.dtype == np.int64 and r.numpy().tolist() == [2, 3, 5, 6]
    x = pycoll.to_tensor([[1.0, -2.0], [3.0, 4.0]], stop_gradient=False)
    r = pycoll.clip(x, pycoll.to_tensor(-1.0), pycoll.to_tensor([1.0]))  # 0-d and [1] Tensors
    assert r.numpy().tolist() == [[1.0, -1.0], [1.0, 1.0]] and r.dtype == np.float32
    r.sum().backward()
    assert x.grad.numpy().tolist() == [[1.0, 0.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="min must be a number or a Tensor with one element"):
        pycoll.clip(x, pycoll.to_tensor([-1.0, 0.0]), 1.0)
    with pytest.raises(TypeError, match="max"):
        pycoll.clip(x, None, "1")


def test_dtype_keywords_cast_first():
    x = pycoll.to_tensor([[1.0, -2.0], [3.0, 4.0]], stop_gradient=False)
    s = F.softmax(x, dtype="float64")
    assert s.dtype == np.float64 and F.log_softmax(x, 1, "float64").dtype == np.float64
    np.testing.assert_allclose(s.numpy(), np.exp(x.numpy().astype(np.float64)) /
                               np.exp(x.numpy().astype(np.float64)).sum(1, keepdims=True), rtol=1e-15)
    s.sum().backward()
    assert x.grad.dtype == np.float32
    m = pycoll.mean(x, axis=1, dtype="float64")
    assert m.dtype == np.float64 and m.numpy().tolist() == [-0.5, 3.5]
    assert pycoll.mean(pycoll.to_tensor([1, 2]), dtype="float32").item() == 1.5  # not truncated


def test_name_is_accepted_where_paddle_has_it():
    assert pycoll.full([2], 1.0, name="w").numpy().tolist() == [1.0, 1.0]
    assert pycoll.ones([1], name="o").item() == 1.0 and pycoll.zeros([1], "int32", "z").dtype == np.int32
    assert bool(pycoll.allclose(pycoll.ones([2]), pycoll.ones([2]), name="a"))
    x = pycoll.to_tensor([[1.0, 2.0]])
    assert pycoll.reshape(x, [2], name="r").shape == [2] and pycoll.concat([x, x], 0, name="c").shape == [2, 2]
    assert pycoll.sum(x, name="s").item() == 3.0 and pycoll.matmul(x, x.T, name="m").item() == 5.0
    w = pycoll.to_tensor(np.eye(3, dtype=np.float32))
    assert F.embedding(pycoll.to_tensor([2]), w, name="e").numpy().tolist() == [[0.0, 0.0, 1.0]]


def test_one_element_tensors_where_ints_go():
    two = pycoll.to_tensor(2)
    assert F.one_hot(pycoll.to_tensor([1]), pycoll.to_tensor(3)).numpy().tolist() == [[0.0, 1.0, 0.0]]
    x = pycoll.to_tensor([[1.0, 2.0]])
    assert pycoll.concat([x, x], axis=pycoll.to_tensor(0)).shape == [2, 2]
    assert pycoll.unsqueeze(x, axis=pycoll.to_tensor(0)).shape == [1, 1, 2]
    assert pycoll.unsqueeze(x, axis=[pycoll.to_tensor(0), 3]).shape == [1, 1, 2, 1]
    for make in (pycoll.randn, pycoll.rand, pycoll.zeros, pycoll.ones, pycoll.uniform,
                 lambda s: pycoll.full(s, 1.0), lambda s: pycoll.randint(0, 5, s)):
        assert make([two, 3]).shape == [2, 3]
    assert pycoll.reshape(pycoll.arange(6), [two, pycoll.to_tensor(-1)]).shape == [2, 3]
    p = pycoll.to_tensor([1.0], stop_gradient=False)
    for opt in (pycoll.optimizer.AdamW(parameters=[p], beta1=pycoll.to_tensor([0.9]), beta2=pycoll.to_tensor(0.99)),
                pycoll.optimizer.Adam(parameters=[p], beta1=pycoll.to_tensor(0.5), epsilon=pycoll.to_tensor(1e-8))):
        assert 0 < opt._beta1 < 1 and 0 < opt._beta2 < 1
    with pytest.raises(ValueError, match="beta1"):
        pycoll.optimizer.Adam(parameters=[p], beta1=pycoll.to_tensor([0.9, 0.8]))


def test_embedding_max_norm_and_scale_grad_by_freq():
    # paddle 3.3.1: rows looked up with a norm over max_norm are rescaled in the weight itself
    w = pycoll.to_tensor(np.arange(12, dtype="float32").reshape(4, 3) - 4, stop_gradient=False)
    ids = pycoll.to_tensor([[0, 2], [2, 3]])
    F.embedding(ids, w, max_norm=5.0)
    np.testing.assert_allclose(w.numpy(), [[-3.713906764984131, -2.7854299545288086, -1.8569533824920654],
                                           [-1.0, 0.0, 1.0],
                                           [1.8569533824920654, 2.7854299545288086, 3.713906764984131],
                                           [2.3836565017700195, 2.8603878021240234, 3.3371191024780273]], rtol=1e-6)
    w2 = pycoll.to_tensor(np.arange(12, dtype="float32").reshape(4, 3), stop_gradient=False)
    out = F.embedding(ids, w2, scale_grad_by_freq=True)
    (out * pycoll.arange(12, dtype="float32").reshape([2, 2, 3])).sum().backward()
    assert w2.grad.numpy().tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [4.5, 5.5, 6.5], [9.0, 10.0, 11.0]]
    F.embedding(ids, w2, max_norm=3.0, norm_type=1.0)
    np.testing.assert_allclose(w2.numpy()[2:], [[0.8571429, 1.0, 1.1428572], [0.9, 1.0, 1.1]], rtol=1e-6)
    layer = pycoll.nn.Embedding(4, 3, max_norm=1.0)
    layer(pycoll.to_tensor([1]))
    assert np.linalg.norm(layer.weight.numpy()[1]) <= 1.0 + 1e-6
