"""pycoll.binomial and pycoll.standard_gamma (paddle 3.3.1's): moments of many draws against the
distributions' (paddle's own draws: Binomial(30, 0.2) mean 6.005 var 4.804, Gamma(2.5) mean 2.500
var 2.488 over 200000 samples), shapes, dtypes, seeding and errors."""
import numpy as np
import pytest

import pycoll


def test_binomial_moments_shape_and_dtype():
    pycoll.seed(1)
    s = pycoll.binomial(pycoll.full([20000], 30, "int64"), pycoll.full([20000], 0.2)).numpy()
    assert s.dtype == np.int64 and s.min() >= 0 and s.max() <= 30
    assert abs(s.mean() - 6.0) < 0.08 and abs(s.var() - 4.8) < 0.25  # n p, n p (1 - p); ~5 sigma
    out = pycoll.binomial(pycoll.to_tensor([[10], [20]]), pycoll.to_tensor([0.3, 0.5]))
    assert out.shape == [2, 2] and out.dtype == pycoll.int64 and out.stop_gradient  # broadcast, as paddle's
    exact = pycoll.binomial(pycoll.to_tensor([0, 5, 7], dtype="int32"), pycoll.to_tensor([0.5, 1.0, 0.0], "float64"))
    assert exact.numpy().tolist() == [0, 5, 0]  # paddle 3.3.1 gives [0, 5] for the first two too


def test_binomial_seeded_and_float_counts():
    c, p = pycoll.to_tensor([10, 20, 30]), pycoll.to_tensor([0.3, 0.5, 0.9])
    pycoll.seed(7)
    a = pycoll.binomial(c, p).numpy()
    pycoll.seed(7)
    assert pycoll.binomial(c.astype("float32"), p).numpy().tolist() == a.tolist()  # paddle takes float counts


@pytest.mark.parametrize("count,prob,error,match", [
    ([10, 20], [1, 0], TypeError, "prob must be a floating-point tensor"),
    ([10, 20], [1.5, 0.2], ValueError, r"prob must lie in \[0, 1\]"),
    ([-1, 3], [0.5, 0.5], ValueError, "count must hold whole numbers >= 0"),
    ([2.5, 3.0], [0.5, 0.5], ValueError, "count must hold whole numbers"),
    ([True, False], [0.5, 0.5], TypeError, "count must be an integer"),
])
def test_binomial_errors(count, prob, error, match):
    with pytest.raises(error, match=match):
        pycoll.binomial(pycoll.to_tensor(count), pycoll.to_tensor(prob))


def test_standard_gamma_moments_dtype_and_no_gradient():
    pycoll.seed(2)
    s = pycoll.standard_gamma(pycoll.full([20000], 2.5)).numpy()
    assert s.dtype == np.float32 and s.min() > 0
    assert abs(s.mean() - 2.5) < 0.06 and abs(s.var() - 2.5) < 0.25  # alpha, alpha; ~5 sigma
    small = pycoll.standard_gamma(pycoll.full([20000], 0.5, "float64")).numpy()
    assert small.dtype == np.float64 and abs(small.mean() - 0.5) < 0.03
    x = pycoll.to_tensor([[1.0, 2.0, 3.0]], stop_gradient=False)
    y = pycoll.standard_gamma(x)
    assert y.shape == [1, 3] and y.stop_gradient  # paddle 3.3.1: stop_gradient, x.grad stays None
    assert pycoll.standard_gamma(x.astype("float16")).dtype == pycoll.float16
    assert pycoll.standard_gamma(pycoll.zeros([3])).numpy().tolist() == [0.0, 0.0, 0.0]
    pycoll.seed(3)
    a = pycoll.standard_gamma(x).numpy()
    pycoll.seed(3)
    np.testing.assert_array_equal(pycoll.standard_gamma(x).numpy(), a)


def test_standard_gamma_errors():
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        pycoll.standard_gamma(pycoll.to_tensor([1, 2]))  # paddle: no int kernel
    with pytest.raises(ValueError, match="must be >= 0"):
        pycoll.standard_gamma(pycoll.to_tensor([-1.0, 2.0]))


def test_top_p_sampling_draws_within_the_nucleus():
    # paddle's docstring example (its GPU kernel): ps <= 0 takes each row's most probable token
    x = pycoll.to_tensor([[-0.32012719, -0.07942779, 0.26011357], [0.79003978, -0.39958701, 1.42184138]])
    value, index = pycoll.tensor.top_p_sampling(x, pycoll.to_tensor([-0.32012719, -0.07942779]))
    np.testing.assert_allclose(value.numpy(), [[0.26011357], [1.42184138]])
    assert index.dtype == np.int64 and index.numpy().tolist() == [[2], [2]]
    # ps 0.8 over [0.5, 0.3, 0.15, 0.05]: u * 0.8 lands on the first token 5/8 of the time, the second 3/8
    probs = pycoll.to_tensor(np.tile([[0.5, 0.3, 0.15, 0.05]], (20000, 1)).astype(np.float32))
    pycoll.seed(7)
    _, ids = probs.top_p_sampling(pycoll.to_tensor(np.full(20000, 0.8, np.float32)))
    share = np.bincount(ids.numpy().ravel(), minlength=4) / 20000
    np.testing.assert_allclose(share, [0.625, 0.375, 0, 0], atol=0.015)
    # a seed draws the same again; return_top adds the k largest; a threshold redraws among those over it
    first = pycoll.tensor.top_p_sampling(probs[:5], pycoll.to_tensor([1.0] * 5), seed=3)[1].numpy()
    again, _, top_values, top_ids = pycoll.tensor.top_p_sampling(probs[:5], pycoll.to_tensor([1.0] * 5), seed=3, k=2,
                                                                 return_top=True)
    assert len(set(first.ravel())) == 1  # one stream for every row, as paddle's seed gives
    np.testing.assert_array_equal(again.numpy(), probs[:5].numpy()[np.arange(5), first.ravel()][:, None])
    assert top_ids.numpy().tolist() == [[0, 1]] * 5 and np.allclose(top_values.numpy(), [[0.5, 0.3]] * 5)
    _, floor_ids = pycoll.tensor.top_p_sampling(probs[:200], pycoll.to_tensor([1.0] * 200),
                                                threshold=pycoll.to_tensor([0.2] * 200),
                                                topp_seed=pycoll.to_tensor(np.arange(200)))
    assert set(floor_ids.numpy().ravel()) <= {0, 1}  # under 0.2: never drawn
    with pytest.raises(ValueError, match="ps must hold one value per row of x"):
        pycoll.tensor.top_p_sampling(probs[:3], pycoll.to_tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="mode must be 'truncated' or 'non-truncated'"):
        pycoll.tensor.top_p_sampling(probs[:3], 0.5, mode="nucleus")
