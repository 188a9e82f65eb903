"""``paddle.audio``: feature extraction (`functional`: windows, mel scale, filter banks; `features`:
Spectrogram, MelSpectrogram, LogMelSpectrogram, MFCC layers over pycoll.signal.stft) and PCM16 WAV
file I/O (`load`, `save`, `info`, `backends`: paddle's wave backend). paddle's audio datasets are
not here."""
from pycoll.audio import backends, features, functional
from pycoll.audio.backends.wave_backend import info, load, save

__all__ = ["backends", "features", "functional", "info", "load", "save"]
