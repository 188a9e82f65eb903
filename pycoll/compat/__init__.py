"""paddle.compat: torch-style signatures (``input``/``dim``/``out``) over pycoll's own functions, as
paddle 3.3.1 has them: ``equal`` (a Python bool), ``sort`` / ``median`` / ``nanmedian`` / ``min`` /
``max`` returning (values, indices) named tuples, ``split`` by chunk size, ``unique``, ``slogdet``,
``seed`` and ``compat.nn`` (torch-style Linear, Unfold, AvgPool*D, MultiheadAttention, Softmax and
``functional``: pad, unfold, scaled_dot_product_attention, linear, and softmax, which is
``pycoll.softmax`` as paddle's is).

Not here (pycoll has no counterpart): paddle's torch proxy (``enable_torch_proxy`` and its
companions, which make ``import torch`` load paddle) and ``paddle_triton``."""
from __future__ import annotations

import os
from typing import Any, NamedTuple, Optional, Sequence, Tuple, Union

from pycoll.compat import nn
from pycoll.creation import assign, zeros
from pycoll.elementwise_ops import maximum as _maximum, minimum as _minimum
from pycoll.index_ops import argmin, take_along_axis
from pycoll.logic_ops import equal_all
from pycoll.math_ops import argmax
from pycoll.math_ops import max as _max, min as _min
from pycoll.matrix_ops import slogdet as _slogdet
from pycoll.order_ops import median as _median, nanmedian as _nanmedian
from pycoll.random import seed as _seed
from pycoll.search_ops import argsort
from pycoll.shape_ops import split as _split, squeeze
from pycoll.stats_ops import unique as _unique
from pycoll.tensor import Tensor

__all__ = ["equal", "slogdet", "sort", "split", "min", "max", "unique", "median", "nanmedian", "seed", "nn"]


class SortRetType(NamedTuple):
    values: Tensor
    indices: Tensor


class MedianRetType(NamedTuple):
    values: Tensor
    indices: Tensor


class MinMaxRetType(NamedTuple):
    values: Tensor
    indices: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


def _tensor(x: Any, fn: str, name: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"paddle.compat.{fn}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def _write_out(result: Any, out: Any, pair: bool, fn: str) -> Any:
    """``result`` written into ``out`` (one Tensor, or a pair for a (values, indices) result)."""
    if out is None:
        return result
    if pair:
        if not isinstance(out, (tuple, list)) or len(out) != 2 or not all(isinstance(t, Tensor) for t in out):
            raise TypeError(f"paddle.compat.{fn}: out must be a tuple or list of two Tensors, got {out!r}")
        assign(result[0], out[0])
        assign(result[1], out[1])
        return type(result)(out[0], out[1])
    if not isinstance(out, Tensor):
        raise TypeError(f"paddle.compat.{fn}: out must be a Tensor, got {type(out).__name__}")
    assign(result, out)
    return out


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002 - paddle's name
    """True when both have the same shape and elements (compared in their common dtype)."""
    return bool(equal_all(_tensor(input, "equal"), _tensor(other, "equal", "other")).item())


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False,  # noqa: A002
         out: Any = None) -> SortRetType:
    """(values, indices) of ``input`` sorted along ``dim``; values carry the gradient."""
    if _tensor(input, "sort").ndim == 0:
        return _write_out(SortRetType(*_of_one_element("sort", input, dim)), out, True, "sort")
    indices = argsort(input, dim, descending, stable)
    return _write_out(SortRetType(take_along_axis(input, indices, dim), indices), out, True, "sort")


def split(tensor: Tensor, split_size_or_sections: Union[int, Sequence[int]], dim: int = 0) -> Tuple[Tensor, ...]:
    """torch's split: an int is each chunk's size (the last one smaller when it does not divide),
    a list the sizes themselves (non-negative)."""
    tensor = _tensor(tensor, "split", "tensor")
    if isinstance(dim, bool) or not isinstance(dim, int) or not -tensor.ndim <= dim < tensor.ndim:
        raise ValueError(f"paddle.compat.split: dim must be an int in [-{tensor.ndim}, {tensor.ndim}), got {dim!r}")
    size = tensor.shape[dim]
    if isinstance(split_size_or_sections, int) and not isinstance(split_size_or_sections, bool):
        if split_size_or_sections <= 0:
            raise ValueError(f"paddle.compat.split: split_size_or_sections must be > 0, got {split_size_or_sections}")
        sections = [split_size_or_sections] * (size // split_size_or_sections)
        sections += [size % split_size_or_sections] if size % split_size_or_sections else []
    elif isinstance(split_size_or_sections, (list, tuple)):
        sections = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sections):
            raise ValueError(f"paddle.compat.split: split_size_or_sections must hold only non-negative sizes, got "
                             f"{list(split_size_or_sections)}")
    else:
        raise TypeError(f"paddle.compat.split: split_size_or_sections must be an int, list or tuple, got "
                        f"{type(split_size_or_sections).__name__}")
    return tuple(_split(tensor, sections, dim))


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002 - paddle's names
           return_counts: bool = False, dim: Optional[int] = None) -> Any:
    """The unique elements (of the flattened input, or slices along ``dim``), ascending, with the
    inverse indices and counts when asked for."""
    return _unique(_tensor(input, "unique"), return_inverse=return_inverse, return_counts=return_counts, axis=dim,
                   sorted=sorted)


def _median_of(fn: str, reduce: Any, input: Tensor, dim: Optional[int], keepdim: bool,  # noqa: A002
               out: Any) -> Any:
    _tensor(input, fn)
    if dim is None:
        return _write_out(reduce(input, None, keepdim, "min"), out, False, fn)
    values, indices = reduce(input, dim, keepdim, "min")
    if fn == "nanmedian":  # torch gives index 0 for a row of NaNs where paddle's kernel gives -1
        indices = _maximum(indices, indices * 0)
    return _write_out(MedianRetType(values, indices), out, True, fn)


def median(input: Tensor, dim: Optional[int] = None, keepdim: bool = False, *,  # noqa: A002
           out: Any = None) -> Any:
    """The lower median of all elements, or (values, indices) along ``dim``."""
    return _median_of("median", _median, input, dim, keepdim, out)


def nanmedian(input: Tensor, dim: Optional[int] = None, keepdim: bool = False, *,  # noqa: A002
              out: Any = None) -> Any:
    """median ignoring NaNs."""
    return _median_of("nanmedian", _nanmedian, input, dim, keepdim, out)


def _min_max(fn: str, input: Tensor, args: tuple, out: Any, kwargs: dict) -> Any:  # noqa: A002
    """torch's three forms: ``fn(input)`` reduces all, ``fn(input, other)`` is elementwise and
    ``fn(input, dim, keepdim=False)`` gives (values, indices), the gradient going to the index."""
    _tensor(input, fn)
    usage = (f"paddle.compat.{fn} takes (input), (input, other: Tensor) or (input, dim: int, keepdim: bool = False); "
             f"got {len(args)} more positional arguments and keywords {sorted(kwargs)}")
    unknown = set(kwargs) - {"dim", "keepdim", "other"}
    if unknown or len(args) + len(kwargs) > 2 or ("other" in kwargs and len(args) + len(kwargs) > 1):
        raise TypeError(usage)
    if not args and not kwargs:
        return _write_out((_min if fn == "min" else _max)(input), out, False, fn)
    second = args[0] if args else kwargs.get("dim", kwargs.get("other"))
    if isinstance(second, Tensor):
        if len(args) + len(kwargs) != 1 or "dim" in kwargs:
            raise TypeError(usage)
        return _write_out((_minimum if fn == "min" else _maximum)(input, second), out, False, fn)
    if isinstance(second, bool) or not isinstance(second, int) or "other" in kwargs:
        raise TypeError(f"{usage}: the second argument must be an int or a Tensor, got {type(second).__name__}")
    keepdim = args[1] if len(args) == 2 else kwargs.get("keepdim", False)
    if "keepdim" in kwargs and len(args) == 2 or not args and "dim" not in kwargs:
        raise TypeError(usage)
    if input.ndim == 0:
        return _write_out(MinMaxRetType(*_of_one_element(fn, input, second)), out, True, fn)
    indices = (argmin if fn == "min" else argmax)(input, second, keepdim=True)
    values = take_along_axis(input, indices, second)
    if not keepdim:
        values, indices = squeeze(values, second), squeeze(indices, second)
    return _write_out(MinMaxRetType(values, indices), out, True, fn)


def _of_one_element(fn: str, input: Tensor, dim: Any) -> Tuple[Tensor, Tensor]:  # noqa: A002
    """(values, indices) along ``dim`` (0 or -1) of a 0-d ``input``: itself and index 0 (paddle's)."""
    if dim not in (0, -1) or isinstance(dim, bool):
        raise ValueError(f"paddle.compat.{fn}: dim must be 0 or -1 for a 0-d input, got {dim!r}")
    return assign(input), zeros([], dtype="int64")


def min(input: Tensor, *args: Any, out: Any = None, **kwargs: Any) -> Any:  # noqa: A001,A002 - paddle's names
    """See ``_min_max``."""
    return _min_max("min", input, args, out, kwargs)


def max(input: Tensor, *args: Any, out: Any = None, **kwargs: Any) -> Any:  # noqa: A001,A002 - paddle's names
    """See ``_min_max``."""
    return _min_max("max", input, args, out, kwargs)


def slogdet(x: Tensor, out: Any = None) -> SlogdetResult:
    """(sign, log|det|) of square matrices, as a named tuple."""
    both = _slogdet(_tensor(x, "slogdet", "x"))
    return _write_out(SlogdetResult(both[0], both[1]), out, True, "slogdet")


def seed() -> int:
    """Seeds pycoll's generator with a fresh non-deterministic number and returns it."""
    value = int.from_bytes(os.urandom(8), "little") >> 1
    _seed(value)
    return value
