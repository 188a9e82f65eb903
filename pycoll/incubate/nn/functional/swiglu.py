"""``paddle.incubate.nn.functional.swiglu``: the same function as ``pycoll.nn.functional.swiglu``
(paddle 3.3.1 deprecates this home in favour of that one): silu(x) * y, or with y None
silu(a) * b for a and b the two halves of x's last axis."""
from pycoll.nn.functional import swiglu

__all__ = ["swiglu"]
