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


def test_empty_axis_lists_of_the_other_axis_taking_ops_as_paddles():
    x = pycoll.arange(12, dtype="float32").reshape([3, 4])
    # paddle 3.3.1: quantile/nanquantile of all of x; squeeze of every size-1 axis; roll of x flattened
    assert pycoll.quantile(x, 0.5, axis=[]).shape == [] and float(pycoll.quantile(x, 0.5, axis=[])) == 5.5
    assert float(pycoll.nanquantile(x, 0.5, axis=[])) == 5.5
    assert pycoll.quantile(x, [0.25, 0.5], axis=[]).shape == [2]
    y = pycoll.ones([1, 2, 3])
    assert pycoll.squeeze(y, axis=[]).shape == [2, 3] and y.squeeze(()).shape == [2, 3]
    assert pycoll.roll(pycoll.arange(6), 1, axis=[]).numpy().tolist() == [5, 0, 1, 2, 3, 4]
    s = pycoll.to_tensor(2.5)
    assert float(pycoll.quantile(s, 0.5, axis=0)) == 2.5 and float(pycoll.nanmedian(s, axis=[0])) == 2.5
    for call, words in ((lambda: pycoll.argmin(x, axis=[]), r"axis must be one int, got \[\]"),
                        (lambda: pycoll.median(x, axis=[]), r"median: axis must be an int or None, got \[\]"),
                        (lambda: pycoll.sum(s, axis=1), r"axis must be ints in \[-1, 1\) \(x is 0-d\), got 1")):
        with pytest.raises(ValueError, match=words):
            call()
