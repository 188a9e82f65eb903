"""pycoll.fft: values and dtypes against numpy.fft and paddle 3.3.1 (numbers measured on its CPU
build where noted), gradients against central differences (real and imaginary parts perturbed
separately; paddle's convention dL/dRe + i dL/dIm), argument checks and paddle's alias keywords."""
import numpy as np
import pytest

import pycoll
from pycoll import fft

RNG = np.random.default_rng(3)
EPS = 1e-6


def _input(kind, shape):
    a = RNG.standard_normal(shape)
    return a + 1j * RNG.standard_normal(shape) if kind == "c" else a


# (function, input kind: real or complex, keywords, input shape); covers n / s cropping and padding,
# odd and even output lengths of the complex-to-real transforms, every norm and non-last axes
CASES = [
    ("fft", "c", dict(), (3, 6)),
    ("fft", "r", dict(n=8, axis=0, norm="ortho"), (5, 4)),
    ("ifft", "c", dict(n=4, norm="forward"), (2, 7)),
    ("rfft", "r", dict(), (3, 7)),
    ("rfft", "r", dict(n=10, axis=0, norm="ortho"), (6, 3)),
    ("irfft", "c", dict(), (3, 5)),
    ("irfft", "c", dict(n=7, norm="forward"), (2, 5)),
    ("irfft", "c", dict(n=12, axis=0, norm="ortho"), (4, 3)),
    ("hfft", "c", dict(), (3, 5)),
    ("hfft", "c", dict(n=9, norm="ortho"), (2, 4)),
    ("ihfft", "r", dict(), (3, 6)),
    ("ihfft", "r", dict(n=5, norm="forward"), (2, 8)),
    ("fft2", "r", dict(s=(3, 6), axes=(0, 2)), (4, 2, 5)),
    ("ifft2", "c", dict(norm="ortho"), (4, 5)),
    ("rfft2", "r", dict(), (2, 4, 6)),
    ("irfft2", "c", dict(s=(5, 7)), (2, 4, 4)),
    ("hfft2", "c", dict(norm="forward"), (3, 4)),
    ("ihfft2", "r", dict(), (4, 6)),
    ("fftn", "c", dict(axes=(0, 2)), (3, 2, 4)),
    ("ifftn", "c", dict(s=(3, 5)), (2, 4, 4)),
    ("rfftn", "r", dict(axes=(2, 0), norm="ortho"), (4, 3, 5)),
    ("irfftn", "c", dict(s=(4, 6), axes=(0, 1), norm="forward"), (3, 4, 2)),
    ("hfftn", "c", dict(axes=(1, 2)), (2, 3, 4)),
    ("ihfftn", "r", dict(s=(4, 5)), (2, 3, 6)),
    ("fftshift", "c", dict(), (3, 4)),
    ("ifftshift", "r", dict(axes=(0, 1)), (3, 5)),
]


def _numpy_reference(name, a, kw):
    """The same transform by numpy.fft (numpy has no hfftn: it is irfftn of the conjugate with the
    opposite norm; ihfftn is the conjugate of rfftn with the opposite norm)."""
    kw = dict(kw)
    if "s" in kw and "axes" not in kw and not name.endswith("2"):
        kw["axes"] = tuple(range(-len(kw["s"]), 0))  # paddle's default: the last len(s) axes
    opposite = {"backward": "forward", "forward": "backward", "ortho": "ortho"}[kw.get("norm", "backward")]
    if name in ("hfft2", "hfftn"):
        kw["norm"] = opposite
        return np.fft.irfftn(np.conj(a), axes=kw.pop("axes", (-2, -1) if name == "hfft2" else None), **kw)
    if name in ("ihfft2", "ihfftn"):
        kw["norm"] = opposite
        return np.conj(np.fft.rfftn(a, axes=kw.pop("axes", (-2, -1) if name == "ihfft2" else None), **kw))
    return getattr(np.fft, name)(a, **kw)


@pytest.mark.parametrize("name,kind,kw,shape", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_values_dtypes_and_gradients(name, kind, kw, shape):
    a = _input(kind, shape)
    func = getattr(fft, name)
    x = pycoll.to_tensor(a, stop_gradient=False)
    y = func(x, **kw)
    np.testing.assert_allclose(y.numpy(), _numpy_reference(name, a, kw), atol=1e-12)
    # single precision in, single precision out (paddle: float32 -> complex64, complex64 -> float32)
    y32 = func(pycoll.to_tensor(a.astype(np.complex64 if kind == "c" else np.float32)), **kw)
    assert y32.dtype == (np.float32 if name in ("irfft", "hfft", "irfft2", "hfft2", "irfftn", "hfftn")
                         or (name.endswith("shift") and kind == "r") else np.complex64)

    w = RNG.standard_normal(y.shape) + (1j * RNG.standard_normal(y.shape) if np.iscomplexobj(y.numpy()) else 0)
    y.backward(pycoll.to_tensor(w))
    assert x.grad.dtype == a.dtype  # a real input's gradient is real

    def loss(arr):
        with pycoll.no_grad():
            return float(np.real(np.conj(w) * func(pycoll.to_tensor(arr), **kw).numpy()).sum())

    numeric = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        for step in ((1, 1j) if kind == "c" else (1,)):
            plus, minus = a.copy(), a.copy()
            plus[idx] += EPS * step
            minus[idx] -= EPS * step
            numeric[idx] += step * (loss(plus) - loss(minus)) / (2 * EPS)
    np.testing.assert_allclose(x.grad.numpy(), numeric, atol=1e-6)


def test_spectral_loss_matches_paddle():
    # measured on paddle 3.3.1's CPU build: the same script with paddle for pycoll
    x = pycoll.to_tensor(np.linspace(-1, 2, 12).reshape(3, 4) ** 2, stop_gradient=False)
    loss = (pycoll.abs(fft.rfft(x)) ** 2).mean() + pycoll.abs(fft.fft2(x)).sum()
    loss.backward()
    assert abs(loss.item() - 67.77101255659092) < 1e-10
    np.testing.assert_allclose(x.grad.numpy()[2], [-1.581175215818, 3.843952151564, 6.007594182956,
                                                   13.053369770367], atol=1e-10)


def test_irfft_gradient_weights_interior_bins_twice_as_paddle():
    # paddle 3.3.1: irfft(x, n=4).sum().backward() gives x.grad = [1, 0, 0] for a length-3 x (only the
    # zero frequency moves the sum), and (irfft(x) * [1, -1, 1, -1]).sum() gives [0, 0, 1]
    x = pycoll.to_tensor(np.array([1.0, 2 + 1j, 3.0]), stop_gradient=False)
    fft.irfft(x, n=4).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 0, 0], atol=1e-12)
    x.clear_gradient()
    (fft.irfft(x) * pycoll.to_tensor([1.0, -1.0, 1.0, -1.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 0, 1], atol=1e-12)


def test_integer_input_uses_the_default_dtype_and_out_is_written():
    y = fft.fft(pycoll.to_tensor(np.array([1, 2, 3, 4])))
    assert y.dtype == np.complex64
    np.testing.assert_allclose(y.numpy(), np.fft.fft([1, 2, 3, 4]), atol=1e-6)
    out = pycoll.zeros([3], dtype="complex64")
    fft.rfft(pycoll.to_tensor([0.0, 1.0, 0.0, 0.0]), out=out)
    np.testing.assert_allclose(out.numpy(), [1, -1j, -1], atol=1e-7)  # paddle's docstring example


def test_frequencies_and_shifts():
    # paddle 3.3.1's docstring examples
    np.testing.assert_allclose(fft.fftfreq(5, d=0.5).numpy(), [0, 0.4, 0.8, -0.8, -0.4], rtol=1e-6)
    np.testing.assert_allclose(fft.rfftfreq(5, d=0.3).numpy(), [0, 0.6666667, 1.3333334], rtol=1e-6)
    assert fft.fftfreq(4).dtype == np.float32 and fft.fftfreq(4, dtype="float64").dtype == np.float64
    with pytest.raises(ValueError, match="d or n should not be 0"):
        fft.fftfreq(0)
    f = fft.fftfreq(5, d=0.5)
    np.testing.assert_allclose(fft.fftshift(f).numpy(), np.fft.fftshift(f.numpy()))
    np.testing.assert_allclose(fft.ifftshift(fft.fftshift(f)).numpy(), f.numpy())
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(fft.fftshift(pycoll.to_tensor(a), axes=1).numpy(), np.fft.fftshift(a, axes=1))


def test_paddle_alias_keywords():
    a = _input("c", (3, 4))
    np.testing.assert_allclose(fft.fft(input=pycoll.to_tensor(a), dim=0).numpy(), np.fft.fft(a, axis=0))
    np.testing.assert_allclose(fft.rfft2(input=pycoll.to_tensor(a.real), dim=(1, 0)).numpy(),
                               np.fft.rfft2(a.real, axes=(1, 0)))
    with pytest.raises(TypeError, match="alias"):
        fft.fft(pycoll.to_tensor(a), axis=0, dim=1)


@pytest.mark.parametrize("call,match", [
    (lambda x: fft.fft(x, norm="none"), "Unexpected norm"),
    (lambda x: fft.fft(x, n=0), "should be positive"),
    (lambda x: fft.fft(x, n=2.5), "should be an integer"),
    (lambda x: fft.fft(x, axis=2), r"should be in range \[-2, 2\)"),
    (lambda x: fft.fftn(x, s=[2, 2, 2]), "should not be larger than the rank"),
    (lambda x: fft.fftn(x, s=[2, 2], axes=[0]), "does not match"),
    (lambda x: fft.fft2(x[0]), "should >= 2"),
    (lambda x: fft.rfft2(x, axes=[0, 1, 1]), "sequence of 2 integers"),
])
def test_bad_arguments_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call(pycoll.to_tensor(np.ones((2, 3))))


def test_real_to_complex_refuses_complex_input():
    with pytest.raises(TypeError, match="must be a real Tensor"):
        fft.rfft(pycoll.to_tensor(np.ones(4) + 1j))


def test_the_transform_of_an_empty_tensor_is_empty_as_paddles():
    """NumPy refuses a transform of 0 points ('invalid number of data points'); paddle gives an empty result."""
    assert pycoll.fft.fft(pycoll.zeros([0])).shape == [0] and pycoll.fft.fft(pycoll.zeros([0])).dtype == "complex64"
    assert pycoll.fft.fft2(pycoll.zeros([0, 3])).shape == [0, 3]
    x = pycoll.zeros([0])
    x.stop_gradient = False
    pycoll.fft.ifft(x).abs().sum().backward()
    assert x.grad.shape == [0]
