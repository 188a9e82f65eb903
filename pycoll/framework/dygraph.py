"""paddle's ``paddle.base.dygraph`` (served as ``pycoll.base.dygraph``): the dynamic-graph
switches older scripts reach through it (``with paddle.base.dygraph.guard():``,
``paddle.base.dygraph.no_grad``). pycoll runs dynamic graphs only, so ``enabled()`` is True and
``guard`` only places its block on ``place``, as paddle's does."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from pycoll.autograd import no_grad
from pycoll.device import get_device, set_device
from pycoll.grad_ops import grad

__all__ = ["enabled", "grad", "guard", "no_grad"]


def enabled() -> bool:
    """Always True: pycoll runs dynamic graphs only."""
    return True


@contextlib.contextmanager
def guard(place: Any = None) -> Iterator[None]:
    """Run the block in dynamic mode (pycoll's only mode), on ``place`` when given ('cpu',
    'gpu:0', a Place), the current device coming back after it."""
    if place is None:
        yield
        return
    previous = get_device()
    set_device(place)
    try:
        yield
    finally:
        set_device(previous)
