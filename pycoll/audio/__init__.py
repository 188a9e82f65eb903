"""``paddle.audio``'s feature extraction: `functional` (windows, mel scale, filter banks) and
`features` (Spectrogram, MelSpectrogram, LogMelSpectrogram, MFCC layers over pycoll.signal.stft).
Paddle's audio file I/O (load, save, info, backends, datasets) is not here."""
from pycoll.audio import features, functional

__all__ = ["features", "functional"]
