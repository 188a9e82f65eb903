"""paddle's ``paddle.audio.backends``: the backend switch and the wave backend (PCM16 WAV)."""
from pycoll.audio.backends.init_backend import get_current_backend, list_available_backends, set_backend

__all__ = ["get_current_backend", "list_available_backends", "set_backend"]
