"""paddle 3.3.1's ``paddle.special``: ``expm1``, ``logsumexp`` and the torch-style ``softmax``, the
functions pycoll already has (``softmax`` is ``pycoll.softmax`` itself, as paddle's is
``paddle.softmax``; ``expm1`` and ``logsumexp`` are the functions behind the top-level names,
without the top level's ``out=`` on logsumexp, as paddle's are its ops without that wrapper)."""
from pycoll.aliases import softmax
from pycoll.reduce_ops import logsumexp
from pycoll.unary_ops import expm1

__all__ = ["logsumexp", "softmax", "expm1"]
