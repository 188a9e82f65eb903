"""paddle's ``nn.attention`` backend choice: ``SDPBackend`` and the ``sdpa_kernel`` context manager
(also in ``nn.functional.flash_attention``), torch's API. pycoll has one implementation of
scaled_dot_product_attention (the math one, on every device), which serves whatever backends a
block allows: a script that asks for flash attention, as scripts for a GPU do, runs unchanged.
The backends are checked as paddle checks them."""
from __future__ import annotations

import contextlib
import enum
from typing import Any, Iterator, List, Sequence, Union

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """paddle's (torch's) backends of scaled_dot_product_attention."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2


def _backends(backends: Any) -> List[SDPBackend]:
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple)):
        raise TypeError(f"sdpa_kernel: backends must be an SDPBackend or a list of them, got "
                        f"{type(backends).__name__}")
    for backend in backends:
        if not isinstance(backend, SDPBackend):
            raise TypeError(f"sdpa_kernel: every backend must be an SDPBackend, got {backend!r}")
    if not backends:
        raise ValueError("sdpa_kernel: at least one backend must be specified")
    return list(dict.fromkeys(backends))


@contextlib.contextmanager
def sdpa_kernel(backends: Union[SDPBackend, Sequence[SDPBackend]], set_priority: bool = False) -> Iterator[dict]:
    """Allow ``backends`` (in priority order with ``set_priority``) for the block; pycoll's one
    implementation serves any of them."""
    _backends(backends)
    yield {}
