"""paddle.audio.features: layers that turn waveforms ``[N, T]`` into spectral features
``[N, bins, frames]`` -- Spectrogram (``|stft| ** power``), MelSpectrogram (the mel filter bank
applied to it), LogMelSpectrogram (in decibels) and MFCC (the DCT of those). Their windows, filter
banks and DCT matrices are buffers; the features are differentiable in the waveform."""
from __future__ import annotations

from typing import Optional, Union

from pycoll.audio.functional import compute_fbank_matrix, create_dct, get_window, power_to_db
from pycoll.audio.functional.window import WindowSpec
from pycoll.dtypes import DTypeLike
from pycoll.math_ops import abs as magnitude, matmul, pow as power_of
from pycoll.nn.layer import Layer
from pycoll.signal import stft
from pycoll.tensor import Tensor


class Spectrogram(Layer):
    """The magnitude of the short-time Fourier transform raised to `power`."""

    def __init__(self, n_fft: int = 512, hop_length: Optional[int] = 512, win_length: Optional[int] = None,
                 window: WindowSpec = "hann", power: float = 1.0, center: bool = True, pad_mode: str = "reflect",
                 dtype: DTypeLike = "float32") -> None:
        super().__init__()
        if not power > 0:
            raise ValueError(f"Spectrogram: power must be > 0, got {power}")
        self.power = power
        self.n_fft, self.hop_length, self.center, self.pad_mode = n_fft, hop_length, center, pad_mode
        self.win_length = n_fft if win_length is None else win_length
        self.register_buffer("fft_window", get_window(window, self.win_length, fftbins=True, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        spectrum = stft(x, n_fft=self.n_fft, hop_length=self.hop_length, win_length=self.win_length,
                        window=self.fft_window, center=self.center, pad_mode=self.pad_mode)
        return power_of(magnitude(spectrum), self.power)


class MelSpectrogram(Layer):
    """The spectrogram's power in n_mels mel bands (``fbank_matrix @ spectrogram``)."""

    def __init__(self, sr: int = 22050, n_fft: int = 2048, hop_length: Optional[int] = 512,
                 win_length: Optional[int] = None, window: WindowSpec = "hann", power: float = 2.0,
                 center: bool = True, pad_mode: str = "reflect", n_mels: int = 64, f_min: float = 50.0,
                 f_max: Optional[float] = None, htk: bool = False, norm: Union[str, float] = "slaney",
                 dtype: DTypeLike = "float32") -> None:
        super().__init__()
        self._spectrogram = Spectrogram(n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
                                        power=power, center=center, pad_mode=pad_mode, dtype=dtype)
        self.n_mels, self.f_min, self.f_max, self.htk, self.norm = n_mels, f_min, f_max, htk, norm
        fbank = compute_fbank_matrix(sr=sr, n_fft=n_fft, n_mels=n_mels, f_min=f_min,
                                     f_max=sr // 2 if f_max is None else f_max, htk=htk, norm=norm, dtype=dtype)
        self.register_buffer("fbank_matrix", fbank)

    def forward(self, x: Tensor) -> Tensor:
        return matmul(self.fbank_matrix, self._spectrogram(x))


class LogMelSpectrogram(Layer):
    """The mel spectrogram in decibels (`power_to_db` with ref_value, amin, top_db)."""

    def __init__(self, sr: int = 22050, n_fft: int = 512, hop_length: Optional[int] = None,
                 win_length: Optional[int] = None, window: WindowSpec = "hann", power: float = 2.0,
                 center: bool = True, pad_mode: str = "reflect", n_mels: int = 64, f_min: float = 50.0,
                 f_max: Optional[float] = None, htk: bool = False, norm: Union[str, float] = "slaney",
                 ref_value: float = 1.0, amin: float = 1e-10, top_db: Optional[float] = None,
                 dtype: DTypeLike = "float32") -> None:
        super().__init__()
        self._melspectrogram = MelSpectrogram(sr=sr, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                                              window=window, power=power, center=center, pad_mode=pad_mode,
                                              n_mels=n_mels, f_min=f_min, f_max=f_max, htk=htk, norm=norm,
                                              dtype=dtype)
        self.ref_value, self.amin, self.top_db = ref_value, amin, top_db

    def forward(self, x: Tensor) -> Tensor:
        return power_to_db(self._melspectrogram(x), ref_value=self.ref_value, amin=self.amin, top_db=self.top_db)


class MFCC(Layer):
    """n_mfcc mel-frequency cepstral coefficients: the DCT of the log-mel spectrogram's bands."""

    def __init__(self, sr: int = 22050, n_mfcc: int = 40, n_fft: int = 512, hop_length: Optional[int] = None,
                 win_length: Optional[int] = None, window: WindowSpec = "hann", power: float = 2.0,
                 center: bool = True, pad_mode: str = "reflect", n_mels: int = 64, f_min: float = 50.0,
                 f_max: Optional[float] = None, htk: bool = False, norm: Union[str, float] = "slaney",
                 ref_value: float = 1.0, amin: float = 1e-10, top_db: Optional[float] = None,
                 dtype: DTypeLike = "float32") -> None:
        super().__init__()
        if n_mfcc > n_mels:
            raise ValueError(f"MFCC: n_mfcc cannot be larger than n_mels: {n_mfcc} vs {n_mels}")
        self._log_melspectrogram = LogMelSpectrogram(sr=sr, n_fft=n_fft, hop_length=hop_length,
                                                     win_length=win_length, window=window, power=power,
                                                     center=center, pad_mode=pad_mode, n_mels=n_mels, f_min=f_min,
                                                     f_max=f_max, htk=htk, norm=norm, ref_value=ref_value,
                                                     amin=amin, top_db=top_db, dtype=dtype)
        self.register_buffer("dct_matrix", create_dct(n_mfcc=n_mfcc, n_mels=n_mels, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        log_mel = self._log_melspectrogram(x)  # [N, n_mels, frames]
        return matmul(log_mel.transpose((0, 2, 1)), self.dct_matrix).transpose((0, 2, 1))
