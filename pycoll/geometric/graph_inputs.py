"""The checks the graph sampling and reindexing ops share: node/edge id tensors of int32 or int64,
given as ``[n]`` or ``[n, 1]`` (paddle's CSC layout takes both), as flat arrays."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._tensor_ops import as_tensor

ID_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def id_array(value: Any, fn: str, arg: str, like: Optional[Any] = None) -> Any:
    """`value` as a 1-D int32/int64 array (a trailing axis of 1 dropped). With `like` (an array),
    its dtype must be `like`'s, as paddle's kernels require (ValueError otherwise)."""
    if value is None:
        raise ValueError(f"{fn}: {arg} is required, got None")
    a = as_tensor(value)._array
    if a.dtype not in ID_DTYPES:
        raise TypeError(f"{fn}: {arg} must be an int32 or int64 tensor, got dtype {a.dtype}")
    if like is not None and a.dtype != like.dtype:
        raise ValueError(f"{fn}: {arg} must have the dtype of the ids it goes with ({like.dtype}), got {a.dtype}")
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError(f"{fn}: {arg} must have shape [n] or [n, 1], got {list(a.shape)}")
    return a


def check_in_range(ids: Any, end: int, fn: str, arg: str, what: str = "") -> None:
    """ValueError unless every id is in [0, end) (``what`` says what the range counts)."""
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= end):
        bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
        raise ValueError(f"{fn}: {arg} must lie in [0, {end}){f' ({what})' if what else ''}, got {bad}")
