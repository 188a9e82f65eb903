"""real, imag, conj, angle and complex: values and gradients as paddle 3.3.1 gives them (measured:
the loss sum(w * real(out)) + sum(w[::-1] * imag(out)) for complex outputs, sum(w * out) otherwise,
on z = [1+2j, -0.5+0.25j, 3-1j], w = [0.3, -1.2, 2.0])."""
import numpy as np
import pytest

import pycoll

Z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])
W = np.array([0.3, -1.2, 2.0])
PADDLE = {  # op -> (values, z's gradient)
    "real": ([1.0, -0.5, 3.0], [0.3, -1.2, 2.0]),
    "imag": ([2.0, 0.25, -1.0], [0.3j, -1.2j, 2j]),
    "conj": ([1 - 2j, -0.5 - 0.25j, 3 + 1j], [0.3 - 2j, -1.2 + 1.2j, 2 - 0.3j]),
    "angle": ([1.1071487177940904, 2.677945044588987, -0.3217505543966422], [-0.12 + 0.06j, 0.96 + 1.92j, 0.2 + 0.6j]),
}


@pytest.mark.parametrize("op", sorted(PADDLE))
def test_values_and_gradients_are_paddles(op):
    z = pycoll.to_tensor(Z.copy(), stop_gradient=False)
    out = getattr(pycoll, op)(z)
    w = pycoll.to_tensor(W)
    if out.dtype.kind == "c":
        loss = (pycoll.real(out) * w).sum() + (pycoll.imag(out) * pycoll.to_tensor(W[::-1].copy())).sum()
    else:
        loss = (out * w).sum()
    loss.backward()
    values, grad = PADDLE[op]
    np.testing.assert_allclose(out.numpy(), values, rtol=1e-12)
    np.testing.assert_allclose(z.grad.numpy(), grad, rtol=1e-12, atol=1e-15)
    assert getattr(z, op)().numpy().tolist() == out.numpy().tolist()  # the Tensor method


def test_complex_builds_from_parts_and_sends_each_its_gradient():
    re = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    im = pycoll.to_tensor([[3.0], [4.0]], stop_gradient=False)  # broadcast
    z = pycoll.complex(re, im)
    assert z.dtype == np.complex64 and z.numpy().tolist() == [[1 + 3j, 2 + 3j], [1 + 4j, 2 + 4j]]
    (pycoll.real(z) * 2 + pycoll.imag(z) * 5).sum().backward()
    assert re.grad.numpy().tolist() == [4.0, 4.0] and im.grad.numpy().tolist() == [[10.0], [10.0]]
    with pytest.raises(TypeError, match="complex: real and imag"):
        pycoll.complex(re, pycoll.to_tensor([1, 2]))


def test_real_tensors_act_as_numpys():
    x = pycoll.to_tensor([1.0, -2.0])
    assert pycoll.real(x).numpy().tolist() == [1.0, -2.0] and pycoll.imag(x).numpy().tolist() == [0.0, 0.0]
    assert pycoll.conj(x).numpy().tolist() == [1.0, -2.0]
    np.testing.assert_allclose(pycoll.angle(x).numpy(), [0, np.pi], rtol=1e-6)
