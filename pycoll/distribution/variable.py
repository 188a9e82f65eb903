"""paddle.distribution.variable: the random variables a transform maps between (paddle's
``Transform._domain`` / ``_codomain``): whether they are discrete, their event rank, and the
constraint their values meet. ``Independent`` and ``Stack`` check as paddle 3.3.1 means them
(its own raise AttributeError: a misspelt attribute, a missing ``check``)."""
from __future__ import annotations

from typing import Optional, Sequence

from pycoll.distribution import constraint
from pycoll.shape_ops import stack
from pycoll.reshape_ops import unbind
from pycoll.tensor import Tensor

__all__ = ["Variable", "Real", "Positive", "Independent", "Stack", "real", "positive"]


class Variable:
    """A random variable: ``is_discrete``, ``event_rank`` and ``constraint(value)`` (a bool Tensor)."""

    def __init__(self, is_discrete: bool = False, event_rank: int = 0,
                 constraint: Optional[constraint.Constraint] = None) -> None:
        self._is_discrete = is_discrete
        self._event_rank = event_rank
        self._constraint = constraint

    @property
    def is_discrete(self) -> bool:
        return self._is_discrete

    @property
    def event_rank(self) -> int:
        return self._event_rank

    def constraint(self, value: Tensor) -> Tensor:
        if self._constraint is None:
            raise NotImplementedError(f"{type(self).__name__} was made without a constraint")
        return self._constraint.check(value)


class Real(Variable):
    def __init__(self, event_rank: int = 0) -> None:
        super().__init__(False, event_rank, constraint.real)


class Positive(Variable):
    def __init__(self, event_rank: int = 0) -> None:
        super().__init__(False, event_rank, constraint.positive)


class Independent(Variable):
    """``base`` with its rightmost ``reinterpreted_batch_rank`` batch axes taken as event axes: its
    constraint holds where the base's holds for every element of those axes."""

    def __init__(self, base: Variable, reinterpreted_batch_rank: int) -> None:
        if not isinstance(base, Variable):
            raise TypeError(f"Independent: base must be a Variable, got {type(base).__name__}")
        if isinstance(reinterpreted_batch_rank, bool) or not isinstance(reinterpreted_batch_rank, int) \
                or reinterpreted_batch_rank < 0:
            raise ValueError(f"Independent: reinterpreted_batch_rank must be an int >= 0, got "
                             f"{reinterpreted_batch_rank!r}")
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        super().__init__(base.is_discrete, base.event_rank + reinterpreted_batch_rank)

    def constraint(self, value: Tensor) -> Tensor:
        ret = self._base.constraint(value)
        rank = self._reinterpreted_batch_rank
        if ret.ndim < rank:
            raise ValueError(f"Independent.constraint: value must have at least {rank} dimensions, got shape "
                             f"{list(ret.shape)}")
        return ret.reshape(list(ret.shape[:ret.ndim - rank]) + [-1]).all(-1)


class Stack(Variable):
    """One variable per slice along ``axis``: slice i meets ``vars[i]``'s constraint."""

    def __init__(self, vars: Sequence[Variable], axis: int = 0) -> None:  # noqa: A002 - paddle's name
        if not isinstance(vars, (list, tuple)) or not vars or not all(isinstance(v, Variable) for v in vars):
            raise TypeError(f"Stack: vars must be a non-empty sequence of Variable, got {vars!r}")
        self._vars = vars
        self._axis = axis

    @property
    def is_discrete(self) -> bool:
        return any(var.is_discrete for var in self._vars)

    @property
    def event_rank(self) -> int:
        rank = max(var.event_rank for var in self._vars)
        return rank + 1 if self._axis + rank < 0 else rank

    def constraint(self, value: Tensor) -> Tensor:
        if not -value.ndim <= self._axis < value.ndim:
            raise ValueError(f"Stack.constraint: axis {self._axis} is outside a value of {value.ndim} dimensions")
        slices = unbind(value, self._axis)
        if len(slices) != len(self._vars):
            raise ValueError(f"Stack.constraint: value has {len(slices)} slices along axis {self._axis}, one for "
                             f"each of the {len(self._vars)} variables is needed")
        return stack([var.constraint(part) for var, part in zip(self._vars, slices)], self._axis)


real = Real()
positive = Positive()
