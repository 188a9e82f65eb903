"""paddle.audio's spectral helpers (after librosa): Hz <-> mel conversion (Slaney's scale by
default, HTK's with ``htk=True``), the mel and FFT bin frequencies, the mel filter bank, power to
decibels and the DCT matrix that turns log-mel energies into MFCCs.

``hz_to_mel``/``mel_to_hz`` take a float (giving a float) or a Tensor (elementwise, with
gradients); ``power_to_db`` is differentiable in its spectrogram. The matrices are built from
pycoll's ops in the requested dtype, on the current device.
"""
from __future__ import annotations

import math
from typing import Optional, TypeVar, Union

from pycoll import math_ops
from pycoll.binary_ops import clamp
from pycoll.creation import arange, linspace
from pycoll.dtypes import DTypeLike
from pycoll.elementwise_ops import maximum, minimum
from pycoll.nn.functional import normalize
from pycoll.search_ops import where
from pycoll.tensor import Tensor
from pycoll.unary_ops import cos, log10

TensorOrFloat = TypeVar("TensorOrFloat", Tensor, float)

# Slaney's mel scale: linear (200/3 Hz a mel) below 1000 Hz, logarithmic above
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = math.log(6.4) / 27.0


def hz_to_mel(freq: TensorOrFloat, htk: bool = False) -> TensorOrFloat:
    """Frequencies in Hz as mels."""
    if htk:
        if isinstance(freq, Tensor):
            return 2595.0 * log10(1.0 + freq / 700.0)
        return 2595.0 * math.log10(1.0 + freq / 700.0)
    linear = freq / _F_SP
    if isinstance(freq, Tensor):
        logarithmic = _MIN_LOG_MEL + math_ops.log(freq / _MIN_LOG_HZ + 1e-10) / _LOGSTEP  # 1e-10: no log(0)
        return where(freq > _MIN_LOG_HZ, logarithmic, linear)
    if freq >= _MIN_LOG_HZ:
        return _MIN_LOG_MEL + math.log(freq / _MIN_LOG_HZ + 1e-10) / _LOGSTEP
    return linear


def mel_to_hz(mel: TensorOrFloat, htk: bool = False) -> TensorOrFloat:
    """Mels as frequencies in Hz (the inverse of `hz_to_mel`)."""
    if htk:
        return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)
    linear = _F_SP * mel
    if isinstance(mel, Tensor):
        return where(mel > _MIN_LOG_MEL, _MIN_LOG_HZ * math_ops.exp(_LOGSTEP * (mel - _MIN_LOG_MEL)), linear)
    if mel >= _MIN_LOG_MEL:
        return _MIN_LOG_HZ * math.exp(_LOGSTEP * (mel - _MIN_LOG_MEL))
    return linear


def mel_frequencies(n_mels: int = 64, f_min: float = 0.0, f_max: float = 11025.0, htk: bool = False,
                    dtype: DTypeLike = "float32") -> Tensor:
    """n_mels frequencies (Hz) evenly spaced on the mel scale from f_min to f_max."""
    mels = linspace(hz_to_mel(float(f_min), htk=htk), hz_to_mel(float(f_max), htk=htk), n_mels, dtype=dtype)
    return mel_to_hz(mels, htk=htk)


def fft_frequencies(sr: int, n_fft: int, dtype: DTypeLike = "float32") -> Tensor:
    """The centre frequencies (Hz) of an n_fft-point real FFT's n_fft // 2 + 1 bins at sample rate sr."""
    return linspace(0, float(sr) / 2, int(1 + n_fft // 2), dtype=dtype)


def compute_fbank_matrix(sr: int, n_fft: int, n_mels: int = 64, f_min: float = 0.0, f_max: Optional[float] = None,
                         htk: bool = False, norm: Union[str, float, None] = "slaney",
                         dtype: DTypeLike = "float32") -> Tensor:
    """The mel filter bank, ``[n_mels, n_fft // 2 + 1]``: triangles over the FFT bins between
    neighbouring mel frequencies; ``norm='slaney'`` scales each to constant energy, a number p
    normalizes each row to unit p-norm, None leaves them peaking at 1."""
    if not (norm is None or norm == "slaney" or (isinstance(norm, (int, float)) and not isinstance(norm, bool))):
        raise ValueError(f"compute_fbank_matrix: norm must be 'slaney', a number (a p-norm) or None, got {norm!r}")
    if f_max is None:
        f_max = float(sr) / 2
    fftfreqs = fft_frequencies(sr=sr, n_fft=n_fft, dtype=dtype)
    mel_f = mel_frequencies(n_mels + 2, f_min=f_min, f_max=f_max, htk=htk, dtype=dtype)
    fdiff = (mel_f[1:] - mel_f[:-1]).unsqueeze(1)
    ramps = mel_f.unsqueeze(1) - fftfreqs.unsqueeze(0)  # [n_mels + 2, bins]
    lower = -ramps[:n_mels] / fdiff[:n_mels]
    upper = ramps[2:] / fdiff[1:]
    weights = clamp(minimum(lower, upper), min=0.0)
    if norm == "slaney":
        weights = weights * (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])).unsqueeze(1)
    elif norm is not None:
        weights = normalize(weights, p=norm, axis=-1)
    return weights


def power_to_db(spect: Tensor, ref_value: float = 1.0, amin: float = 1e-10, top_db: Optional[float] = 80.0) -> Tensor:
    """A power spectrogram in decibels, ``10 log10(max(spect, amin) / ref_value)``, floored at
    top_db below its peak (unless top_db is None)."""
    if amin <= 0:
        raise ValueError(f"power_to_db: amin must be strictly positive, got {amin}")
    if ref_value <= 0:
        raise ValueError(f"power_to_db: ref_value must be strictly positive, got {ref_value}")
    if top_db is not None and top_db < 0:
        raise ValueError(f"power_to_db: top_db must be non-negative (or None), got {top_db}")
    log_spec = 10.0 * log10(clamp(spect, min=amin)) - 10.0 * math.log10(max(ref_value, amin))
    if top_db is not None:
        log_spec = maximum(log_spec, log_spec.max() - top_db)
    return log_spec


def create_dct(n_mfcc: int, n_mels: int, norm: Optional[str] = "ortho", dtype: DTypeLike = "float32") -> Tensor:
    """The DCT-II matrix ``[n_mels, n_mfcc]`` (orthonormal with norm='ortho', else unscaled by 2)."""
    if norm not in ("ortho", None):
        raise ValueError(f"create_dct: norm must be 'ortho' or None, got {norm!r}")
    n = arange(n_mels, dtype=dtype)
    k = arange(n_mfcc, dtype=dtype).unsqueeze(1)
    dct = cos(math.pi / float(n_mels) * (n + 0.5) * k)  # [n_mfcc, n_mels]
    if norm is None:
        return (dct * 2.0).T
    first = (arange(n_mfcc, dtype=dtype) == 0).astype(dct.dtype).unsqueeze(1)
    dct = dct * (1.0 - first * (1.0 - 1.0 / math.sqrt(2.0)))  # row 0 scaled by 1/sqrt(2)
    return (dct * math.sqrt(2.0 / float(n_mels))).T
