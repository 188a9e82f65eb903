"""paddle.distribution.transform: pycoll's transforms (``pycoll.distribution.transforms``) at paddle's
module path, with paddle's ``Type`` of a transform's mapping."""
from __future__ import annotations

import enum

from pycoll.distribution.transforms import (AbsTransform, AffineTransform, ChainTransform, ExpTransform,
                                            IndependentTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                                            SoftmaxTransform, StackTransform, StickBreakingTransform, TanhTransform,
                                            Transform)

__all__ = ["Type", "Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform",
           "IndependentTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform"]


class Type(enum.Enum):
    """What kind of mapping a transform is."""

    BIJECTION = "bijection"
    INJECTION = "injection"
    SURJECTION = "surjection"
    OTHER = "other"

    @classmethod
    def is_injective(cls, _type: "Type") -> bool:
        """Bijections and injections are injective."""
        return _type in (cls.BIJECTION, cls.INJECTION)
