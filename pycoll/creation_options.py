"""The keyword-only options paddle 3.3's creation functions take, torch-style: ``device`` (where
the tensor is made: 'cpu', 'gpu:0', a place), ``requires_grad`` (``stop_gradient=not
requires_grad``), ``pin_memory`` (page-locked host memory: accepted, pycoll's host arrays are
NumPy's) and, for the functions that make a tensor from sizes, ``out`` (the values are also written
into that tensor, which is returned, as paddle returns it)."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from pycoll._tensor_ops import delivered
from pycoll.device import parse_place

F = TypeVar("F", bound=Callable[..., Any])


def _flag(value: Any, name: str, fn: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{fn}: {name} must be a bool, got {type(value).__name__}")
    return value


def creation_options(with_out: bool = True) -> Callable[[F], F]:
    """Decorator: the function also takes ``device``, ``requires_grad``, ``pin_memory`` and (with
    `with_out`) ``out``, keyword-only, as paddle 3.3's creation functions do."""
    def decorate(func: F) -> F:
        fn = func.__name__

        @functools.wraps(func)
        def wrapper(*args: Any, device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
                    **kwargs: Any) -> Any:
            out = kwargs.pop("out", None) if with_out else None
            _flag(requires_grad, "requires_grad", fn)
            _flag(pin_memory, "pin_memory", fn)
            place = parse_place(device) if device is not None else None
            result = func(*args, **kwargs)
            if place is not None and result.place != place:
                result = result.to(place)
            result.stop_gradient = not requires_grad
            if out is None:
                return result
            delivered(result, out, fn)
            return out
        return wrapper  # type: ignore[return-value]
    return decorate
