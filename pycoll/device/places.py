"""paddle's place objects: ``Tensor.place``, ``set_device``'s answer, ``CPUPlace()`` and
``CUDAPlace(id)``.

A place is the pair ``(kind, id)`` that pycoll passes around (``("cpu", 0)``, ``("gpu", 1)``), as
a tuple, so it goes wherever a place is taken; it prints as paddle's (``Place(cpu)``,
``Place(gpu:0)``) and answers paddle's questions (``is_cpu_place()``, ``is_gpu_place()``,
``gpu_device_id()``). It also equals its text ``'cpu'`` / ``'gpu:N'`` (paddle's does not), which
code written against pycoll's earlier string places relies on.
"""
from __future__ import annotations

from typing import Any, Tuple


class Place(tuple):
    """A device place ``(kind, id)``: kind ``'cpu'`` or ``'gpu'``."""

    __slots__ = ()

    def __new__(cls, place: Tuple[str, int]) -> "Place":
        if place[0] == "cpu":
            return _CPU
        return tuple.__new__(CUDAPlace, ("gpu", place[1]))

    def __repr__(self) -> str:
        return "Place(cpu)" if self[0] == "cpu" else f"Place(gpu:{self[1]})"

    def __str__(self) -> str:
        return self.__repr__()

    def text(self) -> str:
        """pycoll's text of the place: 'cpu' or 'gpu:N'."""
        return "cpu" if self[0] == "cpu" else f"gpu:{self[1]}"

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, str):
            return other.strip().lower() == self.text()
        return tuple.__eq__(self, other)

    def __ne__(self, other: Any) -> Any:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def is_cpu_place(self) -> bool:
        return self[0] == "cpu"

    def is_gpu_place(self) -> bool:
        return self[0] == "gpu"

    def gpu_device_id(self) -> int:
        """The GPU's index (0 for the CPU place, as paddle answers)."""
        return self[1]

    def __reduce__(self) -> tuple:
        return (Place, (tuple(self),))


class CPUPlace(Place):
    """paddle's ``CPUPlace()``: the place ``("cpu", 0)``."""

    __slots__ = ()

    def __new__(cls) -> "CPUPlace":
        return _CPU


class CUDAPlace(Place):
    """paddle's ``CUDAPlace(id)``: the place ``("gpu", id)``."""

    __slots__ = ()

    def __new__(cls, id: int) -> "CUDAPlace":  # noqa: A002 (paddle's name)
        if isinstance(id, bool) or not isinstance(id, int) or id < 0:
            raise ValueError(f"CUDAPlace: id must be an int >= 0, got {id!r}")
        return tuple.__new__(cls, ("gpu", id))


_CPU = tuple.__new__(CPUPlace, ("cpu", 0))
