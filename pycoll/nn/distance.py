"""CosineSimilarity and PairwiseDistance (paddle.nn names); the functions are in
`pycoll.nn.functional`."""
from __future__ import annotations

from typing import Optional

from pycoll._param_aliases import param_aliases
from pycoll.nn import functional as F
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class CosineSimilarity(Layer):
    @param_aliases({"dim": "axis"})
    def __init__(self, axis: int = 1, eps: float = 1e-8):
        super().__init__()
        self._axis, self._eps = axis, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self._axis, self._eps)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, eps={self._eps}"


class PairwiseDistance(Layer):
    @param_aliases({"eps": "epsilon"})
    def __init__(self, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.p, self.epsilon, self.keepdim = p, epsilon, keepdim

    @param_aliases({"x1": "x", "x2": "y"})
    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return F.pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self) -> str:
        # paddle's: epsilon and keepdim only where they are not the defaults
        return (f"p={self.p}" + (f", epsilon={self.epsilon}" if self.epsilon != 1e-6 else "")
                + (f", keepdim={self.keepdim}" if self.keepdim else ""))
