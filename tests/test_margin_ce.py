"""F.margin_cross_entropy: paddle 3.3.1 has no CPU kernel for it, so values are checked against
its docstring's printed GPU results and against NumPy by hand (forward as paddle's kernel:
margin on the label's cosine, scale, log-softmax; logits gradient as its grad kernel:
(softmax - onehot) * scale, times m1 sin(m1 acos x + m2) / sqrt(1 - x^2) in the label's column)."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
from conftest import assert_ok, launch

DOC_LOGITS = np.array([[-0.59561850, 0.32797505, 0.80279214, 0.00144975],
                       [-0.16265212, 0.84155098, 0.62008629, 0.79126072]])


def _numpy_margin_ce(x, label, m1, m2, m3, s):
    """(per-row loss, softmax, d(sum of loss * w)/dx for row weights w = 1)."""
    rows = np.arange(len(label))
    z = x.astype(np.float64).copy()
    xl = z[rows, label]
    if abs(m1 - 1) > 1e-8 or abs(m2) > 1e-8:
        z[rows, label] = np.cos(m1 * np.arccos(xl) + m2)
    z[rows, label] -= m3
    z *= s
    zmax = z.max(1, keepdims=True)
    lse = np.log(np.exp(z - zmax).sum(1)) + zmax[:, 0]
    loss = lse - z[rows, label]
    soft = np.exp(z - lse[:, None])
    grad = soft.copy()
    grad[rows, label] -= 1
    if abs(m1 - 1) > 1e-8 or abs(m2) > 1e-8:
        grad[rows, label] *= m1 * np.sin(m1 * np.arccos(xl) + m2) / np.sqrt(1 - xl * xl)
    return loss, soft, grad * s


def test_paddle_docstring_example():
    t = pycoll.to_tensor(DOC_LOGITS, stop_gradient=False)
    loss, soft = F.margin_cross_entropy(t, pycoll.to_tensor(np.array([1, 0])), return_softmax=True, reduction=None)
    assert loss.shape == [2, 1] and soft.shape == [2, 4] and soft.stop_gradient
    # paddle 3.3.1's printed values (GPU), from logits rounded to 8 digits
    np.testing.assert_allclose(loss.numpy().ravel(), [61.94391901, 93.30853839], rtol=5e-9)
    np.testing.assert_allclose(soft.numpy(), [[0, 0, 1, 0], [0, 0.96152676, 0.00000067, 0.03847257]], atol=1e-8)


@pytest.mark.parametrize("margins", [(1.0, 0.5, 0.0, 64.0), (1.35, 0.25, 0.1, 8.0), (1.0, 0.0, 0.35, 30.0),
                                     (1.0, 0.0, 0.0, 1.0), (2.0, 0.0, 0.0, 16.0)])
@pytest.mark.parametrize("reduction", ["mean", "sum", None, "none"])
def test_values_and_gradients_equal_numpy(margins, reduction):
    rng = np.random.RandomState(7)
    x = rng.randn(6, 9)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    label = rng.randint(0, 9, size=6)
    t = pycoll.to_tensor(x, stop_gradient=False)
    loss, soft = F.margin_cross_entropy(t, pycoll.to_tensor(label), *margins, return_softmax=True,
                                        reduction=reduction)
    want, want_soft, grad = _numpy_margin_ce(x, label, *margins)
    weight = {"mean": 1 / 6, "sum": 1.0}.get(reduction, 1.0)
    if reduction in ("mean", "sum"):
        assert loss.shape == []
        np.testing.assert_allclose(float(loss), want.sum() * weight, rtol=1e-12)
        loss.backward()
    else:
        np.testing.assert_allclose(loss.numpy(), want[:, None], rtol=1e-12)
        loss.sum().backward()
    np.testing.assert_allclose(soft.numpy(), want_soft, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(t.grad.numpy(), grad * weight, rtol=1e-9, atol=1e-12)


def test_float32_and_float16_logits():
    x = DOC_LOGITS
    _, _, grad = _numpy_margin_ce(x, np.array([1, 0]), 1.0, 0.5, 0.0, 64.0)
    for dtype, tol in (("float32", 2e-5), ("float16", 2e-3)):
        t = pycoll.to_tensor(x.astype(dtype), stop_gradient=False)
        loss = F.margin_cross_entropy(t, pycoll.to_tensor(np.array([[1], [0]], "int32")), reduction="sum")
        assert loss.dtype == np.dtype(dtype)
        loss.backward()
        np.testing.assert_allclose(float(loss), 61.94391901 + 93.30853839, rtol=tol)
        np.testing.assert_allclose(t.grad.numpy().astype(np.float64), grad, rtol=tol, atol=tol * 64)


def test_bad_input_is_refused():
    x, label = pycoll.to_tensor(DOC_LOGITS), pycoll.to_tensor(np.array([1, 0]))
    with pytest.raises(ValueError, match="reduction"):
        F.margin_cross_entropy(x, label, reduction="avg")
    with pytest.raises(ValueError, match="group"):
        F.margin_cross_entropy(x, label, group="mp")
    with pytest.raises(ValueError, match=r"label ids must lie in \[0, 4\)"):
        F.margin_cross_entropy(x, pycoll.to_tensor(np.array([1, 4])))
    with pytest.raises(ValueError, match="label must be"):
        F.margin_cross_entropy(x, pycoll.to_tensor(np.array([1, 0, 2])))
    with pytest.raises(TypeError, match="label must hold integer"):
        F.margin_cross_entropy(x, pycoll.to_tensor(np.array([1.0, 0.0])))
    with pytest.raises(ValueError, match="num_classes > 0"):
        F.margin_cross_entropy(pycoll.to_tensor(np.zeros((2, 0))), label)


def test_two_ranks_class_blocks_of_different_widths():
    assert_ok(launch(2, "margin_ce.py", timeout=90), expect_lines=2)


def test_same_on_gpu_arrays():
    """tests/strict_cupy.py in CuPy's place (it refuses host arrays meeting device arrays): the
    CPU's loss, softmax and gradient, held in device arrays."""
    import strict_cupy

    def compute():
        t = pycoll.to_tensor(DOC_LOGITS.astype("float32"), stop_gradient=False)
        loss, soft = F.margin_cross_entropy(t, pycoll.to_tensor(np.array([1, 0])), 1.2, 0.3, 0.1, return_softmax=True)
        loss.backward()
        return loss, soft, t.grad

    with strict_cupy.installed():
        results = strict_cupy.on_each_place(compute)
    for want, got in zip(results["cpu"], results["gpu"]):
        assert isinstance(got.array, strict_cupy.ndarray)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
