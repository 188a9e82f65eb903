"""The few names of ``paddle.static`` a dygraph script still meets. pycoll runs eagerly and has
no static program: ``data`` and ``InputSpec`` describe an input (name, shape, dtype, lod_level),
which is what pycoll's InMemoryDataset and QueueDataset take as a slot in ``use_var`` — the way
paddle's own dataset examples make their slots."""
from __future__ import annotations

from dataclasses import dataclass, replace
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

    @classmethod
    def from_tensor(cls, tensor: Any, name: Optional[str] = None) -> "InputSpec":
        """The spec of ``tensor`` (a pycoll Tensor): its shape and dtype, named ``name`` or the
        tensor's own name."""
        from pycoll.tensor import Tensor  # the tensor layer sits above this module

        if not isinstance(tensor, Tensor):
            raise TypeError(f"InputSpec.from_tensor: tensor must be a pycoll Tensor, got {type(tensor).__name__}")
        return cls(list(tensor.shape), np.dtype(tensor.dtype).name, name or getattr(tensor, "name", None))

    @classmethod
    def from_numpy(cls, ndarray: Any, name: Optional[str] = None) -> "InputSpec":
        """The spec of a NumPy array: its shape and dtype."""
        if not isinstance(ndarray, np.ndarray):
            raise TypeError(f"InputSpec.from_numpy: ndarray must be a numpy.ndarray, got {type(ndarray).__name__}")
        return cls(list(ndarray.shape), ndarray.dtype.name, name)

    def batch(self, batch_size: Any) -> "InputSpec":
        """This spec with a leading batch axis of ``batch_size`` (an int, or a one-int list)."""
        size = batch_size[0] if isinstance(batch_size, (list, tuple)) and len(batch_size) == 1 else batch_size
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"InputSpec.batch: batch_size must be an int, got {batch_size!r}")
        return replace(self, shape=[None if size == -1 else size] + list(self.shape))

    def unbatch(self) -> "InputSpec":
        """This spec without its leading axis."""
        if not self.shape:
            raise ValueError("InputSpec.unbatch: the spec has no axis to remove")
        return replace(self, shape=list(self.shape[1:]))


def data(name: str, shape: Sequence[Optional[int]], dtype: Any = None, lod_level: int = 0) -> InputSpec:
    """paddle's ``static.data``: the description of an input named ``name`` (``dtype`` defaults
    to float32)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"static.data: name must be a non-empty string, got {name!r}")
    return InputSpec([None if s is None or s == -1 else int(s) for s in shape],
                     np.dtype(dtype or "float32").name, name, int(lod_level))
