"""``paddle.audio.functional``: windows, mel scale, filter banks, decibels and the DCT."""
from pycoll.audio.functional import window
from pycoll.audio.functional.functional import (compute_fbank_matrix, create_dct, fft_frequencies, hz_to_mel,
                                                mel_frequencies, mel_to_hz, power_to_db)
from pycoll.audio.functional.window import get_window

__all__ = ["compute_fbank_matrix", "create_dct", "fft_frequencies", "get_window", "hz_to_mel", "mel_frequencies",
           "mel_to_hz", "power_to_db", "window"]
