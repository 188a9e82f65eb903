"""The axis argument of the reductions as paddle 3.3.1 reads it: an empty list reduces every axis
(it reduced none, silently), and axis 0 or -1 of a 0-d tensor is the tensor itself (NumPy's
AxisError before). Expected values are paddle's."""
import numpy as np
import pytest

import pycoll

REDUCTIONS = ["sum", "mean", "max", "min", "prod", "amax", "amin", "logsumexp", "std", "var", "nansum", "nanmean",
              "all", "any", "count_nonzero"]


def _call(op, x, **kwargs):
    if op in ("all", "any"):
        x = x > 3
    return getattr(pycoll, op)(x, **kwargs)


@pytest.mark.parametrize("op", REDUCTIONS + ["norm"])
def test_an_empty_axis_list_reduces_every_axis(op):
    x = pycoll.arange(12, dtype="float32").reshape([3, 4])
    call = (lambda **kw: pycoll.linalg.norm(x, **kw)) if op == "norm" else (lambda **kw: _call(op, x, **kw))
    whole, listed = call(), call(axis=[])
    assert listed.shape == whole.shape == []
    np.testing.assert_allclose(listed.numpy(), whole.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", REDUCTIONS + ["norm"])
@pytest.mark.parametrize("axis", [0, -1, [0]])
def test_a_0d_tensor_reduces_over_its_axis_to_itself(op, axis):
    s = pycoll.to_tensor(2.0, stop_gradient=False)
    call = (lambda: pycoll.linalg.norm(s, axis=axis)) if op == "norm" else (lambda: _call(op, s, axis=axis))
    out = call()
    assert out.shape == []
    expected = {"std": np.nan, "var": np.nan, "all": False, "any": False, "count_nonzero": 1}.get(op, 2.0)
    np.testing.assert_array_equal(out.numpy(), expected)
    if op not in ("all", "any", "count_nonzero", "std", "var"):
        out.backward()
        assert s.grad.shape == [] and float(s.grad) == 1.0
    with pytest.raises(ValueError, match="axis must be ints in"):
        call_out_of_range = (lambda: pycoll.linalg.norm(s, axis=1)) if op == "norm" else (lambda: _call(op, s, axis=1))
        call_out_of_range()
