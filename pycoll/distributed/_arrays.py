"""Turning the collectives' tensor arguments into arrays an engine can move.

This is the one place that knows what a user may pass: a ``numpy.ndarray`` or a
``pycoll.Tensor`` (whose backing array is moved in place). Non-contiguous arrays are staged
through a contiguous copy and, for outputs, copied back once the collective completes.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np


def _tensor_type():
    from pycoll.tensor import Tensor

    return Tensor


def array_of(x: Any, fn: str, arg: str) -> np.ndarray:
    """The NumPy array behind ``x``; TypeError naming ``arg`` for anything else."""
    if type(x) is np.ndarray:
        arr = x
    else:
        Tensor = _tensor_type()
        arr = x.array if isinstance(x, Tensor) else x
        if not isinstance(arr, np.ndarray):
            if hasattr(arr, "__cuda_array_interface__"):
                raise TypeError(
                    f"pycoll.distributed.{fn}: {arg} is a GPU array ({type(arr).__module__}."
                    f"{type(arr).__name__}) but the cpu backend moves NumPy arrays; copy it to "
                    f"the host or initialise pycoll on a GPU")
            raise TypeError(f"pycoll.distributed.{fn}: {arg} must be a pycoll.Tensor or "
                            f"numpy.ndarray, got {type(x).__module__}.{type(x).__name__}")
    if arr.dtype.hasobject:
        raise TypeError(f"pycoll.distributed.{fn}: {arg} has dtype object; only fixed-size "
                        f"numeric dtypes can be communicated")
    return arr


def wrap_like(template: Any, arr: np.ndarray) -> Any:
    """``arr`` as the same kind of object as ``template`` (Tensor or ndarray)."""
    if type(template) is np.ndarray:
        return arr
    return _tensor_type()(arr)


def send_buffer(x: Any, fn: str, arg: str) -> np.ndarray:
    """A C-contiguous array with ``x``'s values (``x`` itself when it already is one)."""
    arr = array_of(x, fn, arg)
    return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)


def recv_buffer(x: Any, fn: str, arg: str) -> Tuple[np.ndarray, Optional[Callable[[], None]]]:
    """A C-contiguous array to receive into, and the copy-back to run once it is filled.

    The copy-back is None when ``x``'s own memory is received into. Read-only arrays are
    refused. The returned buffer starts with ``x``'s values, so it serves in-place collectives.
    """
    arr = array_of(x, fn, arg)
    flags = arr.flags
    if not flags.writeable:
        raise ValueError(f"pycoll.distributed.{fn}: {arg} is read-only but receives the result; "
                         f"pass a writeable array")
    if flags.c_contiguous:
        return arr, None
    staged = np.ascontiguousarray(arr)
    return staged, lambda: np.copyto(arr, staged)


def check_like(items: List[Any], like: np.ndarray, fn: str, arg: str,
               like_name: str = "tensor") -> List[np.ndarray]:
    """The arrays of ``items``, each required to have ``like``'s shape and dtype."""
    arrays = []
    for i, item in enumerate(items):
        arr = array_of(item, fn, f"{arg}[{i}]")
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


def stacked(arrays: List[np.ndarray], like: np.ndarray) -> np.ndarray:
    """One contiguous buffer holding ``arrays`` one after another."""
    out = np.empty((len(arrays),) + like.shape, like.dtype)
    for block, arr in zip(out, arrays):
        np.copyto(block, arr)
    return out


def fill_list(out_list: list, blocks: np.ndarray, template: Any, fn: str,
              arg: str) -> Optional[Callable[[], None]]:
    """Deliver received ``blocks`` into ``out_list``.

    An empty list gets one entry per block at once (views of ``blocks``, valid when the
    collective completes); otherwise each entry must be writeable and is filled at completion.
    """
    if not out_list:
        out_list.extend(wrap_like(template, block) for block in blocks)
        return None
    targets = check_like(out_list, blocks[0], fn, arg, like_name="the sent tensors")
    for i, arr in enumerate(targets):
        if not arr.flags.writeable:
            raise ValueError(f"pycoll.distributed.{fn}: {arg}[{i}] is read-only but receives a result")

    def deliver() -> None:
        for arr, block in zip(targets, blocks):
            np.copyto(arr, block)

    return deliver
