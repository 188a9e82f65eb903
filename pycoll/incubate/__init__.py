"""``paddle.incubate``'s pieces that scripts still use: the functional autograd (`autograd`)."""
from pycoll.incubate import autograd

__all__ = ["autograd"]
