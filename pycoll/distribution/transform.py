"""paddle.distribution.transform: pycoll's transforms (``pycoll.distribution.transforms``) at paddle's
module path, with paddle's ``Type`` of a transform's mapping."""
from __future__ import annotations

from pycoll.distribution.transforms import (AbsTransform, AffineTransform, ChainTransform, ExpTransform,
                                            IndependentTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                                            SoftmaxTransform, StackTransform, StickBreakingTransform, TanhTransform,
                                            Transform, Type)

__all__ = ["Type", "Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform",
           "IndependentTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform"]
