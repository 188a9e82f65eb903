"""paddle.distribution.constraint: conditions a random variable's values meet, each an elementwise
bool Tensor (``Constraint.check(value)`` is ``constraint(value)``). ``Range`` and ``Simplex`` are
elementwise here where paddle 3.3.1's use Python ``and`` (which raises there for more than one
element)."""
from __future__ import annotations

from typing import Any

from pycoll.logic_ops import logical_and
from pycoll.tensor import Tensor

__all__ = ["Constraint", "Real", "Range", "Positive", "Simplex", "real", "positive", "simplex"]


class Constraint:
    """The base: a subclass says, for every element of ``value``, whether it meets the condition."""

    def __call__(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def check(self, value: Tensor) -> Tensor:
        return self(value)


class Real(Constraint):
    """Not NaN."""

    def __call__(self, value: Tensor) -> Tensor:
        return value == value


class Range(Constraint):
    """lower <= value <= upper (bounds floats or Tensors broadcasting with the value)."""

    def __init__(self, lower: Any, upper: Any) -> None:
        self._lower = lower
        self._upper = upper
        super().__init__()

    def __call__(self, value: Tensor) -> Tensor:
        return logical_and(value >= self._lower, value <= self._upper)


class Positive(Constraint):
    """value >= 0, as paddle's."""

    def __call__(self, value: Tensor) -> Tensor:
        return value >= 0.0


class Simplex(Constraint):
    """Along the last axis: every entry >= 0 and the sum within 1e-6 of 1."""

    def __call__(self, value: Tensor) -> Tensor:
        return logical_and((value >= 0).all(-1), (value.sum(-1) - 1).abs() < 1e-6)


real = Real()
positive = Positive()
simplex = Simplex()
