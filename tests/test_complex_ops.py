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


def test_complex_division_stays_complex():
    """paddle 3.3.1: [0.4+0.3j, 0.5135-0.0811j]; pycoll gave float32 [0.25, 0.5], dropping the imaginary parts."""
    a = pycoll.to_tensor(np.array([1 + 2j, 3 - 1j]))
    np.testing.assert_allclose((a / (a + 3)).numpy(), [0.4 + 0.3j, 0.5135135135 - 0.0810810811j], rtol=1e-9)
    np.testing.assert_allclose((2 / a).numpy(), [0.4 - 0.8j, 0.6 + 0.2j], rtol=1e-12)
    assert (a / 2).dtype == np.complex128


# a real loss of complex z: its gradient is dL/dx + i dL/dy (paddle's and torch's convention);
# paddle 3.3.1 gives, at z = 1+2j: d real(z*z) = 2-4j, d real(exp z) = -1.1312-2.4717j
HOLOMORPHIC = {
    "multiply": lambda z: z * z * (0.5 - 1j),
    "divide": lambda z: (z + 1) / (z * z + 2),
    "exp": pycoll.exp, "sin": pycoll.sin, "tanh": pycoll.tanh, "sqrt": pycoll.sqrt, "log": pycoll.log,
    "reciprocal": pycoll.reciprocal, "square": pycoll.square, "pow": lambda z: z ** 3,
    "matmul": lambda z: pycoll.matmul(z.reshape([1, 3]), pycoll.to_tensor(np.array([[2 + 1j], [1j], [-1 + 0j]]))),
    "prod": lambda z: pycoll.prod(z),
}


@pytest.mark.parametrize("op", sorted(HOLOMORPHIC))
def test_gradients_of_complex_ops_follow_the_convention(op):
    f = HOLOMORPHIC[op]
    weights = np.array([0.7, -0.4, 1.3])

    def loss(z):
        out = f(z)
        flat = out.reshape([-1])
        n = flat.shape[0]
        return ((pycoll.real(flat) * pycoll.to_tensor(weights[:n])).sum()
                + (pycoll.imag(flat) * pycoll.to_tensor(weights[::-1][:n].copy())).sum())

    z = pycoll.to_tensor(Z.copy(), stop_gradient=False)
    loss(z).backward()
    expected = np.zeros(3, complex)
    for i in range(3):
        for unit in (1, 1j):
            step = np.zeros(3, complex)
            step[i] = 1e-6 * unit
            with pycoll.no_grad():
                up, down = float(loss(pycoll.to_tensor(Z + step))), float(loss(pycoll.to_tensor(Z - step)))
            expected[i] += unit * (up - down) / 2e-6
    np.testing.assert_allclose(z.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_paddles_numbers_for_two_holomorphic_gradients():
    z = pycoll.to_tensor(np.array([1 + 2j]), stop_gradient=False)
    pycoll.real(z * z).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 - 4j])
    z = pycoll.to_tensor(np.array([1 + 2j]), stop_gradient=False)
    pycoll.real(pycoll.exp(z)).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [-1.13120438 - 2.47172667j], rtol=1e-8)


def test_an_op_outputs_gradient_is_in_the_convention_for_grad_hooks_and_retain_grads():
    """L = sum |2x|: dL/dy = y / |y| for y = 2x, as paddle 3.3.1 gives it from paddle.grad,
    retain_grads and a hook; a hook's replacement (g * 1j) flows on in the convention too."""
    x0 = np.array([1 + 2j, 2 - 1j])
    want_y = 2 * x0 / np.abs(2 * x0)
    x = pycoll.to_tensor(x0, stop_gradient=False)
    y = x * 2
    gy, gx = pycoll.grad(pycoll.abs(y).sum(), [y, x])
    np.testing.assert_allclose(gy.numpy(), want_y, rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), 2 * want_y, rtol=1e-12)
    x = pycoll.to_tensor(x0, stop_gradient=False)
    y = x * 2
    y.retain_grads()
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy()) or g * 1j)
    pycoll.abs(y).sum().backward()
    np.testing.assert_allclose(seen[0], want_y, rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), want_y, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2j * want_y, rtol=1e-12)  # paddle: [-1.789+0.894j, ...]


def test_as_complex_and_as_real_convert_and_pass_gradients():
    x = pycoll.to_tensor([[1.0, 2.0], [3.0, -1.0]], stop_gradient=False)
    z = pycoll.as_complex(x)
    assert z.dtype == np.complex64 and z.numpy().tolist() == [1 + 2j, 3 - 1j]
    back = pycoll.as_real(z * z)
    assert back.shape == [2, 2]
    (back * pycoll.to_tensor([[1.0, 0.0], [0.0, 1.0]])).sum().backward()  # real(z0^2) + imag(z1^2)
    # real(z0^2) = x^2 - y^2: (2x, -2y) = (2, -4); imag(z1^2) = 2xy: (2y, 2x) = (-2, 6)
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, -4.0], [-2.0, 6.0]], rtol=1e-6)
    with pytest.raises(ValueError, match="as_complex: x must be a floating tensor whose last dimension is 2"):
        pycoll.as_complex(pycoll.ones([3]))


def test_gradients_at_zero_are_zero_where_paddle_gives_zero():
    """A probe of dtype semantics: paddle 3.3.1 gives [0, 0.25] for sqrt(abs(x)) and abs(x) ** 0.5
    at x = [0, 4], and [0, 5.545] for the exponent's gradient of pow([0, 2], y); pycoll gave NaN
    at 0 (0 * inf), which turns a parameter into NaN after one step."""
    with np.errstate(all="ignore"):
        for f in (lambda x: pycoll.sqrt(pycoll.abs(x)), lambda x: pycoll.abs(x) ** 0.5):
            x = pycoll.to_tensor([0.0, 4.0], stop_gradient=False)
            f(x).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.25])
        y = pycoll.to_tensor([2.0, 3.0], stop_gradient=False)
        pycoll.pow(pycoll.to_tensor([0.0, 2.0]), y).sum().backward()
        np.testing.assert_allclose(y.grad.numpy(), [0.0, 8 * np.log(2)], rtol=1e-6)


def test_float_only_ops_refuse_integer_tensors_and_unsigned_cumsum_is_int64():
    """paddle has no integer kernel for these; pycoll gave a loss of 0 (cross_entropy) or float64."""
    import pycoll.nn.functional as F
    for call in (lambda: F.cross_entropy(pycoll.to_tensor([[1, 3, 0]]), pycoll.to_tensor([1])),
                 lambda: F.softmax(pycoll.to_tensor([1, 2])), lambda: F.log_softmax(pycoll.to_tensor([1, 2]))):
        with pytest.raises(TypeError, match="must hold floating-point numbers, got dtype int64"):
            call()
    assert F.softmax(pycoll.to_tensor([1, 2]), dtype="float32").dtype == np.float32
    assert pycoll.cumsum(pycoll.to_tensor(np.array([1, 2, 3], np.uint8))).dtype == np.int64  # paddle's
