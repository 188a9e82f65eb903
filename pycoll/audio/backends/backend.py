"""``AudioInfo``: what ``pycoll.audio.info`` tells about an audio file (paddle's class)."""
from __future__ import annotations


class AudioInfo:
    """Sample rate, frames (``num_samples``, per channel), channels, bits per sample and encoding."""

    def __init__(self, sample_rate: int, num_samples: int, num_channels: int, bits_per_sample: int,
                 encoding: str) -> None:
        self.sample_rate = sample_rate
        self.num_samples = num_samples
        self.num_channels = num_channels
        self.bits_per_sample = bits_per_sample
        self.encoding = encoding

    def __repr__(self) -> str:
        return (f"AudioInfo(sample_rate={self.sample_rate}, num_samples={self.num_samples}, "
                f"num_channels={self.num_channels}, bits_per_sample={self.bits_per_sample}, "
                f"encoding={self.encoding!r})")
