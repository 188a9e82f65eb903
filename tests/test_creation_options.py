"""paddle 3.3's keyword-only options of the creation functions (device, requires_grad,
pin_memory, out), as paddle 3.3.1's signatures list them."""
import numpy as np
import pytest

import pycoll


@pytest.mark.parametrize("make", [
    lambda **kw: pycoll.zeros([2, 3], **kw), lambda **kw: pycoll.ones(2, 3, **kw),
    lambda **kw: pycoll.full([2, 3], 1.5, **kw), lambda **kw: pycoll.empty([2, 3], **kw),
    lambda **kw: pycoll.rand([2, 3], **kw), lambda **kw: pycoll.randn([2, 3], **kw),
    lambda **kw: pycoll.arange(6, dtype="float32", **kw),
    lambda **kw: pycoll.eye(3, **kw), lambda **kw: pycoll.linspace(0, 1, 4, **kw),
])
def test_requires_grad_and_device(make):
    made = make(requires_grad=True, device="cpu", pin_memory=False)
    assert made.stop_gradient is False and made.place == "cpu"
    assert make().stop_gradient is True
    (made * 2).sum().backward()
    np.testing.assert_array_equal(made.grad.numpy(), np.full(made.shape, 2.0, np.float32))


def test_out_receives_the_values_and_is_returned():
    out = pycoll.empty([4])
    assert pycoll.linspace(0, 3, 4, out=out) is out
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 3])
    out = pycoll.empty([2, 2])
    assert pycoll.full([2, 2], 7.0, out=out) is out and out.numpy().tolist() == [[7, 7], [7, 7]]


def test_like_functions_take_device_and_requires_grad():
    x = pycoll.ones([2])
    for like in (pycoll.zeros_like, pycoll.ones_like, pycoll.empty_like):
        assert like(x, requires_grad=True, device="cpu").stop_gradient is False
    assert pycoll.full_like(x, 3.0, requires_grad=True).stop_gradient is False
    with pytest.raises(TypeError, match="out"):
        pycoll.zeros_like(x, out=x)  # paddle's *_like take no out


@pytest.mark.parametrize("kwargs, error, match", [
    ({"requires_grad": "yes"}, TypeError, "zeros: requires_grad must be a bool, got str"),
    ({"pin_memory": 1}, TypeError, "zeros: pin_memory must be a bool, got int"),
    ({"device": "tpu"}, ValueError, "place must be 'cpu', 'gpu' or 'gpu:N', got 'tpu'"),
    ({"out": [0, 0]}, TypeError, "zeros: out must be a Tensor or None, got list"),
])
def test_bad_options_name_themselves(kwargs, error, match):
    with pytest.raises(error, match=match):
        pycoll.zeros([2], **kwargs)


@pytest.mark.parametrize("make", [pycoll.randn, pycoll.standard_normal])
@pytest.mark.parametrize("dtype, part", [("complex64", np.float32), ("complex128", np.float64)])
def test_normal_draws_of_a_complex_dtype_split_the_variance_between_the_parts(make, dtype, part):
    # paddle 3.3.1's docstring example draws complex64; its parts measured at std 0.707 each
    pycoll.seed(5)
    z = make([100_000], dtype=dtype)
    a = z.numpy()
    assert z.dtype == np.dtype(dtype) and z.shape == [100_000] and a.real.dtype == part
    assert abs(a.real.std() - 0.5 ** 0.5) < 0.01 and abs(a.imag.std() - 0.5 ** 0.5) < 0.01
    assert abs(np.corrcoef(a.real, a.imag)[0, 1]) < 0.02  # the parts drawn apart
    with pytest.raises(TypeError, match="complex64/128, got int32"):
        make([2], dtype="int32")
