"""pycoll.nn.utils: clip_grad_norm_ / clip_grad_value_ in place, parameters to a vector and back."""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn

W = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
X = np.arange(8, dtype=np.float32).reshape(2, 4) / 3


def _linear_with_grads():
    lin = nn.Linear(4, 3)
    lin.weight.set_value(W)
    lin.bias.set_value(np.array([0.1, -0.2, 0.3], np.float32))
    (lin(pycoll.to_tensor(X)) ** 2).mean().backward()
    return lin


def _grads(lin):
    return [lin.weight.grad.numpy().copy(), lin.bias.grad.numpy().copy()]


@pytest.mark.parametrize("norm_type,max_norm", [(2.0, 0.5), (1.0, 0.3), (float("inf"), 0.2), (2.0, 100.0)])
def test_clip_grad_norm_scales_in_place_and_returns_the_total(norm_type, max_norm):
    lin = _linear_with_grads()
    before = _grads(lin)
    flat = np.concatenate([g.ravel() for g in before]).astype(np.float64)
    total = np.abs(flat).max() if norm_type == float("inf") else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    returned = nn.utils.clip_grad_norm_(lin.parameters(), max_norm, norm_type=norm_type)
    assert returned.shape == [] and returned.dtype == np.float32
    np.testing.assert_allclose(float(returned), total, rtol=1e-6)
    coef = min(max_norm / (total + 1e-6), 1.0)
    for after, g in zip(_grads(lin), before):
        np.testing.assert_allclose(after, g * coef, rtol=1e-6)
    # paddle's value for the 2-norm case, measured on paddle 3.3.1 with these weights and inputs
    if norm_type == 2.0:
        np.testing.assert_allclose(float(returned), 4.210792064666748, rtol=1e-6)


def test_clip_grad_norm_refuses_what_paddle_refuses():
    lin = _linear_with_grads()
    with pytest.raises(ValueError, match="norm_type=3"):
        nn.utils.clip_grad_norm_(lin.parameters(), 1.0, norm_type=3)
    lin.weight.grad.array[0, 0] = np.nan
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(lin.parameters(), 1.0, error_if_nonfinite=True)
    assert float(nn.utils.clip_grad_norm_([nn.Linear(2, 2).weight], 1.0)) == 0.0  # no gradients yet


def test_clip_grad_value_clips_every_element_in_place():
    lin = _linear_with_grads()
    before = _grads(lin)
    nn.utils.clip_grad_value_(lin.parameters(), 0.05)
    for after, g in zip(_grads(lin), before):
        np.testing.assert_array_equal(after, np.clip(g, -0.05, 0.05))


def test_parameters_to_vector_and_back():
    lin = _linear_with_grads()
    vec = nn.utils.parameters_to_vector(lin.parameters())
    np.testing.assert_array_equal(vec.numpy(), np.concatenate([W.ravel(), [0.1, -0.2, 0.3]]).astype(np.float32))
    nn.utils.vector_to_parameters(vec * 2, lin.parameters())
    np.testing.assert_array_equal(lin.weight.numpy(), W * 2)
    with pytest.raises(ValueError, match="15 elements"):
        nn.utils.vector_to_parameters(pycoll.ones([14]), lin.parameters())
