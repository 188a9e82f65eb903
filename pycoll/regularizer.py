"""paddle's ``paddle.regularizer``: ``L2Decay`` and ``L1Decay``, an optimizer's ``weight_decay``
(or a parameter's ``ParamAttr(regularizer=...)``, which wins over it). Each adds its term to a
gradient before the update."""
from __future__ import annotations

from typing import Any

from pycoll.device import array_module
from pycoll.tensor import Tensor, wrap


class WeightDecayRegularizer:
    """paddle's base of the regularizers. One of your own subclasses it and defines
    ``__call__(param, grad, block)``, returning the term added to ``grad`` before the update (a
    Tensor of ``param``'s shape; ``block``, paddle's static-graph block, is None here)."""

    applies = True  # whether the term is added at all (a decay of coeff 0 adds nothing)

    def __call__(self, param: Any, grad: Any, block: Any = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: a WeightDecayRegularizer subclass defines "
                                  f"__call__(param, grad, block), returning the term added to grad")

    def term(self, param: Any, grad: Any, xp: Any) -> Any:
        """The term added to the gradient array ``grad`` of parameter array ``param``."""
        out = self(wrap(param), wrap(grad), None)
        if not isinstance(out, Tensor):
            raise TypeError(f"{type(self).__name__}.__call__ must return a Tensor, got {type(out).__name__}")
        return out.array


class _Decay(WeightDecayRegularizer):
    def __init__(self, coeff: float = 0.0):
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)) or coeff < 0:
            raise ValueError(f"{type(self).__name__}: coeff must be a number >= 0, got {coeff!r}")
        self.coeff = float(coeff)
        self.applies = self.coeff != 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}, coeff={self.coeff}"

    def __call__(self, param: Any, grad: Any, block: Any = None) -> Any:
        """paddle's: the term this decay adds to ``grad``."""
        return wrap(self.term(param.array, grad, None))


class L2Decay(_Decay):
    """coeff * param added to the gradient (a float weight_decay means this)."""

    def term(self, param: Any, grad: Any, xp: Any) -> Any:
        return self.coeff * param


class L1Decay(_Decay):
    """coeff * sign(param) added to the gradient."""

    def term(self, param: Any, grad: Any, xp: Any) -> Any:
        return self.coeff * (xp or array_module(param)).sign(param)


__all__ = ["L1Decay", "L2Decay"]  # (and WeightDecayRegularizer, outside paddle's __all__ too)
