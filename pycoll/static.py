"""The few names of ``paddle.static`` a dygraph script still meets. pycoll runs eagerly and has
no static program: ``data`` and ``InputSpec`` describe an input (name, shape, dtype, lod_level),
which is what pycoll's InMemoryDataset and QueueDataset take as a slot in ``use_var`` — the way
paddle's own dataset examples make their slots."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import numpy as np


@dataclass(frozen=True)
class InputSpec:
    """An input's description: ``shape`` (None for a size known only at run time), ``dtype``
    (a name), ``name`` and ``lod_level`` (1: a variable-length slot)."""

    shape: List[Optional[int]]
    dtype: str = "float32"
    name: Optional[str] = None
    lod_level: int = 0


def data(name: str, shape: Sequence[Optional[int]], dtype: Any = None, lod_level: int = 0) -> InputSpec:
    """paddle's ``static.data``: the description of an input named ``name`` (``dtype`` defaults
    to float32)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"static.data: name must be a non-empty string, got {name!r}")
    return InputSpec([None if s is None or s == -1 else int(s) for s in shape],
                     np.dtype(dtype or "float32").name, name, int(lod_level))
