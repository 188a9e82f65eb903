"""pycoll's own random generator.

Random values are always drawn on the host from one NumPy `Generator` and then moved to the device,
so a CPU run and a GPU run seeded alike start from bit-identical values.
"""
from __future__ import annotations

import numpy as np

_generator: np.random.Generator = np.random.default_rng()


def seed(value: int) -> np.random.Generator:
    """Reseed pycoll's generator (initialisers, randn/rand, dropout); returns the new generator."""
    global _generator
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"seed must be a non-negative int, got {value!r}")
    _generator = np.random.default_rng(int(value))
    return _generator


def get_rng() -> np.random.Generator:
    """The generator every random draw in pycoll uses."""
    return _generator
