"""pycoll.signal (frame, overlap_add, stft, istft and the Tensor methods): values against a NumPy
DFT by hand and against numbers measured on paddle 3.3.1's CPU build (float64, rounded to 8
places: pycoll agreed with them to all 10 places printed), gradients against the same paddle
runs, the round trip istft(stft(x)) == x for real and complex signals, float32 dtypes and the
argument checks."""
import numpy as np
import pytest

import pycoll
import pycoll.signal as signal

# ---- measured on paddle 3.3.1 (CPU), with the inputs the tests below build ----
FRAME_GRAD = np.array([0.0, 3.0, 6.0, 10.0, 4.0, 7.0, 12.0, 5.0, 8.0, 11.0])
OLA_VAL = np.array([1.0, -0.9899925, 1.50047259, -1.56477388, 1.18160938, -0.55540934, 0.76194675, 0.0044257,
    0.13673722])
OLA0_VAL = np.array([[0.0, 1.0], [6.0, 8.0], [14.0, 16.0], [10.0, 11.0]])
STFTA_XGRAD = np.array([0.69728533, 0.34200444, -0.6083529, 0.78849979, 0.22900596, -0.8364774, 0.08628251, 0.0814461,
    -1.10551611, -0.53137438, 0.55226332, -0.99204807, -0.60436847, 1.15226233, 0.81794076, -0.2322665])
STFTA_WGRAD = np.array([5.53979185, -2.26288129, -5.07534554, -1.39382108, 6.82365004, 0.65078931])
STFTB_GRAD_RE = np.array([[0.22852382, 0.30476138, 1.18848288, 1.29236368, 0.07732311, -1.15022173, -1.32378346,
    -0.34558699, 0.82905664, 1.41051572, 0.57334218, -0.41926914], [0.27697252, 0.34760225, -1.03604055, 0.75868569,
    1.578304, 1.13293684, -0.14771412, -1.08442228, -0.83277255, 0.48465804, 1.49248447, -0.25097252]])
STFTB_GRAD_IM = np.array([[0.3122526, 0.44716331, -0.20492179, 1.25357587, 1.31952954, 1.03267593, 0.96891062,
    1.39428463, 2.00186957, 2.36464414, 1.75690778, -0.47580452], [-0.29957555, -0.69420808, -1.80820703, -1.73482418,
    -1.01162663, -0.68927234, -0.82341131, -0.95261081, -0.55279647, 0.06319508, 0.77231443, 0.72415362]])
STFTC_RE = np.array([[1.26749883, -0.31532223, -0.13771676, 0.55133812, -0.8071541, 0.08661208], [-1.0, 1.85688875,
    -1.32540542, 0.41456125, 0.61493968, -0.56098426], [0.73250117, 0.60154472, -0.6390274, 0.49360607, -0.20690357,
    -1.2085806], [-1.0, 1.85688875, -1.32540542, 0.41456125, 0.61493968, -0.56098426]])
STFTC_IM = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.26749883, -0.99343113, 1.70251993, -1.92430923, 1.59531794,
    -0.64759634], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-0.26749883, 0.99343113, -1.70251993, 1.92430923, -1.59531794,
    0.64759634]])
ISTFTA_VAL = np.array([0.43039759, -0.02600677, 0.43709891, -0.02754601, 0.34091396, -0.06474522, 0.1576436,
    -0.08190321, -0.06720723])
ISTFTA_GRAD_RE = np.array([[0.36582576, 0.83750977, 1.38644751, 1.78047084, 1.39154569, 0.53738339], [-0.21188539,
    -0.67849843, -1.08995149, -1.75302312, -1.47037214, 0.34144288], [-0.06113037, -0.07866989, -0.07624531,
    -0.09188336, 0.71936102, -0.50855002], [-0.09268314, -0.05320889, -0.07879929, 0.16765726, -0.55778078,
    -0.05689004], [-0.00012687, -0.02713257, -0.03992859, 0.14068081, 0.32375029, 0.25571948]])
ISTFTA_GRAD_IM = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.47218222, 0.55988432, 0.58279134, 0.34696979,
    -1.25301285, -0.84999291], [-0.08428872, 0.00809487, -0.00650081, -0.35496882, 0.64529954, -0.28166391],
    [0.04535295, 0.02616718, 0.01368565, -0.24330099, -0.25707789, 0.45165999], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
ISTFTA_WGRAD = np.array([-0.75124587, 0.37179215, -6.97029026, 0.36492467, -0.34214913, 0.13668039, 2.13589581,
    1.58356499])
ISTFTB_RE = np.array([[0.17095432, -0.24146565, 0.48435822, 0.4176699, 0.09733757, -0.20303964, -0.71355167,
    -0.18942358], [0.30742871, 0.01280386, -0.24166219, -0.22952899, -0.37352328, -0.29816194, -0.32442497,
    -1.12172793]])
ISTFTB_IM = np.array([[-0.11286589, -0.04648028, -0.01537094, 0.17758123, 0.39154409, 0.64485675, 0.43272408,
    0.85539644], [0.04544772, 0.29716955, 0.24757481, 0.54214621, 0.58028829, 0.61175129, 0.30478003, 0.39547741]])
ISTFTC_VAL = np.array([0.21129737, 0.22656861, 0.09471929, -0.08615799])
ISTFTB_GRAD_RE = np.array([[2.08333333, 1.33333333, 1.16666667, 1.33333333, 2.08333333], [1.04166667, 0.375,
    -0.04166667, -0.45833333, -1.25], [0.58333333, 0.16666667, 0.0, -0.16666667, -0.58333333], [0.29166667, 0.125,
    0.20833333, 0.29166667, 0.75]])
ISTFTB_GRAD_IM = np.array([[3.125, 2.0, 1.75, 2.0, 3.125], [0.75, 0.29166667, 0.20833333, 0.125, 0.29166667], [0.875,
    0.25, 0.0, -0.25, -0.875], [1.25, 0.45833333, 0.04166667, -0.375, -1.04166667]])


def _t(a, grad=True):
    return pycoll.to_tensor(a, stop_gradient=not grad)


def _close(got, want, tol=1e-7):
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=tol)


def _dft_frames(x, n_fft, hop, window, onesided, norm_scale=1.0):
    """stft by hand: the frames of an already padded x, windowed, through an explicit DFT matrix."""
    count = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., t * hop:t * hop + n_fft] * window for t in range(count)], axis=-1)
    k = np.arange(n_fft)
    dft = np.exp(-2j * np.pi * np.outer(k, k) / n_fft) * norm_scale
    out = np.einsum("fn,...nt->...ft", dft, frames)
    return out[..., :n_fft // 2 + 1, :] if onesided else out


def test_frame_values_and_gradient_as_paddle():
    x = np.arange(10, dtype=np.float64) ** 1.5
    xt = _t(x)
    f = signal.frame(xt, 4, 3)
    assert f.shape == [4, 3]
    _close(f, np.stack([x[0:4], x[3:7], x[6:10]], axis=-1))
    (f * _t(np.arange(12.0).reshape(4, 3), False)).sum().backward()
    _close(xt.grad, FRAME_GRAD)  # overlapping samples get the sum over their frames
    f0 = signal.frame(_t(np.arange(12.0).reshape(6, 2)), 3, 2, axis=0)
    assert f0.shape == [2, 3, 2]
    _close(f0[1], np.arange(4.0, 10.0).reshape(3, 2))


def test_overlap_add_values_and_gradient_as_paddle():
    fr = _t(np.cos(np.arange(15.0)).reshape(5, 3))  # frame_length 5, 3 frames, hop 2
    out = signal.overlap_add(fr, 2)
    _close(out, OLA_VAL)
    (out * _t(np.arange(9.0) + 1, False)).sum().backward()
    # the gradient of overlap_add is the frames of the upstream gradient
    _close(fr.grad, signal.frame(_t(np.arange(9.0) + 1, False), 5, 2).numpy())
    _close(signal.overlap_add(_t(np.arange(12.0).reshape(3, 2, 2)), 1, axis=0), OLA0_VAL)
    # hop longer than a frame leaves gaps of zeros
    _close(signal.overlap_add(_t(np.ones((2, 3))), 3), [1, 1, 0, 1, 1, 0, 1, 1])


def test_stft_real_padded_window_values_and_gradients():
    x = np.sin(0.7 * np.arange(16)) + 0.1 * np.arange(16)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(6) / 6) + 0.1
    xt, wt = _t(x), _t(w)
    spec = signal.stft(xt, 8, hop_length=3, win_length=6, window=wt)
    assert spec.shape == [5, 6] and spec.dtype == pycoll.complex128
    want = _dft_frames(np.pad(x, 4, mode="reflect"), 8, 3, np.pad(w, 1), onesided=True)
    _close(spec, want, 1e-12)
    a = np.cos(np.arange(30.0)).reshape(5, 6)
    b = np.sin(np.arange(30.0) * 0.3).reshape(5, 6)
    (spec.real() * _t(a, False) + spec.imag() * _t(b, False)).sum().backward()
    _close(xt.grad, STFTA_XGRAD)
    _close(wt.grad, STFTA_WGRAD)


def test_stft_complex_batch_normalized_values_and_gradient():
    xc = (np.cos(np.arange(24) * 0.4) + 1j * np.sin(np.arange(24) * 0.9)).reshape(2, 12)
    xt = _t(xc)
    spec = xt.stft(4, center=False, normalized=True)  # the Tensor method; hop 1, two-sided
    assert spec.shape == [2, 4, 9] and spec.dtype == pycoll.complex128
    _close(spec, _dft_frames(xc, 4, 1, np.ones(4), onesided=False, norm_scale=0.5), 1e-12)
    a = np.cos(np.arange(72.0)).reshape(2, 4, 9)
    b = np.sin(np.arange(72.0) * 0.3).reshape(2, 4, 9)
    (spec.real() * _t(a, False) + spec.imag() * _t(b, False)).sum().backward()
    _close(xt.grad, STFTB_GRAD_RE + 1j * STFTB_GRAD_IM)
    with pytest.raises(ValueError, match="onesided"):
        signal.stft(xt, 4, onesided=True)


def test_stft_constant_pad_two_sided_and_float32():
    x = np.cos(np.arange(10) * 1.3)
    spec = signal.stft(_t(x), 4, hop_length=2, pad_mode="constant", onesided=False)
    _close(spec, STFTC_RE + 1j * STFTC_IM)
    spec32 = signal.stft(_t(x.astype(np.float32)), 4, hop_length=2)
    assert spec32.dtype == pycoll.complex64 and spec32.shape == [3, 6]


def test_istft_values_and_gradients_as_paddle():
    s = (np.cos(np.arange(30) * 0.5) + 1j * np.sin(np.arange(30) * 0.2)).reshape(5, 6)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 8) + 0.2
    st, wt = _t(s), _t(w)
    y = signal.istft(st, 8, hop_length=2, window=wt, length=9)
    assert y.shape == [9] and y.dtype == pycoll.float64
    _close(y, ISTFTA_VAL)
    (y * _t(np.arange(9.0) + 1, False)).sum().backward()
    _close(st.grad, ISTFTA_GRAD_RE + 1j * ISTFTA_GRAD_IM)
    _close(wt.grad, ISTFTA_WGRAD)


def test_istft_complex_output_as_paddle():
    s = (np.cos(np.arange(40) * 0.7) + 1j * np.sin(np.arange(40) * 0.35)).reshape(2, 4, 5)
    st = _t(s)
    y = st.istft(4, hop_length=1, center=False, normalized=True, onesided=False, return_complex=True)
    assert y.shape == [2, 8] and y.dtype == pycoll.complex128
    _close(y, ISTFTB_RE + 1j * ISTFTB_IM)
    (y.real() * 2 + y.imag() * 3).sum().backward()
    _close(st.grad, np.stack([ISTFTB_GRAD_RE + 1j * ISTFTB_GRAD_IM] * 2))
    # a real signal from a two-sided spectrum: its non-negative half is used
    _close(signal.istft(_t(s[0]), 4, hop_length=1, onesided=False), ISTFTC_VAL)


def test_round_trip_real_and_complex():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 50))
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)
    # (n_fft, hop, window, center, length asked for, samples back): without center the frames cover
    # 6 * 5 + 16 samples
    for n_fft, hop, window, center, ask, length in ((16, 4, hann, True, 50, 50), (16, 5, None, False, None, 46),
                                                    (15, 3, hann[:15], True, 50, 50)):
        win = None if window is None else _t(window, False)
        spec = signal.stft(_t(x), n_fft, hop, window=win, center=center)
        back = signal.istft(spec, n_fft, hop, window=win, center=center, length=ask)
        assert back.shape == [2, length]
        _close(back, x[:, :length], 1e-12)
    xc = x + 1j * rng.standard_normal((2, 50))
    spec = signal.stft(_t(xc), 16, 4, window=_t(hann, False))
    back = signal.istft(spec, 16, 4, window=_t(hann, False), onesided=False, return_complex=True, length=50)
    _close(back, xc, 1e-12)


def test_argument_errors():
    x = _t(np.ones(16), False)
    with pytest.raises(ValueError, match="x must be 1-D or 2-D"):
        signal.stft(_t(np.ones((2, 2, 8)), False), 4)
    with pytest.raises(ValueError, match="n_fft must be in"):
        signal.stft(x, 32)
    with pytest.raises(ValueError, match="win_length must be in"):
        signal.stft(x, 8, win_length=9)
    with pytest.raises(ValueError, match="window must be a 1-D tensor of win_length"):
        signal.stft(x, 8, window=_t(np.ones(7), False))
    with pytest.raises(ValueError, match="pad_mode"):
        signal.stft(x, 8, pad_mode="circular")
    with pytest.raises(TypeError, match="n_fft must be an int"):
        signal.stft(x, 8.0)
    with pytest.raises(TypeError, match="x must be a complex tensor"):
        signal.istft(_t(np.ones((5, 3)), False), 8)
    spec = signal.stft(x, 8, 2)
    with pytest.raises(ValueError, match="fft_size"):
        signal.istft(spec, 8, 2, onesided=False)
    with pytest.raises(ValueError, match="hop_length must be in"):
        signal.istft(spec, 8, 9)
    with pytest.raises(ValueError, match="NOLA"):
        signal.istft(spec, 8, 2, window=_t(np.zeros(8), False))
    with pytest.raises(ValueError, match="return_complex"):
        signal.istft(spec, 8, 2, return_complex=True)
    with pytest.raises(ValueError, match="axis must be 0 or -1"):
        signal.frame(x, 4, 2, axis=1)
    with pytest.raises(ValueError, match="frame_length must be at most"):
        signal.frame(x, 17, 2)
    with pytest.raises(ValueError, match="hop_length must be positive"):
        signal.overlap_add(_t(np.ones((4, 3)), False), 0)
    assert pycoll.signal is signal
