"""pycoll.audio (paddle.audio's functional and features) and the top-level windows, against
numbers measured on paddle 3.3.1's CPU build and against NumPy computed by hand."""
import math

import numpy as np
import pytest

import pycoll
import pycoll.audio.functional as F
from pycoll.audio.features import MFCC, LogMelSpectrogram, MelSpectrogram, Spectrogram

WINDOWS = {  # paddle 3.3.1: paddle.audio.functional.get_window(spec, 6, fftbins=...).numpy()
    ('hamming', True): [0.08, 0.31, 0.77, 1.0, 0.77, 0.31],
    ('hamming', False): [0.08, 0.3978521826, 0.9121478174, 0.9121478174, 0.3978521826, 0.08],
    ('hann', True): [0.0, 0.25, 0.75, 1.0, 0.75, 0.25],
    ('hann', False): [0.0, 0.3454915028, 0.9045084972, 0.9045084972, 0.3454915028, 0.0],
    ('bartlett', True): [0.0, 0.3333333333, 0.6666666667, 1.0, 0.6666666667, 0.3333333333],
    ('bartlett', False): [0.0, 0.4, 0.8, 0.8, 0.4, 0.0],
    ('nuttall', True): [0.0003628, 0.0613345, 0.5292298, 1.0, 0.5292298, 0.0613345],
    ('nuttall', False): [0.0003628, 0.110515253, 0.798258097, 0.798258097, 0.110515253, 0.0003628],
    ('triang', True): [0.25, 0.5, 0.75, 1.0, 0.75, 0.5],
    ('triang', False): [0.1666666667, 0.5, 0.8333333333, 0.8333333333, 0.5, 0.1666666667],
    ('bohman', True): [0.0, 0.108997781, 0.608997781, 1.0, 0.608997781, 0.108997781],
    ('bohman', False): [0.0, 0.1791238937, 0.8343114523, 0.8343114523, 0.1791238937, 0.0],
    ('blackman', True): [-1.387778781e-17, 0.13, 0.63, 1.0, 0.63, 0.13],
    ('blackman', False): [-1.387778781e-17, 0.2007701433, 0.8492298567, 0.8492298567, 0.2007701433, -1.387778781e-17],
    ('cosine', True): [0.222520934, 0.6234898019, 0.9009688679, 1.0, 0.9009688679, 0.6234898019],
    ('cosine', False): [0.2588190451, 0.7071067812, 0.9659258263, 0.9659258263, 0.7071067812, 0.2588190451],
    ('tukey', True): [0.0, 0.75, 1.0, 1.0, 1.0, 0.75],
    ('tukey', False): [0.0, 0.9045084972, 1.0, 1.0, 0.9045084972, 0.0],
    (('tukey', 0.3), True): [0.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    (('tukey', 0.3), False): [0.0, 1.0, 1.0, 1.0, 1.0, 0.0],
    ('taylor', True): [0.2900953127, 0.5782126011, 0.8780082249, 1.0, 0.8780082249, 0.5782126011],
    ('taylor', False): [0.3063469273, 0.6620647789, 0.9570021269, 0.9570021269, 0.6620647789, 0.3063469273],
    (('taylor', 3, 25, False), True): [0.5682954728, 0.915510379, 1.294365171, 1.443657955, 1.294365171, 0.915510379],
    (('taylor', 3, 25, False), False): [0.587122284, 1.020979593, 1.391898123, 1.391898123, 1.020979593, 0.587122284],
    (('kaiser', 8.6), True): [0.001332513998, 0.1304019465, 0.6304119273, 1.0, 0.6304119273, 0.1304019465],
    (('kaiser', 8.6), False): [0.001332513998, 0.2010548695, 0.8494161891, 0.8494161891, 0.2010548695, 0.001332513998],
    (('gaussian', 2.0), True): [0.3246524674, 0.6065306597, 0.8824969026, 1.0, 0.8824969026, 0.6065306597],
    (('gaussian', 2.0), False): [0.4578333618, 0.754839602, 0.9692332345, 0.9692332345, 0.754839602, 0.4578333618],
    (('general_gaussian', 1.5, 2.0), True): [0.1849813999, 0.6065306597, 0.9394130628, 1.0, 0.9394130628, 0.6065306597],
    (('general_gaussian', 1.5, 2.0), False): [0.3766034507, 0.8098246793, 0.9922179383, 0.9922179383, 0.8098246793, 0.3766034507],
    (('exponential', None, 2.0), True): [0.2231301601, 0.3678794412, 0.6065306597, 1.0, 0.6065306597, 0.3678794412],
    (('exponential', None, 2.0), False): [0.2865047969, 0.4723665527, 0.7788007831, 0.7788007831, 0.4723665527, 0.2865047969],
}
FEATURES = {  # paddle 3.3.1: layer(x) on x of the test's waveform: shape, y[1, :4, 2], y.sum(), x.grad[1, 100:104] of loss (y * cos(idx)).sum()
    'spec': ([2, 33, 7], [258.1247559, 169.2759857, 24.30751228, 60.70853806], 8847.9844, [-13.103302, -15.24242592, -18.49466705, -18.88571548]),
    'mel': ([2, 10, 7], [0.5321906209, 0.2623721957, 0.01896092482, 1.432706813e-05], 11.110194, [-0.03726388514, -0.03615167737, -0.02522419766, -0.03395398334]),
    'logmel': ([2, 10, 7], [-2.739327908, -5.810822487, -17.22140503, -41.62459183], -3834.6138, [-13.4631834, -5.978650093, 13.40621948, 2.725736141]),
    'mfcc': ([2, 5, 7], [-115.0407791, 41.82754898, 32.64323044, 32.15906525], -614.78894, [17.50319862, 32.16882706, -9.470085144, -73.26028442]),
}


@pytest.mark.parametrize("spec,fftbins", list(WINDOWS))
def test_get_window_equals_paddle(spec, fftbins):
    w = F.get_window(spec, 6, fftbins=fftbins)
    assert w.dtype == pycoll.float64 and w.shape == [6]
    np.testing.assert_allclose(w.numpy(), WINDOWS[(spec, fftbins)], rtol=1e-9, atol=1e-12)


def test_get_window_short_lengths_and_dtype():
    assert F.get_window("hann", 1).numpy().tolist() == [1.0]
    assert F.get_window("hann", 0).shape == [0]
    w = F.get_window(("kaiser", 8.6), 6, dtype="float32")
    assert w.dtype == pycoll.float32
    np.testing.assert_allclose(w.numpy(), WINDOWS[(("kaiser", 8.6), True)], rtol=1e-6)
    # a periodic window of n is the symmetric window of n + 1 without its last sample
    np.testing.assert_allclose(F.get_window("blackman", 9).numpy(),
                               F.get_window("blackman", 10, fftbins=False).numpy()[:9], atol=1e-15)
    # hann by hand: 0.5 - 0.5 cos(2 pi n / N), periodic
    np.testing.assert_allclose(F.get_window("hann", 8).numpy(), 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 8),
                               atol=1e-15)


@pytest.mark.parametrize("window,length,kwargs,error,match", [
    ("gaussian", 5, {}, ValueError, "needs one or more parameters"),
    ("kaiser", 5, {}, ValueError, "pass a tuple"),
    ("nope", 5, {}, ValueError, "unknown window type 'nope'"),
    (3, 5, {}, ValueError, "not supported"),
    ("hann", -1, {}, ValueError, "win_length must be a non-negative integer, got -1"),
    ("hann", 2.5, {}, ValueError, "win_length"),
    (("exponential", 1.0, 2.0), 5, {"fftbins": False}, ValueError, "center must be None"),
    ("hann", 5, {"dtype": "int32"}, TypeError, "dtype must be a floating-point type"),
])
def test_get_window_errors(window, length, kwargs, error, match):
    with pytest.raises(error, match=match):
        F.get_window(window, length, **kwargs)


def test_top_level_windows_equal_paddle():
    # paddle 3.3.1: paddle.hann_window(6) etc., float32
    for fn, spec in [("hann_window", "hann"), ("blackman_window", "blackman"), ("bartlett_window", "bartlett")]:
        for periodic in (True, False):
            w = getattr(pycoll, fn)(6, periodic)
            assert w.dtype == pycoll.float32 and w.stop_gradient
            np.testing.assert_allclose(w.numpy(), WINDOWS[(spec, periodic)], rtol=1e-6, atol=1e-7)
    # paddle 3.3.1: paddle.kaiser_window(7, beta=5.0).numpy()
    np.testing.assert_allclose(pycoll.kaiser_window(7, beta=5.0).numpy(),
                               [0.036710888, 0.27069438, 0.65173793, 0.95524734, 0.95524734, 0.65173793, 0.27069438],
                               rtol=2e-6)
    # alpha - beta cos(2 pi n / (N - 1)) by hand, symmetric
    w = pycoll.hamming_window(7, False, alpha=0.5, beta=0.4, dtype="float64")
    np.testing.assert_allclose(w.numpy(), 0.5 - 0.4 * np.cos(2 * np.pi * np.arange(7) / 6), atol=1e-15)
    assert not pycoll.hann_window(4, requires_grad=True).stop_gradient
    with pytest.raises(TypeError, match="requires_grad must be a bool"):
        pycoll.hann_window(4, requires_grad=1)


def test_mel_scale_values_and_gradients():
    f = pycoll.to_tensor([0.0, 50.0, 999.0, 1000.0, 1500.0, 8000.0], dtype="float64", stop_gradient=False)
    m = F.hz_to_mel(f)
    m.sum().backward()
    # paddle 3.3.1: paddle.audio.functional.hz_to_mel(f) and f.grad of its sum
    np.testing.assert_allclose(m.numpy(), [0.0, 0.75, 14.985, 14.999999999999998, 20.89752182975975,
                                           45.24564047210678], rtol=1e-12)
    np.testing.assert_allclose(f.grad.numpy(), [0.015, 0.015, 0.015, 0.015, 0.009696719003210591,
                                                0.0018181348132004682], rtol=1e-9)
    f.clear_gradient()
    h = F.mel_to_hz(F.hz_to_mel(f, htk=True), htk=True)
    h.sum().backward()
    np.testing.assert_allclose(h.numpy(), f.numpy(), rtol=1e-12, atol=1e-9)  # inverse, slope 1
    np.testing.assert_allclose(f.grad.numpy(), np.ones(6), rtol=1e-9)
    assert F.hz_to_mel(1500.0) == pytest.approx(20.897521829759757, rel=1e-12)  # a float stays a float
    assert F.mel_to_hz(30.0) == pytest.approx(F.mel_to_hz(pycoll.to_tensor([30.0], "float64")).item(), rel=1e-12)
    assert F.hz_to_mel(1000.0, htk=True) == pytest.approx(2595.0 * math.log10(1 + 1000.0 / 700.0))


def test_frequencies_fbank_and_dct():
    np.testing.assert_allclose(F.fft_frequencies(16000, 10).numpy(), [0, 1600, 3200, 4800, 6400, 8000])
    # paddle 3.3.1: mel_frequencies(6, 20.0, 8000.0)
    np.testing.assert_allclose(F.mel_frequencies(6, 20.0, 8000.0).numpy(),
                               [20.0, 619.2752075195312, 1252.8060302734375, 2324.26611328125, 4312.0908203125,
                                7999.998046875], rtol=2e-6)
    fb = F.compute_fbank_matrix(16000, 32, n_mels=5, f_min=30.0, dtype="float64")
    assert fb.shape == [5, 17]
    # by hand (librosa's construction): triangles between mel_f[i], mel_f[i+1], mel_f[i+2], Slaney-normalized
    mel_f = F.mel_frequencies(7, 30.0, 8000.0, dtype="float64").numpy()
    freqs = np.linspace(0, 8000, 17)
    tri = np.maximum(0, np.minimum((freqs - mel_f[:5, None]) / (mel_f[1:6] - mel_f[:5])[:, None],
                                   (mel_f[2:, None] - freqs) / (mel_f[2:] - mel_f[1:6])[:, None]))
    np.testing.assert_allclose(fb.numpy(), tri * (2.0 / (mel_f[2:] - mel_f[:5]))[:, None], rtol=1e-12, atol=1e-18)
    fb2 = F.compute_fbank_matrix(16000, 32, n_mels=5, f_min=30.0, norm=2.0, dtype="float64").numpy()
    np.testing.assert_allclose(fb2, tri / np.linalg.norm(tri, axis=1, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match="norm must be 'slaney', a number"):
        F.compute_fbank_matrix(16000, 32, norm="l2")
    dct = F.create_dct(4, 6, dtype="float64").numpy()
    assert dct.shape == (6, 4)
    np.testing.assert_allclose(dct.T @ dct, np.eye(4), atol=1e-12)  # orthonormal columns
    # paddle 3.3.1: create_dct(4, 6, norm=None)[:, 1]
    np.testing.assert_allclose(F.create_dct(4, 6, norm=None, dtype="float64").numpy()[:, 1],
                               [1.9318516525781366, 1.4142135623730951, 0.5176380902050415, -0.5176380902050413,
                                -1.414213562373095, -1.9318516525781364], rtol=1e-12)


def test_power_to_db():
    s = pycoll.to_tensor([[1e-12, 1e-4, 0.5], [1.0, 10.0, 100.0]], dtype="float64", stop_gradient=False)
    d = F.power_to_db(s, ref_value=0.5, top_db=50.0)
    d.sum().backward()
    expected = 10 * np.log10(np.maximum(s.numpy(), 1e-10) / 0.5)
    np.testing.assert_allclose(d.numpy(), np.maximum(expected, expected.max() - 50.0), rtol=1e-12)
    # paddle 3.3.1: s.grad; the two floored entries pass their gradient to the peak
    np.testing.assert_allclose(s.grad.numpy(), [[0.0, 0.0, 8.685889638065037],
                                                [4.342944819032518, 0.43429448190325187, 0.13028834457097555]],
                               rtol=1e-12)
    assert F.power_to_db(s, top_db=None).numpy()[0, 0] == pytest.approx(-100.0)
    for kwargs, name in [({"amin": 0}, "amin"), ({"ref_value": -1}, "ref_value"), ({"top_db": -1}, "top_db")]:
        with pytest.raises(ValueError, match=name):  # paddle raises a plain Exception
            F.power_to_db(s, **kwargs)


def _waveform():
    t = np.arange(400)
    return (np.sin(0.05 * t) + 0.5 * np.cos(0.31 * t) + 0.1 * np.sin(1.7 * t)).astype("float32").reshape(2, 200)


_LAYERS = {
    "spec": lambda: Spectrogram(n_fft=64, hop_length=32, power=2.0),
    "mel": lambda: MelSpectrogram(sr=8000, n_fft=64, hop_length=32, n_mels=10),
    "logmel": lambda: LogMelSpectrogram(sr=8000, n_fft=64, hop_length=32, n_mels=10, top_db=40.0),
    "mfcc": lambda: MFCC(sr=8000, n_mfcc=5, n_fft=64, hop_length=32, n_mels=10),
}


@pytest.mark.parametrize("kind", list(FEATURES))
def test_features_equal_paddle(kind):
    shape, column, total, grad = FEATURES[kind]
    x = pycoll.to_tensor(_waveform(), stop_gradient=False)
    y = _LAYERS[kind]()(x)
    assert y.shape == shape and y.dtype == pycoll.float32
    np.testing.assert_allclose(y.numpy()[1, :4, 2], column, rtol=2e-5, atol=1e-6)
    assert float(y.sum()) == pytest.approx(total, rel=2e-5)
    (y * pycoll.cos(pycoll.arange(y.numel(), dtype="float32").reshape(shape))).sum().backward()
    # float32 logs of tiny mel energies: compared relative to the largest of them (for mfcc,
    # paddle's float32 gradient is itself 1.3e-4 of it from the float64 one)
    np.testing.assert_allclose(x.grad.numpy()[1, 100:104], grad, rtol=0, atol=4e-4 * np.abs(grad).max())


def test_spectrogram_by_hand_and_buffers():
    x = _waveform()
    layer = Spectrogram(n_fft=16, hop_length=8, window="hamming", center=False)
    w = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(16) / 16)
    frames = np.stack([x[:, i:i + 16] for i in range(0, 200 - 15, 8)], axis=1) * w  # [2, frames, 16]
    expected = np.abs(np.fft.rfft(frames, axis=-1)).transpose(0, 2, 1)
    np.testing.assert_allclose(layer(pycoll.to_tensor(x)).numpy(), expected, rtol=1e-4, atol=1e-4)
    assert [n for n, _ in MFCC(n_mels=8, n_mfcc=4).named_buffers()] == [
        "dct_matrix", "_log_melspectrogram._melspectrogram.fbank_matrix",
        "_log_melspectrogram._melspectrogram._spectrogram.fft_window"]  # paddle 3.3.1's names
    with pytest.raises(ValueError, match="n_mfcc cannot be larger than n_mels"):
        MFCC(n_mfcc=10, n_mels=8)
    with pytest.raises(ValueError, match="power must be > 0"):
        Spectrogram(power=0)


def test_audio_is_a_pycoll_attribute():
    assert pycoll.audio.functional.get_window is F.get_window
    assert pycoll.audio.features.MFCC is MFCC
