"""``paddle.audio.features``: spectrogram, mel, log-mel and MFCC layers."""
from pycoll.audio.features import layers
from pycoll.audio.features.layers import MFCC, LogMelSpectrogram, MelSpectrogram, Spectrogram

__all__ = ["LogMelSpectrogram", "MFCC", "MelSpectrogram", "Spectrogram", "layers"]
