"""Turning the collectives' tensor arguments into arrays an engine can move.

This is the one place that knows what a user may pass: an array of the engine's array module
(``numpy.ndarray`` for the cpu backend, ``cupy.ndarray`` for nccl; the engine's ``xp``) or a
``pycoll.Tensor`` (whose backing array is moved in place). Non-contiguous arrays are staged
through a contiguous copy and, for outputs, copied back once the collective completes.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np


def _tensor_type():
    from pycoll.tensor import Tensor

    return Tensor


def array_of(x: Any, xp: Any, fn: str, arg: str) -> Any:
    """The ``xp`` array behind ``x``; TypeError naming ``arg`` for anything else."""
    if type(x) is xp.ndarray:
        arr = x
    else:
        Tensor = _tensor_type()
        arr = x.array if isinstance(x, Tensor) else x
        if not isinstance(arr, xp.ndarray):
            if isinstance(arr, np.ndarray) or hasattr(arr, "__cuda_array_interface__"):
                where, needed = (("a GPU", "the host") if xp is np else ("a host", "the GPU"))
                raise TypeError(
                    f"pycoll.distributed.{fn}: {arg} is {where} array ({type(arr).__module__}."
                    f"{type(arr).__name__}) but this group's backend moves {xp.__name__} arrays; "
                    f"move it to {needed} first")
            raise TypeError(f"pycoll.distributed.{fn}: {arg} must be a pycoll.Tensor or "
                            f"{xp.__name__}.ndarray, got {type(x).__module__}.{type(x).__name__}")
    if arr.dtype.hasobject:
        raise TypeError(f"pycoll.distributed.{fn}: {arg} has dtype object; only fixed-size "
                        f"numeric dtypes can be communicated")
    return arr


def wrap_like(template: Any, arr: Any) -> Any:
    """``arr`` as the same kind of object as ``template`` (Tensor or array)."""
    if isinstance(template, _tensor_type()):
        return _tensor_type()(arr)
    return arr


def send_buffer(x: Any, xp: Any, fn: str, arg: str) -> Any:
    """A C-contiguous array with ``x``'s values (``x`` itself when it already is one)."""
    arr = array_of(x, xp, fn, arg)
    return arr if arr.flags.c_contiguous else xp.ascontiguousarray(arr)


def recv_buffer(x: Any, xp: Any, fn: str, arg: str) -> Tuple[Any, Optional[Callable[[], None]]]:
    """A C-contiguous array to receive into, and the copy-back to run once it is filled.

    The copy-back is None when ``x``'s own memory is received into. Read-only arrays are
    refused. The returned buffer starts with ``x``'s values, so it serves in-place collectives.
    """
    if type(x) is xp.ndarray:  # the common case, checked first: a contiguous, writeable array
        flags = x.flags
        if flags.c_contiguous and getattr(flags, "writeable", True) and not x.dtype.hasobject:
            return x, None
    arr = array_of(x, xp, fn, arg)
    flags = arr.flags
    if not getattr(flags, "writeable", True):  # CuPy arrays are always writeable
        raise ValueError(f"pycoll.distributed.{fn}: {arg} is read-only but receives the result; "
                         f"pass a writeable array")
    if flags.c_contiguous:
        return arr, None
    staged = xp.ascontiguousarray(arr)
    return staged, lambda: xp.copyto(arr, staged)


def check_like(items: List[Any], like: Any, xp: Any, fn: str, arg: str,
               like_name: str = "tensor") -> List[Any]:
    """The arrays of ``items``, each required to have ``like``'s shape and dtype."""
    arrays = []
    for i, item in enumerate(items):
        arr = array_of(item, xp, fn, f"{arg}[{i}]")
        if arr.shape != like.shape or arr.dtype != like.dtype:
            raise ValueError(f"pycoll.distributed.{fn}: {arg}[{i}] has shape {arr.shape} and dtype "
                             f"{arr.dtype}; it must match {like_name}: shape {like.shape}, dtype {like.dtype}")
        arrays.append(arr)
    return arrays


def check_list(items: Any, nranks: int, fn: str, arg: str, allow_empty: bool) -> list:
    """``items`` as a list of ``nranks`` entries (or empty when ``allow_empty``)."""
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"pycoll.distributed.{fn}: {arg} must be a list, got {type(items).__name__}")
    if len(items) == nranks or (allow_empty and not items):
        return items
    need = f"empty or {nranks}" if allow_empty else str(nranks)
    raise ValueError(f"pycoll.distributed.{fn}: {arg} has {len(items)} entries; it needs {need} "
                     f"(one per rank of the group)")


def one_per_rank(items: Any, nranks: int, like: Any, xp: Any, fn: str, arg: str,
                 like_name: str = "tensor") -> Any:
    """``items`` (a list of ``nranks`` tensors, each with ``like``'s shape and dtype) in one
    contiguous buffer, block i from ``items[i]``."""
    items = check_list(items, nranks, fn, arg, allow_empty=False)
    return stacked(check_like(items, like, xp, fn, arg, like_name=like_name), like, xp)


def parts(x: Any, nranks: int, xp: Any, fn: str, arg: str) -> List[Any]:
    """The array behind ``x`` as ``nranks`` equal parts along dim 0 (views, written in place)."""
    arr = array_of(x, xp, fn, arg)
    if arr.ndim == 0 or arr.shape[0] % nranks:
        raise ValueError(f"pycoll.distributed.{fn}: {arg} has shape {list(arr.shape)}; as one tensor "
                         f"it needs a dim 0 that splits evenly over the group's {nranks} ranks")
    rows = arr.shape[0] // nranks
    return [arr[i * rows:(i + 1) * rows] for i in range(nranks)]


def stacked(arrays: List[Any], like: Any, xp: Any) -> Any:
    """One contiguous buffer holding ``arrays`` one after another."""
    out = xp.empty((len(arrays),) + like.shape, like.dtype)
    for block, arr in zip(out, arrays):
        xp.copyto(block, arr)
    return out


def fill_list(out_list: list, blocks: Any, template: Any, xp: Any, fn: str,
              arg: str) -> Optional[Callable[[], None]]:
    """Deliver received ``blocks`` into ``out_list``.

    An empty list gets one entry per block at once (views of ``blocks``, valid when the
    collective completes); otherwise each entry must be writeable and is filled at completion.
    """
    if not out_list:
        out_list.extend(wrap_like(template, block) for block in blocks)
        return None
    targets = check_like(out_list, blocks[0], xp, fn, arg, like_name="the sent tensors")
    for i, arr in enumerate(targets):
        if not getattr(arr.flags, "writeable", True):
            raise ValueError(f"pycoll.distributed.{fn}: {arg}[{i}] is read-only but receives a result")

    def deliver() -> None:
        for arr, block in zip(targets, blocks):
            xp.copyto(arr, block)

    return deliver
