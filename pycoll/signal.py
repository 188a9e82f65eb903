"""paddle.signal: ``stft`` and ``istft`` (also ``Tensor.stft`` / ``Tensor.istft``), and the framing
ops they stand on, ``frame`` and ``overlap_add``.

Everything here is a composition of pycoll's differentiable ops (``unfold``, pad, reshape,
``pycoll.fft``), which give it its gradients, on NumPy and CuPy arrays alike. Bad arguments raise
ValueError/TypeError where paddle asserts.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.fft import fft, ifft, irfft, rfft
from pycoll.math_ops import divide, multiply
from pycoll.nn._pad_functional import pad
from pycoll.reshape_ops import moveaxis
from pycoll.shape_ops import concat, reshape, squeeze, transpose, unsqueeze
from pycoll.tensor import Tensor, wrap
from pycoll.window_split_ops import unfold

__all__ = ["stft", "istft", "frame", "overlap_add"]  # (paddle lists the first two)


def _positive_int(value: Any, fn: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}: {name} must be an int, got {value!r}")
    if value <= 0:
        raise ValueError(f"{fn}: {name} must be positive, got {value}")
    return int(value)


def _signal_axis(axis: Any, fn: str) -> int:
    if axis not in (0, -1) or isinstance(axis, bool):
        raise ValueError(f"{fn}: axis must be 0 or -1, got {axis!r}")
    return int(axis)


def frame(x: Tensor, frame_length: int, hop_length: int, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """The overlapping frames of x along its last (axis=-1) or first (axis=0) axis:
    shape ``[..., frame_length, num_frames]`` or ``[num_frames, frame_length, ...]``, where
    ``num_frames = 1 + (seq_length - frame_length) // hop_length``."""
    x = as_tensor(x)
    axis = _signal_axis(axis, "frame")
    frame_length = _positive_int(frame_length, "frame", "frame_length")
    hop_length = _positive_int(hop_length, "frame", "hop_length")
    if x.ndim < 1:
        raise ValueError(f"frame: x must have at least 1 dimension, got shape {list(x.shape)}")
    if frame_length > x.shape[axis]:
        raise ValueError(f"frame: frame_length must be at most the sequence length {x.shape[axis]}, "
                         f"got {frame_length}")
    windows = unfold(x, axis, frame_length, hop_length)  # the window count at axis, each window last
    return moveaxis(windows, -1, -2) if axis == -1 else moveaxis(windows, -1, 1)


def _zeros(like: Tensor, shape: list) -> Tensor:
    return wrap(array_module(like._array).zeros(shape, dtype=like._array.dtype))


def overlap_add(x: Tensor, hop_length: int, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """The inverse of ``frame``'s layout: frames ``[..., frame_length, num_frames]`` (axis=-1) or
    ``[num_frames, frame_length, ...]`` (axis=0), frame t added in at offset t * hop_length, giving
    ``seq_length = (num_frames - 1) * hop_length + frame_length`` samples."""
    x = as_tensor(x)
    axis = _signal_axis(axis, "overlap_add")
    hop_length = _positive_int(hop_length, "overlap_add", "hop_length")
    if x.ndim < 2:
        raise ValueError(f"overlap_add: x must have at least 2 dimensions, got shape {list(x.shape)}")
    if axis == 0:  # as [..., frame_length, num_frames], and back at the end
        x = moveaxis(moveaxis(x, 0, -1), 0, -2)
    frame_length, n_frames = x.shape[-2], x.shape[-1]
    lead = list(x.shape[:-2])
    chunks = -(-frame_length // hop_length)
    spare = chunks * hop_length - frame_length
    if spare:  # zero rows, so that every frame is `chunks` blocks of hop_length samples
        x = concat([x, _zeros(x, lead + [spare, n_frames])], axis=-2)
    seq = (n_frames - 1) * hop_length + frame_length
    total = (n_frames + chunks - 1) * hop_length
    blocks = reshape(x, lead + [chunks, hop_length, n_frames])
    out = None
    for k in range(chunks):  # block k of every frame tiles [k*hop, (k + n_frames)*hop) without overlap
        run = reshape(moveaxis(blocks[..., k, :, :], -1, -2), lead + [n_frames * hop_length])
        before, after = k * hop_length, total - (k + n_frames) * hop_length
        placed = concat([_zeros(run, lead + [before]), run, _zeros(run, lead + [after])], axis=-1)
        out = placed if out is None else out + placed
    out = out[..., :seq]
    return moveaxis(out, -1, 0) if axis == 0 else out


def _window(window: Any, win_length: int, n_fft: int, dtype: Any, like: Any, fn: str) -> Tensor:
    """The window as n_fft samples: win_length ones by default, centred between zeros."""
    if window is None:
        window = wrap(array_module(like).ones(win_length, dtype=dtype))
    else:
        window = as_tensor(window)
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ValueError(f"{fn}: window must be a 1-D tensor of win_length ({win_length}) samples, got shape "
                             f"{list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = pad(window, [left, n_fft - win_length - left], mode="constant")
    return window


def _lengths(n_fft: Any, hop_length: Any, win_length: Any, fn: str) -> tuple:
    n_fft = _positive_int(n_fft, fn, "n_fft")
    hop_length = n_fft // 4 if hop_length is None else _positive_int(hop_length, fn, "hop_length")
    if hop_length <= 0:
        raise ValueError(f"{fn}: hop_length defaults to n_fft // 4, which is 0 for n_fft {n_fft}; give hop_length")
    win_length = n_fft if win_length is None else _positive_int(win_length, fn, "win_length")
    if win_length > n_fft:
        raise ValueError(f"{fn}: win_length must be in (0, n_fft ({n_fft})], got {win_length}")
    return n_fft, hop_length, win_length


def stft(x: Tensor, n_fft: int, hop_length: Optional[int] = None, win_length: Optional[int] = None,
         window: Optional[Tensor] = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: Optional[bool] = None, name: Optional[str] = None) -> Tensor:
    """Short-time Fourier transform of x, ``[seq_length]`` or ``[batch, seq_length]``, real or
    complex: ``X[..., f, t] = sum_n window[n] x[t * hop_length + n] exp(-2 pi i f n / n_fft)``,
    shape ``[..., n_fft // 2 + 1 (onesided) or n_fft, num_frames]``.

    hop_length defaults to n_fft // 4, win_length to n_fft, the window to ones (a shorter window
    is centred in n_fft samples). ``center`` pads n_fft // 2 samples on both sides first
    (``pad_mode`` 'reflect' or 'constant'); ``normalized`` scales by 1/sqrt(n_fft); ``onesided``
    (default: whether the frames are real) keeps the non-negative frequencies only and needs real
    frames.
    """
    x = as_tensor(x)
    if x.ndim not in (1, 2):
        raise ValueError(f"stft: x must be 1-D or 2-D ([batch, seq_length]), got shape {list(x.shape)}")
    n_fft, hop_length, win_length = _lengths(n_fft, hop_length, win_length, "stft")
    batch = x if x.ndim == 2 else unsqueeze(x, 0)
    if n_fft > batch.shape[-1]:
        raise ValueError(f"stft: n_fft must be in (0, seq_length ({batch.shape[-1]})], got {n_fft}")
    window = _window(window, win_length, n_fft, x._array.dtype, x._array, "stft")
    if center:
        if pad_mode not in ("reflect", "constant"):
            raise ValueError(f"stft: pad_mode must be 'reflect' or 'constant', got {pad_mode!r}")
        half = n_fft // 2
        batch = squeeze(pad(unsqueeze(batch, -1), [half, half], mode=pad_mode, data_format="NLC"), -1)
    frames = multiply(transpose(frame(batch, n_fft, hop_length), [0, 2, 1]), window)  # [batch, frames, n_fft]
    complex_frames = frames._array.dtype.kind == "c"
    if onesided is None:
        onesided = not complex_frames
    if onesided and complex_frames:
        raise ValueError("stft: onesided must be False for a complex x or window")
    norm = "ortho" if normalized else "backward"
    spectrum = rfft(frames, norm=norm) if onesided else fft(frames, norm=norm)
    out = transpose(spectrum, [0, 2, 1])
    return squeeze(out, 0) if x.ndim == 1 else out


def istft(x: Tensor, n_fft: int, hop_length: Optional[int] = None, win_length: Optional[int] = None,
          window: Optional[Tensor] = None, center: bool = True, normalized: bool = False, onesided: bool = True,
          length: Optional[int] = None, return_complex: bool = False, name: Optional[str] = None) -> Tensor:
    """Inverse short-time Fourier transform: the least-squares signal (Griffin-Lim) of a complex
    spectrum ``[..., n_fft // 2 + 1 (onesided) or n_fft, num_frames]``, i.e. the inverse FFT of
    each frame times the window, overlap-added and divided by the overlap-added squared window
    (which must not vanish anywhere: the NOLA condition). ``center`` drops the n_fft // 2 samples
    stft padded on each side; ``length`` cuts the result to that many samples; ``return_complex``
    (with onesided False) gives a complex signal."""
    x = as_tensor(x)
    if x._array.dtype.kind != "c":
        raise TypeError(f"istft: x must be a complex tensor (complex64 or complex128), got {x.dtype}")
    if x.ndim not in (2, 3):
        raise ValueError(f"istft: x must be 2-D or 3-D ([batch, fft_size, num_frames]), got shape {list(x.shape)}")
    n_fft, hop_length, win_length = _lengths(n_fft, hop_length, win_length, "istft")
    if hop_length > win_length:
        raise ValueError(f"istft: hop_length must be in (0, win_length ({win_length})], got {hop_length}")
    batch = x if x.ndim == 3 else unsqueeze(x, 0)
    fft_size, n_frames = batch.shape[-2], batch.shape[-1]
    if batch._array.size == 0:
        raise ValueError(f"istft: x must not be empty, got shape {list(x.shape)}")
    want = n_fft // 2 + 1 if onesided else n_fft
    if fft_size != want:
        raise ValueError(f"istft: x's fft_size (dimension -2) must be {want} (n_fft {n_fft}, onesided={onesided}), "
                         f"got {fft_size}")
    real_dtype = np.float32 if x._array.dtype == np.complex64 else np.float64
    window = _window(window, win_length, n_fft, real_dtype, x._array, "istft")
    frames = transpose(batch, [0, 2, 1])  # [batch, frames, fft_size]
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise ValueError("istft: onesided must be False when return_complex is True")
        signal = ifft(frames, norm=norm)
    else:
        if window._array.dtype.kind == "c":
            raise TypeError("istft: window must be real when return_complex is False")
        signal = irfft(frames[:, :, :n_fft // 2 + 1], n=n_fft, norm=norm)
    out = overlap_add(transpose(multiply(signal, window), [0, 2, 1]), hop_length)  # [batch, seq_length]
    square = unsqueeze(multiply(window, window), 1)
    envelope = overlap_add(concat([square] * n_frames, axis=1), hop_length)  # [seq_length]
    start = n_fft // 2 if center else 0
    if length is None:
        stop = envelope.shape[0] - start
    else:
        stop = start + _positive_int(length, "istft", "length")
    out, envelope = out[:, start:stop], envelope[start:stop]
    xp = array_module(envelope._array)
    if envelope._array.size and float(xp.abs(envelope._array).min()) < 1e-11:
        raise ValueError("istft: the Nonzero Overlap Add (NOLA) condition fails: the overlap-added squared window "
                         "vanishes somewhere (see scipy.signal.check_NOLA)")
    out = divide(out, envelope)
    return squeeze(out, 0) if x.ndim == 2 else out


Tensor.stft, Tensor.istft = stft, istft
