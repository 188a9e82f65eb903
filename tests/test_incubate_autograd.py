"""pycoll.incubate.autograd (paddle.incubate.autograd's functional API) and pycoll.utils.dlpack:
values against closed forms; shapes as paddle 3.3.1 gave them for the same calls."""
import numpy as np
import pytest

import pycoll
from pycoll.incubate.autograd import Hessian, Jacobian, jvp, vjp

RNG = np.random.RandomState(0)
X, Y, V = RNG.randn(2, 3), RNG.randn(3, 2), RNG.randn(2, 3)


def test_vjp_and_jvp():
    x, y = pycoll.to_tensor(X), pycoll.to_tensor(Y)
    (out, total), (gx, gy) = vjp(lambda a, b: (a @ b, (a * a).sum()), [x, y])
    np.testing.assert_allclose(out.numpy(), X @ Y)
    np.testing.assert_allclose(gx.numpy(), np.ones((2, 2)) @ Y.T + 2 * X, rtol=1e-13)
    np.testing.assert_allclose(gy.numpy(), X.T @ np.ones((2, 2)), rtol=1e-13)
    _, tangent = jvp(lambda a: pycoll.sin(a) * a, x, pycoll.to_tensor(V))
    np.testing.assert_allclose(tangent.numpy(), (np.cos(X) * X + np.sin(X)) * V, rtol=1e-13)
    leaf = pycoll.to_tensor([0.5, -1.0, 2.0], stop_gradient=False)
    _, g = vjp(lambda a: (a ** 3).sum(), leaf)  # differentiable again, to the original input
    (h,) = pycoll.grad(g.sum(), leaf)
    np.testing.assert_allclose(h.numpy(), 6 * leaf.numpy(), rtol=1e-13)


def test_jacobian_and_hessian_of_a_function():
    x, y = pycoll.to_tensor(X), pycoll.to_tensor(Y)
    J = Jacobian(lambda a, b: (a * 2, (b ** 2).sum()), [x, y])  # 6 + 1 outputs by 6 + 6 inputs
    assert J.shape == (7, 12)  # a tuple, as paddle 3.3.1 gives it
    expected = np.zeros((7, 12))
    expected[:6, :6] = 2 * np.eye(6)
    expected[6, 6:] = 2 * Y.reshape(-1)
    np.testing.assert_allclose(J[:].numpy(), expected, rtol=1e-13)
    np.testing.assert_allclose(J[6].numpy(), expected[6], rtol=1e-13)
    Jb = Jacobian(lambda a: a * a, x, is_batched=True)
    assert Jb.shape == (2, 3, 3)
    np.testing.assert_allclose(Jb[:].numpy(), np.stack([np.diag(2 * r) for r in X]), rtol=1e-13)
    H = Hessian(lambda a: (a ** 3).sum(), x)
    assert H.shape == (6, 6)
    np.testing.assert_allclose(H[:].numpy(), np.diag(6 * X.reshape(-1)), rtol=1e-13)


def test_utils_dlpack_shares_memory():
    t = pycoll.to_tensor(np.arange(3.0))
    back = pycoll.utils.dlpack.from_dlpack(pycoll.utils.dlpack.to_dlpack(t))
    t.array[0] = 7.0
    assert back.numpy()[0] == 7.0
    with pytest.raises(BufferError, match=r"to_dlpack: this tensor's bfloat16 cannot travel through numpy's DLPack.*"
                                          r"astype\('float32'\)"):
        pycoll.utils.dlpack.to_dlpack(pycoll.ones([2]).astype("bfloat16"))


@pytest.mark.parametrize("name", ["enable_prim", "disable_prim", "prim_enabled", "forward_grad"])
def test_the_primitive_operator_api_is_refused_as_paddles_dygraph_refuses_it(name):
    """paddle 3.3.1 asserts static mode in each; pycoll (always eager) says so, naming the call."""
    from pycoll.incubate import autograd

    assert name in autograd.__all__
    with pytest.raises(RuntimeError, match=f"{name}\\(\\) is only supported in paddle's static graph mode"):
        getattr(autograd, name)()
