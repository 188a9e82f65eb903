"""paddle's ``paddle.framework.is_parameter`` / ``is_persistable``."""
from __future__ import annotations

from typing import Any

from pycoll.nn.parameter import Parameter
from pycoll.tensor import Tensor

__all__ = ["is_parameter", "is_persistable"]


def is_parameter(var: Any) -> bool:
    """Whether ``var`` is a Parameter (paddle's answer for anything else, a Tensor included: False)."""
    return isinstance(var, Parameter)


def is_persistable(var: Tensor) -> bool:
    """``var.persistable``: True for Parameters, False for other tensors (a layer's buffers too, as
    paddle 3.3.1's) unless set. paddle's reads a static-graph variable's description, so its own
    fails on a dynamic-mode tensor."""
    if not isinstance(var, Tensor):
        raise TypeError(f"is_persistable: var must be a Tensor, got {type(var).__name__}")
    return bool(var.persistable)
