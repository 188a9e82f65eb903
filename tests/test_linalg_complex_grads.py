"""Gradients of the decompositions and matrix functions of complex matrices (and of a real matrix's
complex eigenvalues) against central differences, in paddle's convention: a real loss L of z = x + iy
has the gradient dL/dx + i dL/dy. Each loss reads the decomposition through a function its phase
and sign choices leave alone (a projector U U^H, U diag(S) V^H, eigenvalues), as a loss must."""
import numpy as np
import pytest

import pycoll
from pycoll import linalg

RS = np.random.RandomState(1)
TALL = RS.randn(4, 3) + 1j * RS.randn(4, 3)
WIDE = RS.randn(3, 5) + 1j * RS.randn(3, 5)
SQUARE = RS.randn(3, 3) + 1j * RS.randn(3, 3)


def H(a):
    return pycoll.conj(pycoll.transpose(a, [1, 0]))


CASES = {
    "qr": (lambda a: pycoll.concat(list(linalg.qr(a)), 0), TALL),
    "qr_wide": (lambda a: pycoll.concat(list(linalg.qr(a)), 1), WIDE),
    "svd_projector": (lambda a: (lambda u, s, vh: u[:, :2] @ H(u[:, :2]))(*linalg.svd(a)), TALL),
    "svd_product": (lambda a: (lambda u, s, vh: (u * s.astype(u.dtype)) @ vh)(*linalg.svd(a)), WIDE),
    "svd_values": (lambda a: linalg.svd(a)[1].astype(a.dtype), TALL),
    "pinv": (linalg.pinv, TALL),
    "pinv_hermitian": (lambda a: linalg.pinv(a + H(a), hermitian=True), SQUARE),
    "eigh_projector": (lambda a: (lambda w, v: v[:, :2] @ H(v[:, :2]))(*linalg.eigh(a + H(a))), SQUARE),
    "eig_values": (lambda a: linalg.eig(a)[0], SQUARE),
    "cholesky": (lambda a: linalg.cholesky(a @ H(a) + 3 * pycoll.eye(3, dtype=a.dtype)), SQUARE),
    "matrix_exp": (lambda a: linalg.matrix_exp(a / 2), SQUARE),
    "inv": (linalg.inv, SQUARE),
    "eig_of_a_real_matrix": (lambda a: linalg.eig(a)[0], np.array([[1.0, 2.0], [-3.0, 1.0]])),  # eigenvalues 1 +- i sqrt 6
}


def _loss(out, weights):
    return (pycoll.real(out) * pycoll.to_tensor(weights.real)).sum() + \
        (pycoll.imag(out) * pycoll.to_tensor(weights.imag)).sum()


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gradient_of_a_complex_decomposition_is_the_central_differences(name):
    fn, x0 = CASES[name]
    shape = fn(pycoll.to_tensor(x0)).shape
    weights = RS.randn(*shape) + 1j * RS.randn(*shape)
    x = pycoll.to_tensor(x0, stop_gradient=False)
    _loss(fn(x), weights).backward()

    def value(z):
        return float(_loss(fn(pycoll.to_tensor(z)), weights).numpy())
    numeric = np.zeros(x0.shape, np.complex128)
    directions = (1, 1j) if np.iscomplexobj(x0) else (1,)
    for index in np.ndindex(x0.shape):
        for d in directions:
            step = np.zeros(x0.shape, np.complex128 if np.iscomplexobj(x0) else np.float64)
            step[index] = 1e-6 * d
            numeric[index] += d * (value(x0 + step) - value(x0 - step)) / 2e-6
    got = x.grad.numpy()
    assert np.abs(got - numeric).max() <= 1e-6 * np.abs(numeric).max()
