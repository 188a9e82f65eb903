"""paddle's ``paddle.regularizer``: ``L2Decay`` and ``L1Decay``, an optimizer's ``weight_decay``
(or a parameter's ``ParamAttr(regularizer=...)``, which wins over it). Each adds its term to a
gradient before the update."""
from __future__ import annotations

from typing import Any


class _Decay:
    def __init__(self, coeff: float = 0.0):
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)) or coeff < 0:
            raise ValueError(f"{type(self).__name__}: coeff must be a number >= 0, got {coeff!r}")
        self.coeff = float(coeff)

    def __repr__(self) -> str:
        return f"{type(self).__name__}, coeff={self.coeff}"

    def term(self, param: Any, xp: Any) -> Any:
        raise NotImplementedError


class L2Decay(_Decay):
    """coeff * param added to the gradient (a float weight_decay means this)."""

    def term(self, param: Any, xp: Any) -> Any:
        return self.coeff * param


class L1Decay(_Decay):
    """coeff * sign(param) added to the gradient."""

    def term(self, param: Any, xp: Any) -> Any:
        return self.coeff * xp.sign(param)


__all__ = ["L1Decay", "L2Decay"]
