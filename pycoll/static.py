"""The few names of ``paddle.static`` a dygraph script still meets. pycoll runs eagerly and has
no static program: ``data`` and ``InputSpec`` describe an input (name, shape, dtype, lod_level),
which is what pycoll's InMemoryDataset and QueueDataset take as a slot in ``use_var`` — the way
paddle's own dataset examples make their slots; ``Variable`` is the type checks name beside
``paddle.Tensor``."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll.dtypes import convert_dtype


class InputSpec:
    """An input's description, as paddle's: ``shape`` a tuple of ints, -1 for a size known only
    at run time (None is taken for it), ``dtype`` (a dtype or its name), ``name``,
    ``stop_gradient``; pycoll also keeps ``lod_level`` (1: a variable-length slot, for
    ``static.data``). Specs with equal fields are equal and hash alike."""

    def __init__(self, shape: Sequence[Optional[int]], dtype: Any = "float32", name: Optional[str] = None,
                 stop_gradient: bool = False, lod_level: int = 0):
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"InputSpec: shape must be a list or tuple of ints, got {type(shape).__name__}")
        for i, size in enumerate(shape):
            if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer))):
                raise ValueError(f"InputSpec: shape[{i}] must be an int (or None / -1 for a size known at run "
                                 f"time), got {type(size).__name__} {size!r}")
        # None, and any size below -1, is -1: a size known at run time (paddle's)
        self.shape: Tuple[int, ...] = tuple(-1 if size is None or size < -1 else int(size) for size in shape)
        self.dtype = convert_dtype(dtype)  # a TypeError names a dtype it does not know
        self.name = name
        self.stop_gradient = bool(stop_gradient)
        self.lod_level = int(lod_level)

    def _fields(self) -> tuple:
        return self.shape, self.dtype, self.name, self.stop_gradient, self.lod_level

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, InputSpec) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"InputSpec(shape={self.shape}, dtype={self.dtype}, name={self.name}, "
                f"stop_gradient={self.stop_gradient})")

    @classmethod
    def from_tensor(cls, tensor: Any, name: Optional[str] = None) -> "InputSpec":
        """The spec of ``tensor`` (a pycoll Tensor): its shape and dtype, named ``name`` or the
        tensor's own name."""
        from pycoll.tensor import Tensor  # the tensor layer sits above this module

        if not isinstance(tensor, Tensor):
            raise TypeError(f"InputSpec.from_tensor: tensor must be a pycoll Tensor, got {type(tensor).__name__}")
        return cls(list(tensor.shape), tensor.dtype, name or getattr(tensor, "name", None))

    @classmethod
    def from_numpy(cls, ndarray: Any, name: Optional[str] = None) -> "InputSpec":
        """The spec of a NumPy array: its shape and dtype."""
        if not isinstance(ndarray, np.ndarray):
            raise TypeError(f"InputSpec.from_numpy: ndarray must be a numpy.ndarray, got {type(ndarray).__name__}")
        return cls(list(ndarray.shape), ndarray.dtype, name)

    def batch(self, batch_size: Any) -> "InputSpec":
        """A leading batch axis of ``batch_size`` (an int, or a one-int list) put before this
        spec's shape, in place (paddle's); returns the spec."""
        if isinstance(batch_size, (list, tuple)) and len(batch_size) != 1:  # paddle's ValueError
            raise ValueError(f"InputSpec.batch: batch_size must be an int or a list of one int, got {batch_size!r}")
        size = batch_size[0] if isinstance(batch_size, (list, tuple)) else batch_size
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"InputSpec.batch: batch_size must be an int, got {batch_size!r}")
        self.shape = (size,) + self.shape
        return self

    def unbatch(self) -> "InputSpec":
        """This spec's leading axis removed, in place (paddle's); returns the spec."""
        if not self.shape:
            raise ValueError("InputSpec.unbatch: the spec has no axis to remove")
        self.shape = self.shape[1:]
        return self


def data(name: str, shape: Sequence[Optional[int]], dtype: Any = None, lod_level: int = 0) -> InputSpec:
    """paddle's ``static.data``: the description of an input named ``name`` (``dtype`` defaults
    to float32)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"static.data: name must be a non-empty string, got {name!r}")
    return InputSpec(list(shape), dtype or "float32", name, lod_level=lod_level)


class _VariableType(type):
    """Variable's type: every pycoll Tensor is an instance, as paddle's eager tensors are of its
    Variable (its metaclass answers isinstance so in dygraph mode)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        from pycoll.tensor import Tensor

        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableType):
    """paddle's static-graph variable, the type code that runs in both modes checks for
    (``isinstance(x, paddle.static.Variable)``): every Tensor is one, as in paddle's dygraph
    mode. pycoll runs eagerly and builds no program to make a new one in."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise TypeError("static.Variable: pycoll runs eagerly and has no static program to add a variable to; "
                        "use pycoll.to_tensor")
