"""paddle's audio backend switch. paddle's other backends come from the ``paddleaudio`` package, which
is built on paddle; pycoll has the wave backend alone."""
from __future__ import annotations

from typing import List

__all__ = ["get_current_backend", "list_available_backends", "set_backend"]

WAVE_BACKEND = "wave_backend"


def list_available_backends() -> List[str]:
    """The backends ``set_backend`` takes: ``['wave_backend']``."""
    return [WAVE_BACKEND]


def get_current_backend() -> str:
    """The backend ``pycoll.audio.load`` / ``save`` / ``info`` use: 'wave_backend'."""
    return WAVE_BACKEND


def set_backend(backend_name: str) -> None:
    """Choose the audio backend: only 'wave_backend' here (NotImplementedError for others, as paddle's
    for a backend it does not have)."""
    if backend_name not in list_available_backends():
        raise NotImplementedError(f"set_backend: backend {backend_name!r} is not available; pycoll has "
                                  f"{list_available_backends()} (paddle's others need paddleaudio, built on paddle)")
