"""paddle's ops along an axis on a 0-d tensor: its one value taken as a vector of one, and each
result 0-d again (sort, topk, kthvalue, cumsum... of ``paddle.to_tensor(3.0)`` along axis 0 or -1
give 0-d results in paddle; NumPy has no axis 0 to take them along)."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from pycoll.shape_ops import reshape
from pycoll.tensor import Tensor

F = TypeVar("F", bound=Callable[..., Any])


def along_axis_of_scalar(axis: str, none_flattens: bool = False) -> Callable[[F], F]:
    """Decorate an op whose first parameter is the tensor and ``axis`` names its axis parameter.
    ``none_flattens``: with ``axis`` None the op works on the flattened tensor, whose shape [1] a
    0-d tensor keeps (paddle's cumsum)."""
    def wrap(fn: F) -> F:
        signature = inspect.signature(fn)
        first = next(iter(signature.parameters))

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            x = args[0] if args else kwargs.get(first)
            if not isinstance(x, Tensor) or x.ndim != 0:  # the common case, at the cost of one test
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            if none_flattens and bound.arguments.get(axis) is None:
                return fn(*args, **kwargs)
            bound.arguments[first] = reshape(x, [1])
            return _scalars(fn(*bound.args, **bound.kwargs))
        return call  # type: ignore[return-value]
    return wrap


def _scalars(out: Any) -> Any:
    if isinstance(out, Tensor):
        return reshape(out, [])
    items = [_scalars(item) for item in out]
    return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
