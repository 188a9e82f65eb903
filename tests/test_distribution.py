"""pycoll.distribution against paddle 3.3.1: every deterministic value below (log_prob, entropy,
mean, variance, kl, log-det-Jacobians) was measured on paddle 3.3.1's CPU build with the same float64
inputs (paddle.distribution.X(paddle.to_tensor(np.array(..., 'float64'))...)) and written here.
Samples are checked by the statistics of large draws, gradients by finite differences."""
import math
import warnings

import numpy as np
import pytest

import pycoll
import pycoll.distribution as D


def T(a):
    return pycoll.to_tensor(np.array(a, dtype="float64"))


V = [0.3, 0.7]


def close(x, expected, tol=1e-7):
    np.testing.assert_allclose(np.asarray(x.numpy(), dtype="float64"), np.asarray(expected, dtype="float64"),
                               rtol=tol, atol=tol)


# (name, distribution, other for kl, {quantity: paddle's value}); log_prob at V = [0.3, 0.7]
CASES = [
    ("normal", lambda: D.Normal(T([0.5, -1.0]), T([1.5, 0.7])), lambda: D.Normal(T([0.1, 0.2]), T([0.9, 2.0])),
     {"log_prob": [-1.3332925302, -3.5112431811], "entropy": [1.8244036413, 1.0622635893],
      "kl": [0.4768286972, 0.7910721245]}),
    ("uniform", lambda: D.Uniform(T([0.0, 0.2]), T([1.0, 0.9])), None, {"log_prob": [0.0, 0.3566749439]}),
    ("bernoulli", lambda: D.Bernoulli(T([0.3, 0.8])), lambda: D.Bernoulli(T([0.6, 0.1])),
     {"log_prob": [-0.6108643021, -0.6390318596], "entropy": [0.6108643021, 0.5004024235],
      "kl": [0.1837868974, 1.362737754]}),
    ("gamma", lambda: D.Gamma(T([0.5, 2.0]), T([1.5, 0.3])), lambda: D.Gamma(T([2.5, 1.0]), T([1.0, 0.7])),
     {"log_prob": [-0.2176459867, -2.9746205526], "entropy": [-0.3148551782, 2.7811884692],
      "kl": [4.4863340832, 2.2421531414]}),
    ("beta", lambda: D.Beta(T([0.5, 2.0]), T([1.5, 3.0])), lambda: D.Beta(T([2.5, 1.0]), T([1.0, 0.7])),
     {"log_prob": [-0.0279337751, -0.2797139028], "entropy": [-0.5484172947, -0.2349066498],
      "kl": [3.2115681045, 0.4165815937]}),
    ("exponential", lambda: D.Exponential(T([0.5, 2.0])), lambda: D.Exponential(T([1.5, 0.3])),
     {"kl": [0.9013877113, 1.0471199849]}),
    ("laplace", lambda: D.Laplace(T([0.5, -1.0]), T([1.5, 0.7])), lambda: D.Laplace(T([0.1, 0.2]), T([0.9, 2.0])),
     {"log_prob": [-1.231945622, -2.7650436652], "kl": [0.2101660513, 0.7128544338]}),
    ("lognormal", lambda: D.LogNormal(T([0.5, -1.0]), T([1.5, 0.7])),
     lambda: D.LogNormal(T([0.1, 0.2]), T([0.9, 2.0])),
     {"log_prob": [-0.765658241, -0.627902041], "entropy": [2.3244036413, 0.0622635893],
      "kl": [0.4768286972, 0.7910721245]}),
    ("cauchy", lambda: D.Cauchy(T([0.5, -1.0]), T([1.5, 0.7])), lambda: D.Cauchy(T([0.1, 0.2]), T([0.9, 2.0])),
     {"log_prob": [-1.5678165953, -2.7192805393], "kl": [0.0919374953, 0.4439987721]}),
    ("gumbel", lambda: D.Gumbel(T([0.5, -1.0]), T([1.5, 0.7])), None,
     {"log_prob": [-1.4147625866, -2.160059174], "entropy": [1.982680773, 1.220540721]}),
    ("geometric", lambda: D.Geometric(T([0.3, 0.8])), lambda: D.Geometric(T([0.6, 0.1])),
     {"entropy": [2.0362143402, 0.6255030294], "kl": [0.1837868974, 1.362737754]}),
    ("studentt", lambda: D.StudentT(T([3.0, 5.0]), T([0.5, -1.0]), T([1.5, 0.7])), None,
     {"log_prob": [-1.4181708311, -2.9493575304], "entropy": [2.17894268, 1.2708277285],
      "variance": [6.75, 0.8166666667]}),
    ("chi2", lambda: D.Chi2(T([1.5, 4.0])), None, {"entropy": [1.374962912, 2.2703628455]}),
    ("cbernoulli", lambda: D.ContinuousBernoulli(T([0.3, 0.8])), lambda: D.ContinuousBernoulli(T([0.6, 0.1])),
     {"log_prob": [0.1397234488, 0.1984280241], "entropy": [-0.0293862022, -0.0764144528],
      "mean": [0.4302225011, 0.6119858129], "variance": [0.0804251522, 0.0758978008],
      "kl": [0.0645192645, 0.516106678]}),
    ("cbernoulli_taylor", lambda: D.ContinuousBernoulli(T([0.4995, 0.5])), None,
     {"log_prob": [0.0003998335, 0.0]}),
]


@pytest.mark.parametrize("name,make,other,expected", CASES, ids=[c[0] for c in CASES])
def test_values_equal_paddles(name, make, other, expected):
    d = make()
    for quantity, value in expected.items():
        if quantity == "log_prob":
            close(d.log_prob(T(V)), value)
            close(d.prob(T(V)), np.exp(value))
        elif quantity == "entropy":
            close(d.entropy(), value)
        elif quantity == "kl":
            close(D.kl_divergence(d, other()), value)
            close(d.kl_divergence(other()), value)
        else:
            close(getattr(d, quantity), value)


def test_discrete_values_equal_paddles():
    k = T([1.0, 3.0])
    p, q = D.Poisson(T([1.5, 4.0])), D.Poisson(T([2.0, 3.0]))
    close(p.log_prob(k), [-1.0945348919, -1.6328763859])
    close(p.entropy(), [1.5394046528, 2.0866726999])
    close(D.kl_divergence(p, q), [0.0684768913, 0.1507282898])
    b = D.Binomial(pycoll.to_tensor([5, 8]), T([0.3, 0.6]))
    close(b.log_prob(k), [-1.0212346676, -2.0885788399])
    close(b.entropy(), [1.4136148553, 1.740282822])
    close(D.kl_divergence(b, D.Binomial(pycoll.to_tensor([5, 8]), T([0.5, 0.2]))), [0.4114143925, 3.0552680078])
    cat = D.Categorical(T([[0.2, 0.3, 0.5], [1.0, 2.0, 4.0]]))
    idx = pycoll.to_tensor([2, 0])
    close(cat.entropy(), [1.0906356052, 0.5242666167])  # over softmax(logits)
    # paddle's quirk kept: log_prob reads logits as weights (logits / sum), a 1-D value for every row
    close(cat.log_prob(idx), [[-0.6931471806, -1.6094379124], [-0.5596157879, -1.9459101491]])
    close(D.kl_divergence(cat, D.Categorical(T([[0.5, 0.25, 0.25], [3.0, 2.0, 1.0]]))),
          [[0.0260760483], [1.6851240161]])
    m = D.Multinomial(6, T([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))
    close(m.entropy(), [2.7906567475, 2.4864259003])
    close(m.log_prob(T([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]])), [-2.0024805005, -3.0649537426])
    d1 = D.Dirichlet(T([[0.5, 2.0, 1.5], [3.0, 1.0, 0.7]]))
    close(d1.entropy(), [-1.5068434306, -1.5503459792])
    close(d1.log_prob(T([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])), [0.5943493256, 1.4515149996])
    close(D.kl_divergence(d1, D.Dirichlet(T([[1.0, 1.0, 2.0], [0.5, 2.0, 2.0]]))), [0.9347116558, 4.0837414518])


def test_multivariate_and_independent_equal_paddles():
    cov = T([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
    prec = T([[1.0, 0.1, 0.0], [0.1, 1.5, 0.3], [0.0, 0.3, 0.8]])
    mv = D.MultivariateNormal(T([0.5, -1.0, 0.2]), covariance_matrix=cov)
    mv2 = D.MultivariateNormal(T([0.1, 0.2, 0.3]), precision_matrix=prec)
    x = T([[0.3, 0.7, -0.2], [1.0, -1.0, 0.5]])
    close(mv.log_prob(x), [-4.840735356, -2.8479189364])
    close(mv2.log_prob(x), [-2.9507522442, -4.0292522442])
    close(mv.entropy(), 4.1911914563)
    close(D.kl_divergence(mv, mv2), 1.7090607879)
    assert (mv.batch_shape, mv.event_shape) == ((), (3,))
    ind = D.Independent(D.Normal(T([[0.5, -1.0], [0.1, 0.2]]), T([[1.5, 0.7], [0.9, 2.0]])), 1)
    assert (ind.batch_shape, ind.event_shape) == ((2,), (2,))
    close(ind.log_prob(T(V)), [-4.8445357113, -2.4816050893])


def test_transforms_equal_paddles():
    x = T([[0.3, -0.7, 1.2], [0.1, 0.4, -2.0]])
    stick = D.StickBreakingTransform()
    close(stick.forward(x), [[0.3103224378, 0.1371808689, 0.4246074016, 0.1278892917],
                             [0.2692143455, 0.3122161567, 0.0498947072, 0.3686747906]])
    close(stick.inverse(stick.forward(x)), x.numpy())
    close(stick.forward_log_det_jacobian(x), [-6.0697790089, -6.471987614])
    close(D.TanhTransform().forward_log_det_jacobian(x), [[-0.0886815399, -0.4545404587, -1.1873779432],
                                                          [-0.0099833776, -0.1559069708, -2.6500054947]])
    close(D.SigmoidTransform().forward_log_det_jacobian(x), [[-1.4087104889, -1.5063720978, -1.7265649347],
                                                             [-1.3887933201, -1.4260305048, -2.2538560221]])
    chain = D.ChainTransform([D.AffineTransform(T([0.5]), T([2.0])), D.TanhTransform()])
    close(chain.forward_log_det_jacobian(x), [[-0.3307250979, -0.0265136794, -3.7266044202],
                                              [0.2386067218, -0.6638478423, -4.9223813912]])
    close(chain.inverse(chain.forward(x)), x.numpy())
    assert D.ReshapeTransform((2, 3), (3, 2)).forward_shape((4, 2, 3)) == (4, 3, 2)
    close(D.StackTransform([D.ExpTransform(), D.TanhTransform()], 0).forward(x),
          np.stack([np.exp(x.numpy()[0]), np.tanh(x.numpy()[1])]))
    base = D.Normal(T([0.5, -1.0]), T([1.5, 0.7]))
    td = D.TransformedDistribution(base, [D.AffineTransform(T([0.5]), T([2.0])), D.TanhTransform()])
    close(td.log_prob(T([0.3, -0.6])), [-2.0019758964, -0.9751980224])
    assert isinstance(D.ExpTransform()(base), D.TransformedDistribution)


def _space(v):
    """A variable as (class name, event rank, constraint class name)."""
    c = getattr(v, "_constraint", None)
    return type(v).__name__, v.event_rank, type(c).__name__ if c is not None else None


def test_transforms_tell_their_type_domain_and_codomain_as_paddles():
    """Read from paddle 3.3.1: _is_injective(), and _domain / _codomain as variables."""
    want = {
        D.AbsTransform(): (False, ("Real", 0, "Real"), ("Positive", 0, "Positive")),
        D.AffineTransform(T(0.0), T(1.0)): (True, ("Real", 0, "Real"), ("Real", 0, "Real")),
        D.ExpTransform(): (True, ("Real", 0, "Real"), ("Positive", 0, "Positive")),
        D.SigmoidTransform(): (True, ("Real", 0, "Real"), ("Variable", 0, "Range")),
        D.TanhTransform(): (True, ("Real", 0, "Real"), ("Variable", 0, "Range")),
        D.SoftmaxTransform(): (False, ("Independent", 1, None), ("Variable", 1, "Simplex")),
        D.StickBreakingTransform(): (True, ("Independent", 1, None), ("Variable", 1, "Simplex")),
        D.ReshapeTransform((2, 3), (3, 2)): (True, ("Independent", 2, None), ("Independent", 2, None)),
        D.ChainTransform([D.ExpTransform(), D.SoftmaxTransform()]):
            (False, ("Independent", 1, None), ("Independent", 1, None)),
        D.IndependentTransform(D.ExpTransform(), 2): (True, ("Independent", 2, None), ("Independent", 2, None)),
    }
    for t, (injective, domain, codomain) in want.items():
        assert (t._is_injective(), _space(t._domain), _space(t._codomain)) == (injective, domain, codomain), t
    from pycoll.distribution.transform import Type
    assert D.ExpTransform._type is Type.BIJECTION and D.Transform._is_injective()
    with pytest.raises(NotImplementedError, match="SoftmaxTransform is not injective"):
        D.SoftmaxTransform().forward_log_det_jacobian(T([[0.1, 0.2]]))
    with pytest.raises(ValueError, match="StickBreakingTransform: x must have at least 1 dimensions"):
        D.StickBreakingTransform().forward(T(0.5))


def test_a_user_transform_written_as_paddles_docs_say():
    """paddle's hooks: _domain/_codomain as variables (not pycoll's ranks), the log-det-Jacobian from
    _inverse_log_det_jacobian alone, shapes from _forward_shape/_inverse_shape."""
    from pycoll.distribution import variable

    class Cube(D.Transform):  # y = x ** 3 on a whole vector event
        @property
        def _domain(self):
            return variable.Independent(variable.real, 1)

        @property
        def _codomain(self):
            return variable.Independent(variable.real, 1)

        def _forward(self, x):
            return x ** 3

        def _inverse(self, y):
            return y.sign() * y.abs() ** (1 / 3)

        def _inverse_log_det_jacobian(self, y):  # one value per event (vector)
            return -(math.log(3.0) + 2 * y.abs().log() / 3).sum(-1)

    class Duplicate(D.Transform):
        def _forward_shape(self, shape):
            return tuple(shape[:-1]) + (2 * shape[-1],)

        def _inverse_shape(self, shape):
            return tuple(shape[:-1]) + (shape[-1] // 2,)

    x = T([[0.5, -1.5], [2.0, 0.7]])
    close(Cube().forward_log_det_jacobian(x), np.log(3 * x.numpy() ** 2).sum(-1))  # = -ildj(forward(x))
    close(Cube().inverse_log_det_jacobian(T([8.0])), -math.log(12.0))
    assert Duplicate().forward_shape([4, 3]) == (4, 6) and Duplicate().inverse_shape((4, 6)) == (4, 3)
    base = D.Normal(T([0.0, 0.0]), T([1.0, 1.0]))
    td = D.TransformedDistribution(base, [Cube()])
    assert tuple(td.event_shape) == (2,) and tuple(td.batch_shape) == ()  # Cube acts on the vector: one event
    y = T([0.125, -8.0])
    expected = base.log_prob(T([0.5, -2.0])).sum() + Cube().inverse_log_det_jacobian(y)
    close(td.log_prob(y), expected.numpy())


@pytest.mark.parametrize("make,mean,var", [
    (lambda: D.Normal(T([0.5, -1.0]), T([1.5, 0.7])), [0.5, -1.0], [2.25, 0.49]),
    (lambda: D.Uniform(T([0.0, 0.2]), T([1.0, 0.9])), [0.5, 0.55], [1 / 12, 0.49 / 12]),
    (lambda: D.Gamma(T([0.5, 2.0]), T([1.5, 0.3])), [1 / 3, 2 / 0.3], [0.5 / 2.25, 2 / 0.09]),
    (lambda: D.Beta(T([0.5, 2.0]), T([1.5, 3.0])), [0.25, 0.4], [0.75 / 4 / 3, 6 / 25 / 6]),
    (lambda: D.Exponential(T([0.5, 2.0])), [2.0, 0.5], [4.0, 0.25]),
    (lambda: D.Laplace(T([0.5, -1.0]), T([1.5, 0.7])), [0.5, -1.0], [4.5, 0.98]),
    (lambda: D.Gumbel(T([0.5, -1.0]), T([1.5, 0.7])), None, None),
    (lambda: D.Bernoulli(T([0.3, 0.8])), [0.3, 0.8], [0.21, 0.16]),
    (lambda: D.Geometric(T([0.3, 0.8])), [7 / 3, 0.25], [7 / 0.9, 0.3125]),
    (lambda: D.Poisson(T([1.5, 4.0])), [1.5, 4.0], [1.5, 4.0]),
    (lambda: D.Binomial(pycoll.to_tensor([5, 8]), T([0.3, 0.6])), [1.5, 4.8], [1.05, 1.92]),
    (lambda: D.StudentT(T([5.0, 6.0]), T([0.5, -1.0]), T([1.5, 0.7])), [0.5, -1.0], [3.75, 0.735]),
    (lambda: D.ContinuousBernoulli(T([0.3, 0.8])), None, None),
    (lambda: D.LogNormal(T([0.5, -1.0]), T([0.5, 0.7])), None, None),
], ids=["normal", "uniform", "gamma", "beta", "exponential", "laplace", "gumbel", "bernoulli", "geometric",
        "poisson", "binomial", "studentt", "cbernoulli", "lognormal"])
def test_samples_have_the_distributions_moments(make, mean, var):
    pycoll.seed(7)
    d = make()
    mean = d.mean.numpy() if mean is None else mean
    var = d.variance.numpy() if var is None else var
    s = d.sample([40000])
    assert tuple(s.shape) == (40000, 2) and s.stop_gradient
    np.testing.assert_allclose(s.numpy().mean(0), mean, rtol=0.05, atol=0.03)
    np.testing.assert_allclose(s.numpy().var(0), var, rtol=0.1, atol=0.01)


def test_sampling_is_reproducible_and_shaped():
    d = D.Normal(0.0, 1.0)
    pycoll.seed(3)
    a = d.sample([5])
    pycoll.seed(3)
    b = d.sample([5])
    assert tuple(a.shape) == (5,) and d.batch_shape == ()
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    pycoll.seed(1)
    c = D.Categorical(T([[0.1, 0.2, 0.7], [5.0, 0.0, 0.0]])).sample([20000])
    assert tuple(c.shape) == (20000, 2) and str(c.dtype) == "int64"
    freq = np.bincount(c.numpy()[:, 0], minlength=3) / 20000
    np.testing.assert_allclose(freq, np.exp([0.1, 0.2, 0.7]) / np.exp([0.1, 0.2, 0.7]).sum(), atol=0.015)
    assert (c.numpy()[:, 1] == 0).mean() > 0.97
    m = D.Multinomial(10, T([0.2, 0.3, 0.5])).sample([4000])
    assert tuple(m.shape) == (4000, 3) and np.all(m.numpy().sum(-1) == 10)
    np.testing.assert_allclose(m.numpy().mean(0), [2.0, 3.0, 5.0], rtol=0.05)
    d = D.Dirichlet(T([1.0, 2.0, 3.0])).sample([20000])
    np.testing.assert_allclose(d.numpy().sum(-1), 1.0)
    np.testing.assert_allclose(d.numpy().mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    mv = D.MultivariateNormal(T([0.5, -1.0]), covariance_matrix=T([[2.0, 0.6], [0.6, 1.0]])).sample([40000])
    np.testing.assert_allclose(np.cov(mv.numpy().T), [[2.0, 0.6], [0.6, 1.0]], atol=0.06)


def _finite_difference(fn, x, h=1e-6):
    base = x.copy()
    out = np.zeros_like(base)
    for i in range(base.size):
        up, down = base.copy(), base.copy()
        up.flat[i] += h
        down.flat[i] -= h
        out.flat[i] = (fn(up) - fn(down)) / (2 * h)
    return out


@pytest.mark.parametrize("make", [
    lambda a, b: D.Normal(a, b), lambda a, b: D.Gamma(a, b), lambda a, b: D.Beta(a, b),
    lambda a, b: D.Laplace(a, b), lambda a, b: D.StudentT(a + 2.0, a, b), lambda a, b: D.LogNormal(a, b),
    lambda a, b: D.Cauchy(a, b), lambda a, b: D.Gumbel(a, b),
], ids=["normal", "gamma", "beta", "laplace", "studentt", "lognormal", "cauchy", "gumbel"])
def test_log_prob_entropy_gradients_match_finite_differences(make):
    a0, b0 = np.array([0.6, 1.3]), np.array([1.5, 0.7])
    v = T([0.3, 0.7])

    def value(a, b):
        d = make(T(a), T(b))
        return float((d.log_prob(v).sum() + d.entropy().sum()).numpy())
    a, b = T(a0), T(b0)
    a.stop_gradient = b.stop_gradient = False
    d = make(a, b)
    (d.log_prob(v).sum() + d.entropy().sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), _finite_difference(lambda x: value(x, b0), a0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), _finite_difference(lambda x: value(a0, x), b0), rtol=1e-5, atol=1e-6)


def test_rsample_is_differentiable_in_the_parameters():
    loc, scale = T([0.5, -1.0]), T([1.5, 0.7])
    loc.stop_gradient = scale.stop_gradient = False
    pycoll.seed(5)
    s = D.Normal(loc, scale).rsample([3])
    s.sum().backward()
    pycoll.seed(5)
    eps = (D.Normal(T([0.0, 0.0]), T([1.0, 1.0])).sample([3])).numpy()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0), rtol=1e-12)
    rate = T([2.0])
    rate.stop_gradient = False
    pycoll.seed(9)
    x = D.Exponential(rate).rsample([4])
    x.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), [-x.numpy().sum() / 2.0], rtol=1e-12)  # x = e / rate
    probs = T([0.3])
    probs.stop_gradient = False
    D.Bernoulli(probs).rsample([2], temperature=0.5).sum().backward()
    np.testing.assert_allclose(probs.grad.numpy(), [2 * 2 / (0.3 * 0.7)], rtol=1e-6)  # d logit / dp, x2, /0.5


def test_sample_is_differentiable_as_paddles():
    # paddle 3.3.1's Normal/Uniform sample (and LogNormal's, through it) is the reparameterized
    # draw: a VAE written with .sample() trains its encoder; the other laws' sample takes no gradient
    loc, scale = T([0.5, -1.0]), T([1.5, 0.7])
    loc.stop_gradient = scale.stop_gradient = False
    pycoll.seed(5)
    drawn = D.Normal(loc, scale).sample([3])
    pycoll.seed(5)
    np.testing.assert_array_equal(drawn.numpy(), D.Normal(loc, scale).rsample([3]).numpy())
    drawn.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    for d in (D.Uniform(loc, loc + scale), D.LogNormal(loc, scale)):
        assert not d.sample([2]).stop_gradient
    assert not D.StudentT(T([3.0, 4.0]), loc, scale).sample([2]).stop_gradient
    assert not D.Independent(D.Normal(loc, scale), 1).sample([2]).stop_gradient
    assert D.Laplace(loc, scale).sample([2]).stop_gradient


def test_an_affine_transform_with_a_batch_widens_the_batch():
    # paddle 3.3.1: Normal batch [2] through AffineTransform(loc [3, 1], scale [1]): batch [3, 2]
    td = D.TransformedDistribution(D.Normal(T([0.0, 1.0]), T([1.0, 2.0])),
                                   [D.AffineTransform(T([[0.0], [1.0], [2.0]]), T([1.5]))])
    assert td.batch_shape == (3, 2) and td.event_shape == ()
    assert tuple(td.sample().shape) == (3, 2) and tuple(td.log_prob(T(0.5)).shape) == (3, 2)
    drawn = td.sample([4000]).numpy()  # paddle's sample([n]) fails to broadcast here
    assert drawn.shape == (4000, 3, 2)
    np.testing.assert_allclose(drawn.mean(0), [[0.0, 1.5], [1.0, 2.5], [2.0, 3.5]], atol=0.15)
    assert abs(np.corrcoef(drawn[:, 0, 0], drawn[:, 1, 0])[0, 1]) < 0.1  # each batch member its own draw
    assert D.TransformedDistribution(D.Normal(T([0.0, 1.0]), T([1.0, 2.0])),
                                     [D.PowerTransform(T([[2.0], [3.0]]))]).batch_shape == (2, 2)


def test_kl_registry_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass
    p, q = MyNormal(T([0.0]), T([1.0])), D.Normal(T([1.0]), T([2.0]))
    close(D.kl_divergence(p, q), D.kl_divergence(D.Normal(T([0.0]), T([1.0])), q).numpy())

    @D.register_kl(MyNormal, D.Normal)
    def _always_seven(a, b):
        return a.loc * 0.0 + 7.0
    close(D.kl_divergence(p, q), [7.0])
    with pytest.raises(NotImplementedError, match="Normal, Gamma"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))
    with pytest.raises(TypeError, match="subclasses of Distribution"):
        D.register_kl(int, D.Normal)
    # the exponential-family Bregman fallback agrees with the closed form
    g1, g2 = D.Gamma(T([0.5, 2.0]), T([1.5, 0.3])), D.Gamma(T([2.5, 1.0]), T([1.0, 0.7]))
    from pycoll.distribution.kl import _exponential_family
    close(_exponential_family(g1, g2), [4.4863340832, 2.2421531414])
    close(D.ExponentialFamily.entropy(g1), [-0.3148551782, 2.7811884692])


def test_arguments_and_defaults():
    n = D.Normal(0.5, [1.0, 2.0])
    assert n.batch_shape == (2,) and str(n.loc.dtype) == "float32"
    assert str(D.Normal(np.array([0.0]), np.array([1.0])).loc.dtype) == "float64"
    assert D.Poisson(2.0).batch_shape == (1,)  # paddle's: a number gives shape [1]
    u = D.Uniform(0.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log(0) outside the support is -inf, unwarned
        assert math.isinf(float(u.log_prob(T(1.5)).numpy()))
    with pytest.raises(TypeError, match="loc must be a float"):
        D.Normal("a", 1.0)
    with pytest.raises(ValueError, match="exactly one of"):
        D.MultivariateNormal(T([0.0, 0.0]))
    with pytest.raises(ValueError, match="total_count"):
        D.Multinomial(0, T([0.5, 0.5]))
    with pytest.raises(ValueError, match="reinterpreted_batch_rank"):
        D.Independent(D.Normal(T([0.0]), T([1.0])), 2)
    with pytest.raises(ValueError, match="Cauchy distribution has no mean"):
        D.Cauchy(0.0, 1.0).mean
    with pytest.raises(TypeError, match="sample shape"):
        D.Normal(0.0, 1.0).sample(3)
    assert pycoll.distribution is D


def test_categorical_refuses_a_value_that_does_not_fit_its_batch():
    c = D.Categorical(T([[1., 2., 3.], [1., 1., 1.]]))
    weights = np.log([[1 / 6, 2 / 6, 3 / 6], [1 / 3, 1 / 3, 1 / 3]])
    idx = np.array([[0, 2, 1, 2, 0]])
    close(c.log_prob(pycoll.to_tensor(idx)), np.take_along_axis(weights, np.repeat(idx, 2, 0), -1))  # [1, 5] broadcasts
    close(c.log_prob(pycoll.to_tensor([2, 0])), weights[:, [2, 0]])  # 1-D: taken for every row, as paddle's
    for shape in ([3, 2], [5, 5], [4, 2, 1], []):  # paddle: ValueError for each (expand_v2 / rank)
        with pytest.raises(ValueError, match=rf"value of shape \[{', '.join(map(str, shape))}\] does not fit the "
                                             rf"batch shape \[2\]"):
            c.log_prob(pycoll.to_tensor(np.zeros(shape, np.int64)))
    with pytest.raises(ValueError, match="does not fit"):
        c.log_prob(c.sample([3]))  # samples of shape [3, 2]: 3 draws of the batch, not classes per row


def _dtype(t):
    return str(t.dtype).split(".")[-1]


def test_numbers_take_the_default_dtype_where_paddles_classes_do():
    """Measured on paddle 3.3.1 under set_default_dtype('float64'): paddle's newer classes make a
    Python number a tensor of the default dtype, the older ones float32 (and Gamma, Exponential,
    Chi2 cast NumPy arrays to float32, Bernoulli and StudentT to the default dtype)."""
    pycoll.set_default_dtype("float64")
    try:
        default = {"Beta": D.Beta(0.5, 0.5), "Laplace": D.Laplace(0., 1.), "Cauchy": D.Cauchy(0., 1.),
                   "Gumbel": D.Gumbel(0., 1.), "Poisson": D.Poisson(2.), "Bernoulli": D.Bernoulli(0.3),
                   "ContinuousBernoulli": D.ContinuousBernoulli(0.3), "StudentT": D.StudentT(3., 0., 1.),
                   "Binomial": D.Binomial(5, 0.3), "Bernoulli(np32)": D.Bernoulli(np.array([0.3], np.float32)),
                   "StudentT(np32)": D.StudentT(*(np.array([v], np.float32) for v in (3., 0., 1.)))}
        float32 = {"Normal": D.Normal(0., 1.), "Uniform": D.Uniform(0., 2.), "LogNormal": D.LogNormal(0., 1.),
                   "Gamma": D.Gamma(2., 1.), "Exponential": D.Exponential(1.5), "Chi2": D.Chi2(3.),
                   "Geometric": D.Geometric(0.3), "Gamma(np64)": D.Gamma(np.array([2.]), np.array([1.]))}
        for want, dists in (("float64", default), ("float32", float32)):
            for name, d in dists.items():
                got = [_dtype(d.sample([2])), _dtype(d.entropy()), _dtype(d.log_prob(d.sample([2])))]
                assert got == [want] * 3, (name, got)
        close(D.Beta(0.5, 0.5).entropy(), -0.2415645, tol=1e-6)  # paddle's, float64
        f32 = pycoll.to_tensor(np.array([0.5], np.float32))
        assert _dtype(D.Beta(f32, f32).entropy()) == "float32"  # a Tensor keeps its dtype
    finally:
        pycoll.set_default_dtype("float32")
    assert _dtype(D.Bernoulli(np.array([0.3])).mean) == "float32"  # paddle casts float64 arrays to the default
    assert _dtype(D.Normal(np.array([0.]), np.array([1.])).mean) == "float64"  # Normal keeps them


@pytest.mark.parametrize("make, log_prob_at_half", [
    (lambda t: D.Normal(t([0]), t([2])), -math.log(2) - 0.5 * math.log(2 * math.pi) - 0.25 / 8),
    (lambda t: D.Normal(t([0]), 2.0), -math.log(2) - 0.5 * math.log(2 * math.pi) - 0.25 / 8),
    (lambda t: D.Uniform(t([0]), t([2])), -math.log(2)),
    (lambda t: D.Laplace(t([0]), t([2])), -math.log(4) - 0.25),
    (lambda t: D.Beta(t([1]), t([1])), 0.0),
    (lambda t: D.Exponential(t([2])), math.log(2) - 1.0)])
@pytest.mark.parametrize("int_dtype", ["int64", "int32"])
def test_integer_tensor_parameters_become_float32(make, log_prob_at_half, int_dtype):
    """paddle casts integer parameters to float32 (its docs); every parameter does here, a number
    beside an integer Tensor too, so log_prob/entropy compute in float32 instead of refusing to mix
    dtypes. (paddle 3.3.1 itself gives Normal(0, 2).log_prob(0.5) as if the value were 0 and
    Uniform(0, 2).log_prob(0.5) = -inf: those are its mistakes, not followed.)"""
    dist = make(lambda values: pycoll.to_tensor(values, dtype=int_dtype))
    out = dist.log_prob(pycoll.to_tensor([0.5]))
    assert _dtype(out) == "float32" and _dtype(dist.entropy()) == "float32"
    close(out, [log_prob_at_half], tol=1e-6)


def test_values_at_and_past_the_supports_edges_raise_no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(D.Uniform(T([0.]), T([1.])).log_prob(T([-1., 0.5, 2.])), [-np.inf, 0., -np.inf])
        close(D.Gamma(T([0.5]), T([1.])).log_prob(T([0.])), [np.inf])
        assert np.isnan(D.Normal(T([0.]), T([0.])).log_prob(T([0.])).numpy()).all()
        close(D.Categorical(T([0., 1.])).log_prob(pycoll.to_tensor([0])), [-np.inf])
        close(D.Exponential(T([0.])).entropy(), [np.inf])
        close(D.Multinomial(2, T([0., 1.])).log_prob(T([0., 2.])), [0.])
        close(D.kl_divergence(D.Uniform(T([0.]), T([1.])), D.Uniform(T([0.]), T([0.]))), [np.inf])
        close(D.PowerTransform(T([-1.])).inverse(T([0.])), [np.inf])
        close(D.ContinuousBernoulli(T([0.5])).entropy(), [0.])


def test_affine_log_det_jacobian_has_one_term_per_element():
    """paddle 3.3.1 gives log|scale| in scale's shape ([1] here); summed over an event by
    IndependentTransform that counts it once instead of once per element, so paddle's log_prob
    below is -3.062274, -2.757274 (off by log 2). pycoll keeps one term per element where it sums,
    and gives the transform's own log-det-Jacobian in scale's shape as paddle does."""
    x = T([[0.5, -1.0], [2.0, 0.1]])
    affine = D.AffineTransform(T([1.]), T([2.]))
    close(affine.forward_log_det_jacobian(x), [math.log(2.)])
    close(D.IndependentTransform(affine, 1).forward_log_det_jacobian(x), [2 * math.log(2.)] * 2)
    base = D.Independent(D.Normal(T([0., 0.]), T([1., 1.])), 1)
    td = D.TransformedDistribution(base, [D.IndependentTransform(affine, 1)])
    z = (x.numpy() - 1.) / 2.
    by_hand = (-0.5 * z ** 2 - 0.5 * math.log(2 * math.pi) - math.log(2.)).sum(-1)  # N(1, 2^2) per element
    close(td.log_prob(x), by_hand)


@pytest.mark.parametrize("draw, message", [
    (lambda: D.Binomial(-3, pycoll.to_tensor([0.3])).sample([2]), r"Binomial.sample: total_count must be >= 0, got -3"),
    (lambda: D.Binomial(3, pycoll.to_tensor([1.5])).sample([2]), r"Binomial.sample: probs must be in \[0, 1\], got 1.5"),
    (lambda: D.Poisson(pycoll.to_tensor([float("nan")])).sample([2]), r"Poisson.sample: rate must be >= 0, got nan"),
    (lambda: D.Gamma(pycoll.to_tensor([-1.0]), pycoll.to_tensor([1.0])).sample([2]), r"Gamma: concentration must be >= 0"),
    (lambda: D.Beta(pycoll.to_tensor([-1.0]), pycoll.to_tensor([1.0])).sample([2]), r"Beta.sample: alpha and beta must"),
    (lambda: D.Dirichlet(pycoll.to_tensor([-1.0, 1.0])).sample([2]), r"Dirichlet.sample: concentration must be >= 0"),
    (lambda: D.Categorical(pycoll.to_tensor(np.zeros([0], np.float32))).sample([2]), r"logits of shape \[0\] hold no"),
    (lambda: D.Normal(pycoll.to_tensor([0.0, 1.0]), pycoll.to_tensor([1.0, 1.0, 1.0])),
     r"Normal: loc of shape \[2\] and scale of shape \[3\] do not broadcast"),
    (lambda: D.Multinomial(3, pycoll.to_tensor([0.2, 0.3, 0.5])).log_prob(pycoll.to_tensor([1.0, 2.0])),
     r"Multinomial.log_prob: value must hold counts of the 3 categories .* got shape \[2\]"),
])
def test_bad_parameters_are_named_with_their_distribution(draw, message):
    """NumPy's generator says only "n < 0" or "shape < 0"; paddle mostly draws garbage."""
    with pytest.raises(ValueError, match=message):
        draw()


def test_chi2_rsample_gives_df_no_gradient_as_paddle():
    """Its draws come from the host generator; the rate of 1/2 is a constant, not df * 0 + 1/2
    (which gave df a gradient of -0)."""
    df = pycoll.to_tensor([3.0, 4.0], stop_gradient=False)
    D.Chi2(df).rsample([5]).sum().backward()
    assert df.grad is None


@pytest.mark.parametrize("batch, values", [((), (5,)), ((), (4, 5)), ((3,), (7, 3)), ((2, 1), (4, 2, 3)), ((3,), ())])
def test_multivariate_normal_log_prob_over_sample_dimensions(batch, values):
    """The values' extra dimensions are solved as columns of one right-hand side per matrix."""
    rng = np.random.default_rng(1)
    n = 4
    a = rng.standard_normal(batch + (n, n))
    tril = np.tril(a, -1) + np.eye(n) * (1.0 + np.abs(a))
    loc, v = rng.standard_normal(batch + (n,)), rng.standard_normal(values + (n,))
    value = pycoll.to_tensor(v, stop_gradient=False)
    got = D.MultivariateNormal(pycoll.to_tensor(loc), scale_tril=pycoll.to_tensor(tril)).log_prob(value)
    tb, db = np.broadcast_arrays(tril, (v - loc)[..., None])
    z = np.linalg.solve(tb, db)[..., 0]
    want = -0.5 * (n * math.log(2 * math.pi) + (z ** 2).sum(-1)) - np.log(np.diagonal(tril, 0, -2, -1)).sum(-1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    got.sum().backward()
    inverse_cov = np.linalg.inv(tb @ np.swapaxes(tb, -1, -2))
    grad = -(inverse_cov @ (v - loc)[..., None])[..., 0]  # d log_prob / d value, summed over broadcast copies
    np.testing.assert_allclose(value.grad.numpy(), grad.reshape((-1,) + values + (n,)).sum(0) if grad.ndim > v.ndim
                               else grad, rtol=1e-8)
