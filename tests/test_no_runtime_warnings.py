"""pycoll's ops give inf and NaN silently, as paddle's do: log(0), x / 0, sqrt(-1), overflows,
0 * inf, forward and backward, run here with warnings as errors (NumPy's RuntimeWarnings would
fail them). Expected values were measured on paddle 3.3.1's CPU build (float32 unless said),
the inputs below fed to the same calls; a value marked "by hand" is NumPy's answer for the rule
pycoll documents."""
import math

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F

pytestmark = pytest.mark.filterwarnings("error")

inf, nan = math.inf, math.nan
EDGES = [0.0, -1.0, 1.0, inf, -inf, nan, 3e38]
E6 = [0.0, -1.0, inf, -inf, nan, 3e38]
TINY = float(np.float32(1) / np.float32(3e38))  # 1 / 3e38 in float32, a subnormal


def _tensors(arrays, dtype):
    out = []
    for a in arrays:
        t = pycoll.to_tensor(np.array(a, dtype))
        t.stop_gradient = False
        out.append(t)
    return out


def _same(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-6, atol=0)


# name: (op, inputs, output, the gradient of each input for a gradient of ones)
CASES = {
    "log": (pycoll.log, [EDGES], [-inf, nan, 0, inf, nan, nan, 88.59685],
            [[inf, -1, 1, 0, -0.0, nan, TINY]]),
    "sqrt": (pycoll.sqrt, [[0.0, -1.0, 4.0, 3e38]], [0, nan, 2, 1.7320508e19], [[inf, nan, 0.25, 2.8867513e-20]]),
    "exp": (pycoll.exp, [[100.0, 0.0, nan]], [inf, 1, nan], [[inf, 1, nan]]),
    "square": (pycoll.square, [[3e38, -3.0, nan]], [inf, 9, nan], [[inf, -6, nan]]),
    "add": (pycoll.add, [[3e38, inf, 1.0], [3e38, -inf, nan]], [inf, nan, nan], [[1, 1, 1], [1, 1, 1]]),
    "subtract": (pycoll.subtract, [[inf, -3e38], [inf, 3e38]], [nan, -inf], [[1, 1], [-1, -1]]),
    "multiply": (pycoll.multiply, [[0.0, 3e38], [inf, 10.0]], [nan, inf], [[inf, 10], [0, 3e38]]),
    "divide x / x": (lambda x: pycoll.divide(x, x), [EDGES], [nan, 1, 1, nan, nan, nan, 1], None),
    "divide 1 / x": (lambda y: pycoll.divide(pycoll.ones([7]), y), [EDGES], [inf, -1, 1, 0, -0.0, nan, TINY],
                     [[-inf, -1, -1, -0.0, -0.0, nan, -0.0]]),
    "pow": (pycoll.pow, [[0.0, 2.0, -1.0], [-1.0, 200.0, 0.5]], [inf, inf, nan],
            [[-inf, inf, nan], [-inf, inf, nan]]),
    "pow by a number": (lambda x: x ** 2.0, [[3e38, 2.0]], [inf, 4], [[inf, 4]]),
    "scale": (lambda x: pycoll.scale(x, 2.0), [[3e38]], [inf], [[2]]),
    "sum": (pycoll.sum, [[3e38, 3e38]], inf, [[1, 1]]),
    "mean": (pycoll.mean, [[3e38, 3e38]], inf, [[0.5, 0.5]]),
    "max of a NaN": (pycoll.max, [[nan, 1.0]], nan, [[nan, nan]]),
    "sigmoid": (pycoll.nn.functional.sigmoid, [[nan, 0.0]], [nan, 0.5], [[nan, 0.25]]),
    "matmul": (pycoll.matmul, [[[inf, 1.0]], [[0.0], [1.0]]], [[nan]], [[[0, 1]], [[inf], [1]]]),
    "floor_divide by 0": (lambda x: pycoll.floor_divide(x, pycoll.zeros([7])), [EDGES],
                          [nan, -inf, inf, inf, -inf, nan, inf], None),
    # y's gradient -floor(x / y) of pycoll's rule at y = 0 (paddle's too)
    "remainder by 0": (pycoll.remainder, [EDGES, [0.0] * 7], [nan] * 7,
                       [[1] * 7, [nan, inf, -inf, -inf, inf, nan, -inf]]),
    "remainder x % x": (lambda x: pycoll.remainder(x, x.detach()), [EDGES], [nan, -0.0, 0, nan, nan, nan, 0], None),
    "frac": (pycoll.frac, [EDGES], [0, -0.0, 0, nan, nan, nan, 0], None),
    "lerp": (lambda x, y: pycoll.lerp(x, y, 0.5), [[inf], [-inf]], [nan], None),
    "vander": (lambda x: pycoll.vander(x, 3), [[3e38, 2.0]], [[inf, 3e38, 1], [4, 2, 1]], None),
    "erf": (pycoll.erf, [EDGES], [0, -0.842701, 0.842701, 1, -1, nan, 1], None),
    "lgamma": (pycoll.lgamma, [[-1.0, 0.0]], [inf, inf], None),
    "digamma": (pycoll.digamma, [[0.0, -1.0]], [-inf, nan], None),
    "asin": (pycoll.asin, [[2.0]], [nan], None),
    "avg_pool2d past float32's range": (lambda x: F.avg_pool2d(x, 2), [[[[[3e38, 3e38], [3e38, 3e38]]]]], [[[[inf]]]],
                                        [[[[[0.25, 0.25], [0.25, 0.25]]]]]),
    # the pool of the test suite's warning summary: x ** 3 of negative x, (sum) ** (1 / 3) of a negative sum
    "lp_pool2d": (lambda x: F.lp_pool2d(x, 3, 2, stride=1),
                  [[[[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0], [0.0, 0.5, -0.5]]]]],
                  [[[[3.7797632, nan], [3.9391844, nan]]]],
                  [[[[[0.069995612, nan, nan], [2.1510453, nan, nan], [0.0, nan, nan]]]]]),
    # activations, losses and reductions on E6 (forward only where pycoll's gradient rule at the
    # infinities is not paddle's: hardswish, selu, leaky_relu's inf slope, prod, var, logcumsumexp)
    "silu": (F.silu, [E6], [0, -0.26894142, inf, nan, nan, 3e38], [[0.5, 0.072329484, nan, nan, nan, 1]]),
    "mish": (F.mish, [E6], [0, -0.30340141, inf, nan, nan, 3e38], [[0.60000002, 0.059216708, nan, nan, nan, 1]]),
    "softsign": (F.softsign, [E6], [0, -0.5, nan, nan, nan, 1], [[1, 0.25, 0, 0, nan, 0]]),
    "softplus": (F.softplus, [E6], [0.69314718, 0.31326166, inf, 0, nan, 3e38], [[0.5, 0.26894143, 1, 0, nan, 1]]),
    "gelu tanh": (lambda x: F.gelu(x, approximate=True), [E6], [0, -0.15880796, inf, nan, nan, 3e38],
                  [[0.5, -0.082964063, nan, nan, nan, nan]]),
    "hardswish": (F.hardswish, [E6], [0, -0.33333334, inf, nan, nan, inf], None),
    "leaky_relu, an inf slope": (lambda x: F.leaky_relu(x, inf), [E6], [0, -inf, inf, -inf, nan, 3e38], None),
    "selu, an inf alpha": (lambda x: F.selu(x, alpha=inf), [E6], [nan, nan, inf, nan, nan, 3.1521031e38], None),
    "softplus, an inf beta": (lambda x: F.softplus(x, beta=inf), [E6], [nan, 0, inf, 0, nan, 3e38],
                              [[nan, 0, 1, 0, nan, 1]]),
    "hardsigmoid, an inf slope": (lambda x: F.hardsigmoid(x, slope=inf), [E6], [nan, 0, 1, 0, nan, 1], [[nan] * 6]),
    "prelu, an inf weight": (F.prelu, [E6, [inf]], [nan, -inf, inf, -inf, nan, 3e38],
                             [[inf, inf, 1, inf, inf, 1], [nan]]),
    "linear": (F.linear, [[[inf, 1.0], [3e38, 3e38]], [[0.0, 1.0], [1.0, 3e38]]], [[nan, inf], [3e38, inf]],
               [[[1, 3e38], [1, 3e38]], [[inf, inf], [3e38, 3e38]]]),
    "kl_div": (lambda x, y: F.kl_div(x, y, reduction="none"), [E6, [1.0] * 5 + [3e38]], [0, 1, -inf, inf, nan, -inf],
               [[-1, -1, -1, -1, -1, -3e38], None]),
    "label_smooth": (lambda x, prior: F.label_smooth(x, prior, epsilon=0.1), [[[inf, 1.0]], [[-inf, 1.0]]],
                     [[nan, 1]], [[[0.9, 0.9]], None]),
    "dropout p=1 along an axis": (lambda x: F.dropout(x, 1.0, axis=1), [[E6]], [[0, 0, nan, nan, nan, 0]], [[[0] * 6]]),
    "alpha_dropout p=1": (lambda x: F.alpha_dropout(x, 1.0), [[E6]], [[0, 0, nan, nan, nan, 0]], [[[0] * 6]]),
    "cumsum": (pycoll.cumsum, [[inf, -inf, 3e38]], [inf, nan, nan], [[3, 2, 1]]),
    "cumprod": (lambda x: pycoll.cumprod(x, 0), [[3e38, 3e38, 0.0]], [3e38, inf, nan], [[3e38, 3e38, inf]]),
    "logcumsumexp": (pycoll.logcumsumexp, [[inf, 3e38]], [inf, inf], None),
    "prod": (pycoll.prod, [[inf, 0.0]], nan, None),
    "nansum": (pycoll.nansum, [[inf, -inf, nan]], nan, [[1, 1, 0]]),
    "std": (pycoll.std, [[inf, 1.0]], nan, [[nan, nan]]),
    "var": (pycoll.var, [[3e38, -3e38]], inf, None),
    "norm p=3": (lambda x: pycoll.linalg.norm(x, 3), [[3e38, 1.0]], inf, [[nan, 0]]),
    # the backward walk sums x's two gradients, inf + -inf (paddle: NaN)
    "x * inf + x * -inf": (lambda x: x * inf + x * -inf, [[1.0]], [nan], [[nan]]),
    "y * inf + y * -inf, y = exp(x)": (lambda x: (lambda y: y * inf + y * -inf)(pycoll.exp(x)), [[1.0, 2.0]],
                                       [nan, nan], [[nan, nan]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_edge_values_are_paddles_and_unwarned(name):
    op, inputs, want, grads = CASES[name]
    tensors = _tensors(inputs, np.float32)
    out = op(*tensors)
    _same(out.numpy(), want)
    if grads is not None:
        out.backward()
        for t, g in zip(tensors, grads):
            if g is not None:  # None: an input that takes no gradient (a loss's label)
                _same(t.grad.numpy(), g)


def test_float64_edges_are_unwarned():
    """float64 takes other formulas (erf) and ranges (vander): paddle's values there."""
    x = pycoll.to_tensor(np.array([1e200, -1e200, 0.3]))
    _same(pycoll.erf(x).numpy(), [1, -1, 0.32862676])
    _same(pycoll.vander(pycoll.to_tensor(np.array([1e200, 2.0])), 3).numpy(), [[inf, 1e200, 1], [4, 2, 1]])


def test_more_edges_are_paddles_and_unwarned():
    """complex's parts, isclose past the range, gumbel_softmax at an infinite temperature, float64
    softsign of huge values (paddle's values)."""
    c = pycoll.complex(*_tensors([[1.0, -inf], [inf, nan]], np.float32)).numpy()
    _same(c.real, [1, -inf])  # not NaN: 1j * inf is never formed
    _same(c.imag, [inf, nan])
    xs = _tensors([[3e38, 1.0], [-3e38, 1.0]], np.float32)
    assert pycoll.isclose(*xs).numpy().tolist() == [False, True]
    g = F.gumbel_softmax(pycoll.to_tensor(np.array([[0.1, 0.2], [0.3, 0.4]], np.float32)), temperature=inf)
    _same(g.numpy(), [[0.5, 0.5], [0.5, 0.5]])
    x, = _tensors([[1e300, -1e300, 3e38, 1.0]], np.float64)
    out = F.softsign(x)
    out.backward()
    _same(out.numpy(), [1, -1, 1, 0.5])
    _same(x.grad.numpy(), [0, 0, 1.111111111111111e-77, 0.25])


def test_a_gradient_of_inf_times_zero_is_nan_unwarned():
    """multiply's backward multiplies the incoming gradient by the other operand: inf * 0 there
    is NaN (paddle's: x.grad [inf, inf], y.grad [nan, inf])."""
    x, y = _tensors([[0.0, 3e38], [inf, 10.0]], np.float32)
    (x * y).backward(pycoll.to_tensor(np.array([inf, inf], np.float32)))
    _same(x.grad.numpy(), [inf, inf])
    _same(y.grad.numpy(), [nan, inf])


def test_numpys_own_warnings_are_left_alone():
    """pycoll switches NumPy's warnings off only inside its own arithmetic: the user's NumPy calls
    warn (or raise, under np.errstate) as before, also after an op that raised."""
    pycoll.log(pycoll.zeros([1]))
    with pytest.raises(ValueError):
        pycoll.add(pycoll.ones([2]), pycoll.ones([3]))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))
    with np.errstate(divide="raise"):
        assert pycoll.log(pycoll.zeros([1])).numpy()[0] == -inf
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))


def test_numpys_warnings_come_back_after_a_backward():
    """The backward walk switches NumPy's warnings off for its own length only: after it ends, or
    stops with an error, the user's NumPy calls warn again."""
    x, = _tensors([[1.0]], np.float32)
    (x * inf + x * -inf).backward()
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))
    y = x * 2.0
    y.register_hook(lambda g: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        y.backward()
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))


def test_casts_of_nan_inf_and_overflows_are_unwarned():
    """astype of NaN/inf to an integer dtype and of a huge float32 to float16 (paddle is silent)."""
    assert pycoll.to_tensor([nan, 1.0]).astype("int32").tolist()[1] == 1
    _same(pycoll.to_tensor([1e10]).astype("float16").numpy(), [inf])
