"""paddle's ``MmapStorage``: the first ``nbytes`` of a file, memory-mapped, read back as tensors by
``get_slice``. The map is copy-on-write, as paddle's: a tensor sees the file's current contents
until it is written to, and writes stay in this process."""
from __future__ import annotations

from typing import Any

import numpy as np

from pycoll.device import CPUPlace
from pycoll.dtypes import convert_dtype
from pycoll.tensor import Tensor, wrap
from pycoll.tensor_data import array_from


def _whole_number(value: Any, fn: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}: {name} must be an int, got {type(value).__name__}")
    return int(value)


class MmapStorage:
    """``filename``'s first ``nbytes`` bytes, mapped into memory (the file must hold that many)."""

    def __init__(self, filename: str, nbytes: int) -> None:
        if not isinstance(filename, str):
            raise TypeError(f"MmapStorage: filename must be a str, got {type(filename).__name__}")
        nbytes = _whole_number(nbytes, "MmapStorage", "nbytes")
        if nbytes < 0:
            raise ValueError(f"MmapStorage: nbytes must be >= 0, got {nbytes}")
        try:
            with open(filename, "rb") as file:
                size = file.seek(0, 2)
        except OSError as error:
            raise RuntimeError(f"MmapStorage: unable to open file <{filename}> in read-only mode: {error}") from None
        if size < nbytes:
            raise RuntimeError(f"MmapStorage: file <{filename}> size <{size}> is smaller than the required mapping "
                               f"size <{nbytes}>")
        self.filename, self.nbytes = filename, nbytes
        self._bytes = (np.memmap(filename, dtype=np.uint8, mode="c", shape=(nbytes,)) if nbytes
                       else np.empty(0, np.uint8))

    def get_slice(self, dtype: Any = "uint8", start: int = 0, stop: int = -1, step: int = 1) -> Tensor:
        """A CPU tensor of ``dtype`` viewing the map: paddle 3.3.1's reading, where ``start`` is the
        byte it begins at and ``len(range(start, stop, step))`` the number of consecutive values it
        holds (``get_slice(dtype, 0, n)``: the first n values). ``stop=-1`` reads to the end of the
        map (paddle's gives one value there); ``dtype=None`` is float64, as paddle's."""
        start = _whole_number(start, "get_slice", "start")
        stop = _whole_number(stop, "get_slice", "stop")
        step = _whole_number(step, "get_slice", "step")
        if start < 0:
            raise ValueError(f"get_slice: start must be >= 0 (a byte offset into the map), got {start}")
        if step <= 0:
            raise ValueError(f"get_slice: step must be > 0, got {step}")
        np_dtype = np.dtype(np.float64) if dtype is None else convert_dtype(dtype)
        count = (max(self.nbytes - start, 0) // np_dtype.itemsize if stop == -1
                 else len(range(start, stop, step)))
        end = start + count * np_dtype.itemsize
        if end > self.nbytes:
            raise ValueError(f"get_slice: {count} values of {np_dtype} from byte {start} end at byte {end}, past the "
                             f"map's {self.nbytes} bytes (lower stop)")
        values = np.frombuffer(self._bytes, dtype=np_dtype, count=count, offset=start) if count else \
            np.empty(0, np_dtype)
        return wrap(array_from(values, place=CPUPlace()))  # the map's memory itself (a read-only map: a copy)

    def __repr__(self) -> str:
        return f"MmapStorage(filename={self.filename!r}, nbytes={self.nbytes})"
