"""paddle 3.3's torch-style positional forms, as decorators: sizes given one by one
(``zeros(2, 3)``, ``x.reshape(2, 3)``, ``x.permute(1, 0)``, ``x.repeat(2, 2)``) and the two axes
``transpose`` swaps (``x.transpose(0, 1)``).

paddle reads them in its Python wrappers (``paddle/utils/decorator_utils.py``). Here, as in
paddle's reshape, view and expand, a call is the int form when every positional argument after the
tensor (for the creation functions: every one) is an int or a 0-d integer Tensor; any other call
goes through unchanged, so the list forms (``zeros([2, 3])``, ``transpose(x, [1, 0])``), keywords
and pycoll's ``zeros(4, 'int64')`` (paddle refuses that one) keep their meaning, and a mixed call
(``x.reshape(2, 3.0)``) meets the function's own checks, which name the argument.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import numpy as np

from pycoll._tensor_ops import as_tensor, normalize_axes
from pycoll.tensor import Tensor

F = TypeVar("F", bound=Callable[..., Any])


def is_int_arg(v: Any) -> bool:
    """An int (Python's or NumPy's, not a bool) or a 0-d integer Tensor."""
    if isinstance(v, Tensor):
        return v._array.ndim == 0 and v._array.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def ints_as_list(param: str, after: int = 1) -> Callable[[F], F]:
    """Decorator: when the positional arguments after the first `after` are all ints, they are
    the list `param`, given one by one (``f(x, 2, 3)`` is ``f(x, param=[2, 3])``)."""
    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = args[after:]
            if values and all(is_int_arg(v) for v in values):
                if param in kwargs:
                    raise TypeError(f"{func.__name__}: got {param} both as ints one by one and as {param}=")
                return func(*args[:after], **{param: [int(v) for v in values]}, **kwargs)
            return func(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate


def swap_two_axes(func: F) -> F:
    """Decorator of ``transpose(x, perm)``: also ``transpose(x, dim0, dim1)`` (or the keywords
    ``dim0=`` / ``dim1=``, ``axis0=`` / ``axis1=``), the permutation that swaps those two axes."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        dims = [kwargs.pop(a, kwargs.pop(b, None)) for a, b in (("dim0", "axis0"), ("dim1", "axis1"))]
        for i in (0, 1):
            if dims[i] is None and len(args) > i + 1 and is_int_arg(args[i + 1]):
                dims[i] = args[i + 1]
        if dims == [None, None]:
            return func(*args, **kwargs)
        if None in dims or len(args) > 3:
            raise TypeError(f"{func.__name__}: swapping two axes takes two ints, dim0 and dim1, got "
                            f"{list(args[1:]) or dims}")
        x = as_tensor(args[0] if args else kwargs.pop("x"))
        ndim = x.ndim
        try:
            i, j = normalize_axes([int(d) for d in dims], ndim)
        except ValueError:
            raise ValueError(f"{func.__name__}: dim0 and dim1 must be axes in [-{ndim}, {ndim}), got "
                             f"{dims[0]} and {dims[1]}") from None
        perm = list(range(ndim))
        perm[i], perm[j] = perm[j], perm[i]
        return func(x, perm, **kwargs)
    return wrapper  # type: ignore[return-value]
