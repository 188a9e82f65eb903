"""paddle's ``wave_backend``: PCM16 WAV files through Python's ``wave`` module.

``load`` gives float32 samples (divided by 2**15 when ``normalize``), ``save`` writes 16-bit
samples (a floating tensor multiplied by 2**15 and truncated toward zero, as paddle's). Two
differences from paddle 3.3.1: ``load`` applies ``frame_offset`` also when ``num_frames`` is -1
(paddle then ignores it), and ``save`` clips samples to the 16-bit range (paddle lets 1.0 wrap to
-32768) and refuses a tensor that is neither floating nor int16 (paddle writes its raw bytes).
"""
from __future__ import annotations

import contextlib
import wave
from typing import Any, BinaryIO, Iterator, Optional, Tuple, Union

import numpy as np

from pycoll.audio.backends.backend import AudioInfo
from pycoll.dtypes import is_floating
from pycoll.tensor import Tensor, to_tensor

__all__ = ["info", "load", "save"]

_PCM16 = ("only PCM16 WAV supported. \nif want support more other audio types, please manually installed "
          "(usually with `pip install paddleaudio`). \n and use paddle.audio.backends.set_backend('soundfile') "
          "to set audio backend")


@contextlib.contextmanager
def _open_wav(filepath: Union[str, BinaryIO]) -> Iterator[wave.Wave_read]:
    """The WAV reader of a path or binary file object; NotImplementedError (paddle's message) for
    anything ``wave`` cannot read, i.e. not PCM WAV."""
    own = not hasattr(filepath, "read")
    f = open(filepath, "rb") if own else filepath
    try:
        try:
            reader = wave.open(f)
        except (wave.Error, EOFError):
            raise NotImplementedError(_PCM16) from None
        with reader:
            if reader.getsampwidth() != 2:
                raise NotImplementedError(f"{_PCM16} (got {8 * reader.getsampwidth()}-bit samples)")
            yield reader
    finally:
        if own:
            f.close()


def info(filepath: Union[str, BinaryIO]) -> AudioInfo:
    """Sample rate, frames, channels, bits per sample and encoding ('PCM_S') of a PCM16 WAV file."""
    with _open_wav(filepath) as reader:
        return AudioInfo(reader.getframerate(), reader.getnframes(), reader.getnchannels(),
                         reader.getsampwidth() * 8, "PCM_S")


def load(filepath: Union[str, BinaryIO], frame_offset: int = 0, num_frames: int = -1, normalize: bool = True,
         channels_first: bool = True) -> Tuple[Tensor, int]:
    """(waveform, sample_rate): float32 [channels, frames] (``channels_first``) or [frames, channels],
    frames ``frame_offset`` to ``frame_offset + num_frames`` (-1: to the end)."""
    for name, value, least in (("frame_offset", frame_offset, 0), ("num_frames", num_frames, -1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"load: {name} must be an int >= {least}, got {value!r}")
    with _open_wav(filepath) as reader:
        channels, rate, frames = reader.getnchannels(), reader.getframerate(), reader.getnframes()
        samples = np.frombuffer(reader.readframes(frames), dtype="<i2").astype(np.float32)
    if normalize:
        samples = samples / 2 ** 15
    waveform = samples.reshape(-1, channels)
    end = None if num_frames == -1 else frame_offset + num_frames
    waveform = waveform[frame_offset:end]
    return to_tensor(np.ascontiguousarray(waveform.T if channels_first else waveform)), rate


def save(filepath: str, src: Tensor, sample_rate: int, channels_first: bool = True, encoding: Optional[str] = None,
         bits_per_sample: Optional[int] = 16) -> None:
    """Write ``src`` ([channels, frames] with ``channels_first``, else [frames, channels]) as a PCM16 WAV
    file: a floating tensor holds samples in [-1, 1], an int16 one the 16-bit values themselves."""
    if not isinstance(src, Tensor) or src.ndim != 2:
        raise ValueError(f"save: src must be a 2-D Tensor, got {getattr(src, 'shape', type(src).__name__)}")
    if bits_per_sample not in (None, 16):
        raise ValueError(f"save: bits_per_sample must be 16 (PCM16 only), got {bits_per_sample!r}")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int) or sample_rate <= 0:
        raise ValueError(f"save: sample_rate must be a positive int, got {sample_rate!r}")
    array: Any = src.numpy()
    if channels_first:
        array = array.T
    if is_floating(src.dtype):
        array = np.clip(array.astype(np.float64) * 2 ** 15, -2 ** 15, 2 ** 15 - 1)
    elif src.dtype != np.int16:
        raise TypeError(f"save: src must be a floating or int16 Tensor, got dtype {src.dtype}")
    with wave.open(filepath, "wb") as writer:
        writer.setnchannels(array.shape[1])
        writer.setsampwidth(2)
        writer.setframerate(sample_rate)
        writer.writeframes(np.ascontiguousarray(array.astype("<i2")).tobytes())
