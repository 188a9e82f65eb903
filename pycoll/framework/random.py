"""paddle's ``paddle.framework.random``: the generator's seed and state (``pycoll.seed``, ...) and
``Generator``, paddle's handle on a device's default generator."""
from __future__ import annotations

from typing import Any

from pycoll import get_cuda_rng_state, get_rng_state, seed, set_cuda_rng_state, set_rng_state
from pycoll import random as _random
from pycoll.random import check_device

__all__ = ["Generator", "get_cuda_rng_state", "get_rng_state", "seed", "set_cuda_rng_state", "set_rng_state"]


class Generator(_random.Generator):
    """``pycoll.Generator(device=None)``: the generator of ``device`` ('cpu', 'gpu', 'gpu:N', an
    index; None for the current device), as paddle's. pycoll draws every random value from one
    host generator (``pycoll.random``), so each device's Generator controls that one:
    ``manual_seed``, ``seed``, ``initial_seed``, ``get_state`` / ``set_state`` and ``random``."""

    def __init__(self, device: Any = None):
        check_device(device, "Generator")
