"""pycoll.distribution.LKJCholesky: log_prob against values measured on paddle 3.3.1's CPU build
(and, for dim 2, against the Beta density of the one correlation, by hand); samples against what
a Cholesky factor of a correlation matrix is and against the LKJ marginal law of a correlation,
(r + 1) / 2 ~ Beta(b, b) with b = concentration - 1 + dim / 2 (paddle 3.3.1's own samples miss that
law for dim >= 3, so they are no reference: see pycoll/distribution/lkj_cholesky.py)."""
import math

import numpy as np
import pytest

import pycoll
from pycoll.distribution import LKJCholesky


def cholesky_of_correlation(dim, seed):
    """The Cholesky factor of a random correlation matrix (the values given to paddle)."""
    a = np.random.RandomState(seed).randn(dim, dim + 2)
    c = a @ a.T
    d = np.sqrt(np.diag(c))
    return np.linalg.cholesky(c / d[:, None] / d[None, :])


# paddle 3.3.1: LKJCholesky(dim, concentration).log_prob(stack of cholesky_of_correlation(dim, 0..2)),
# with a float64 concentration Tensor and float64 values
PADDLE_LOG_PROB = {
    (2, 0.5): [-1.0036687979496834, -1.0510819544672927, -1.077008613851696],
    (2, 2.5): [-0.5870838965368241, -0.4448444269839965, -0.3670644488307861],
    (3, 0.5): [-2.0995805120231203, -1.74610513401591, -2.3337487988295536],
    (3, 1.0): [-1.614052382462004, -1.9653767680537848, -1.6921769170543053],
    (3, 2.5): [-1.6582680452439233, -4.123991721632677, -1.2682613231938291],
    (5, 0.5): [-4.244640578250299, -5.198410288210624, -4.524754118161418],
    (5, 2.5): [-4.344440637613142, -2.1154499810351637, -2.7434281382178565],
}


@pytest.mark.parametrize("dim, concentration", sorted(PADDLE_LOG_PROB))
def test_log_prob_equals_paddles(dim, concentration):
    values = np.stack([cholesky_of_correlation(dim, s) for s in range(3)])
    want = PADDLE_LOG_PROB[dim, concentration]
    d64 = LKJCholesky(dim, pycoll.to_tensor(concentration, dtype="float64"))
    np.testing.assert_allclose(d64.log_prob(pycoll.to_tensor(values)).numpy(), want, rtol=1e-12)
    lp32 = LKJCholesky(dim, concentration).log_prob(pycoll.to_tensor(values.astype(np.float32)))
    assert str(lp32.dtype) == "float32"
    np.testing.assert_allclose(lp32.numpy(), want, rtol=2e-6)


def test_log_prob_of_a_batch_of_concentrations_equals_paddles():
    values = np.stack([cholesky_of_correlation(3, s) for s in range(2)]).astype(np.float32)
    d = LKJCholesky(3, [0.7, 3.0])
    # paddle 3.3.1: [-1.8324329853057861, -5.012693881988525]; one value against both: [.., -1.8421707153320312]
    np.testing.assert_allclose(d.log_prob(pycoll.to_tensor(values)).numpy(), [-1.8324330, -5.0126939], rtol=2e-6)
    np.testing.assert_allclose(d.log_prob(pycoll.to_tensor(values[0])).numpy(), [-1.8324330, -1.8421707], rtol=2e-6)


def beta_log_density_of_r(r, eta):
    """log density of L[1, 0] = r for dim 2: (r + 1) / 2 ~ Beta(eta, eta)."""
    log_beta = 2 * math.lgamma(eta) - math.lgamma(2 * eta)
    return (eta - 1) * math.log(1 - r * r) - (2 * eta - 1) * math.log(2) - log_beta


def test_dim_two_is_the_beta_law_of_the_correlation_with_its_gradient():
    rs = [-0.9, -0.3, 0.0, 0.55]
    values = pycoll.to_tensor([[[1.0, 0.0], [r, math.sqrt(1 - r * r)]] for r in rs], dtype="float64")
    for eta in (0.4, 1.0, 3.2):
        conc = pycoll.to_tensor(eta, dtype="float64")
        conc.stop_gradient = False
        lp = LKJCholesky(2, conc).log_prob(values)
        np.testing.assert_allclose(lp.numpy(), [beta_log_density_of_r(r, eta) for r in rs], rtol=1e-12)
        lp.sum().backward()
        h = 1e-6
        numeric = sum((beta_log_density_of_r(r, eta + h) - beta_log_density_of_r(r, eta - h)) / (2 * h) for r in rs)
        np.testing.assert_allclose(float(conc.grad), numeric, rtol=1e-6)


def test_dtypes_and_shapes_follow_paddle():
    d = LKJCholesky(3, 1.5)
    assert d.batch_shape == () and d.event_shape == (3, 3) and d.dtype == "float32"
    assert str(d.concentration.dtype) == "float32" and d.sample().shape == [3, 3]
    d = LKJCholesky(3, pycoll.to_tensor([0.5, 2.0], dtype="float64"), "cvine")
    assert d.batch_shape == (2,) and d.dtype == "float64"
    s = d.sample([4])
    assert s.shape == [4, 2, 3, 3] and str(s.dtype) == "float64" and s.stop_gradient
    assert LKJCholesky(2, 1.0, "cvine").sample([5]).shape == [5, 2, 2]
    with _default_dtype("float64"):  # paddle 3.3.1: the concentration stays float32
        d = LKJCholesky(3, 1.5)
        assert str(d.concentration.dtype) == "float32" and d.dtype == "float64"


class _default_dtype:
    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        self.before = pycoll.get_default_dtype()
        pycoll.set_default_dtype(self.dtype)

    def __exit__(self, *exc):
        pycoll.set_default_dtype(self.before)


@pytest.mark.parametrize("method", ["onion", "cvine"])
@pytest.mark.parametrize("dim, eta", [(2, 1.0), (3, 2.0), (4, 0.5)])
def test_samples_are_cholesky_factors_with_the_lkj_marginals(method, dim, eta):
    pycoll.seed(5)
    n = 4000
    L = LKJCholesky(dim, eta, method).sample([n]).numpy().astype(np.float64)
    assert np.array_equal(L, np.tril(L)) and (np.diagonal(L, axis1=1, axis2=2) > 0).all()
    np.testing.assert_allclose((L * L).sum(-1), 1.0, atol=1e-6)  # rows of unit norm: C has a unit diagonal
    C = L @ np.swapaxes(L, 1, 2)
    r = C[:, np.tril_indices(dim, -1)[0], np.tril_indices(dim, -1)[1]].ravel()
    b = eta - 1 + dim / 2  # (r + 1) / 2 ~ Beta(b, b): E r^2 = 1 / (2b + 1), E r^4 = 3 / ((2b + 1)(2b + 3))
    m2, m4 = 1 / (2 * b + 1), 3 / ((2 * b + 1) * (2 * b + 3))
    m8 = 105 / ((2 * b + 1) * (2 * b + 3) * (2 * b + 5) * (2 * b + 7))
    # each sample's cells average to one draw of variance <= a cell's: n draws bound the error
    assert abs(r.mean()) < 5 * math.sqrt(m2 / n)
    assert abs((r ** 2).mean() - m2) < 5 * math.sqrt((m4 - m2 ** 2) / n)
    assert abs((r ** 4).mean() - m4) < 5 * math.sqrt((m8 - m4 ** 2) / n)


def test_sampling_is_seeded():
    pycoll.seed(3)
    a = LKJCholesky(4, 1.3, "onion").sample([2]).numpy()
    pycoll.seed(3)
    assert np.array_equal(a, LKJCholesky(4, 1.3, "onion").sample([2]).numpy())


def test_refusals():
    with pytest.raises(ValueError, match="dim must be >= 2, got 1"):
        LKJCholesky(1)
    with pytest.raises(TypeError, match="dim must be an int >= 2, got 2.5"):
        LKJCholesky(2.5)
    with pytest.raises(ValueError, match="concentration must be > 0"):
        LKJCholesky(3, 0.0)
    with pytest.raises(ValueError, match="sample_method must be 'onion' or 'cvine', got 'x'"):
        LKJCholesky(3, 1.0, "x")
    with pytest.raises(TypeError, match="concentration must be a float"):
        LKJCholesky(3, "1.0")
    with pytest.raises(ValueError, match=r"value must end in \(3, 3\), got shape \[2, 2\]"):
        LKJCholesky(3).log_prob(pycoll.to_tensor(np.eye(2, dtype=np.float32)))
    with pytest.raises(TypeError, match="sample shape must be a list or tuple of ints"):
        LKJCholesky(3).sample(2)
