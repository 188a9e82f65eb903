"""pycoll's own random generator.

Random values are always drawn on the host from one NumPy `Generator` and then moved to the device,
so a CPU run and a GPU run seeded alike start from bit-identical values. There is therefore no
separate CUDA generator: where a GPU is visible ``get_cuda_rng_state`` gives the one generator's
state (so that saving and restoring it replays GPU draws, as paddle's does), and it is empty
where none is, as paddle's is.
"""
from __future__ import annotations

import contextlib
import copy
import secrets
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np

from pycoll.device import current_place, device_place, gpu_index

_generator: np.random.Generator = np.random.default_rng()


class Generator:
    """What ``seed`` returns (paddle's ``Generator``): the controls of pycoll's one generator."""

    def manual_seed(self, value: int) -> "Generator":
        """Reseed with ``value`` (a non-negative int); returns this Generator, as paddle's."""
        seed(value)
        return self

    def seed(self) -> int:
        """Reseed with a fresh seed from the operating system's entropy; returns that seed."""
        value = secrets.randbits(63)
        seed(value)
        return value

    def random(self) -> int:
        """The generator's next raw 64-bit draw, as an int in [0, 2**64)."""
        return int(_generator.integers(0, 2 ** 64, dtype=np.uint64))

    def initial_seed(self) -> int:
        return _initial_seed

    def get_state(self) -> Dict[str, Any]:
        return get_rng_state()[0]

    def set_state(self, state: Dict[str, Any]) -> None:
        set_rng_state([state])


_initial_seed = 0  # what the last seed() set (paddle's initial_seed)


def seed(seed: int) -> Generator:
    """Reseed pycoll's generator (initialisers, randn/rand, dropout) with ``seed`` (paddle's
    argument name); returns paddle's handle on it."""
    global _generator, _initial_seed
    check_seed(seed)
    _generator = np.random.default_rng(int(seed))
    _initial_seed = int(seed)
    return Generator()


def check_seed(value: Any) -> None:
    """ValueError unless ``value`` can seed a generator (an int in [0, 2**64), paddle's range)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2 ** 64:
        raise ValueError(f"seed must be an int in [0, 2**64), got {value!r}")


def get_rng() -> np.random.Generator:
    """The generator every random draw in pycoll uses."""
    return _generator


@contextlib.contextmanager
def drawing_from(generator: np.random.Generator) -> Iterator[None]:
    """Every draw inside the block comes from ``generator`` (the model-parallel RNG tracker's
    named states); the generator in use before comes back after."""
    global _generator
    previous, _generator = _generator, generator
    try:
        yield
    finally:
        _generator = previous


def check_device(device: Any, api: str) -> None:
    """ValueError unless ``device`` names the CPU or a visible GPU (None: the current device; an
    index on the CPU place must be 0, as paddle's)."""
    if device is None:
        return
    if isinstance(device, int) and not isinstance(device, bool) and current_place()[0] == "cpu":
        if device != 0:
            raise ValueError(f"{api}: on the CPU device must be 0 (the CPU's only index), got {device}")
        return
    if device_place(device)[0] == "gpu":
        gpu_index(device, api)


def get_rng_state(device: Any = None) -> List[Dict[str, Any]]:
    """The generator's state, as a list of one state (paddle's ``get_rng_state`` shape: one entry
    per generator); ``set_rng_state`` takes it back. pycoll draws every device's random values
    from its one host generator, so ``device`` (checked: the CPU or a visible GPU) names it."""
    check_device(device, "get_rng_state")
    return [copy.deepcopy(_generator.bit_generator.state)]


def set_rng_state(state_list: List[Dict[str, Any]], device: Any = None) -> None:
    """Restore a state from ``get_rng_state``: the draws that followed it are drawn again
    (``device`` as ``get_rng_state``'s)."""
    check_device(device, "set_rng_state")
    if not isinstance(state_list, (list, tuple)) or len(state_list) != 1 or not isinstance(state_list[0], dict):
        raise ValueError(f"state_list must be a list of one state from get_rng_state(), got {state_list!r}")
    _generator.bit_generator.state = copy.deepcopy(state_list[0])


def get_cuda_rng_state() -> List[Dict[str, Any]]:
    """The state that GPU tensors' random values come from where a GPU is visible: pycoll draws
    them on the host, so it is ``get_rng_state()`` (see the module docstring); empty without a
    GPU, as paddle's."""
    from pycoll.device import gpu_count

    return get_rng_state() if gpu_count() else []


def set_cuda_rng_state(state_list: List[Dict[str, Any]]) -> None:
    """Accepts what ``get_cuda_rng_state`` gave (nothing to restore); a non-empty list is a host
    state from ``get_rng_state``."""
    if not isinstance(state_list, (list, tuple)):
        raise ValueError(f"state_list must be a list, got {type(state_list).__name__}")
    if state_list:
        set_rng_state(state_list)


def normal_draw(shape: Tuple[int, ...], mean: float, std: float, complex_: bool) -> Callable[[Any], Any]:
    """``draw(generator)`` of N(mean, std ** 2) values of ``shape`` on the host; ``complex_`` (for a
    complex tensor): real and imaginary parts each N(mean, std ** 2 / 2), so the mean is
    mean * (1 + 1j) (paddle's normal_, gaussian_ and complex normal)."""
    if not complex_:
        return lambda rng: rng.standard_normal(shape) * std + mean

    def draw(rng: np.random.Generator) -> Any:
        parts = rng.standard_normal((2, *shape)) * (std / np.sqrt(2.0)) + mean
        return parts[0] + 1j * parts[1]
    return draw
