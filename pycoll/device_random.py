"""paddle's ``device.get_rng_state`` / ``set_rng_state`` / ``manual_seed`` (also
``device.cuda``'s), over pycoll's one generator (``pycoll.random``).

pycoll draws every random value on the host and moves it to the device, so one generator serves
every device: the ``device`` argument is checked (it must name the CPU or a visible GPU) and the
state is that generator's, whichever device is named.
"""
from __future__ import annotations

from typing import Any, Dict

from pycoll import random
from pycoll.random import check_device

__all__ = ["get_rng_state", "set_rng_state", "manual_seed"]


def get_rng_state(device: Any = None) -> Dict[str, Any]:
    """The state of pycoll's generator (a copy), which ``set_rng_state`` takes back."""
    check_device(device, "get_rng_state")
    return random.Generator().get_state()


def set_rng_state(new_state: Dict[str, Any], device: Any = None) -> None:
    """Restore a state from ``get_rng_state``: the draws that followed it are drawn again."""
    if not isinstance(new_state, dict):
        raise TypeError(f"new_state must be a state from get_rng_state(), got {type(new_state).__name__}")
    check_device(device, "set_rng_state")
    random.Generator().set_state(new_state)


def manual_seed(seed: int) -> None:
    """Reseed pycoll's generator with ``int(seed)`` (paddle's: '3' and 3.0 are 3)."""
    random.seed(int(seed))
