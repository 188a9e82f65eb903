"""paddle's ``paddle.incubate.distributed`` path: ``models.moe``, the mixture-of-experts layer
over ranks. A distributed-side package (it uses ``pycoll.distributed``); ``pycoll.incubate``
itself is tensor-side and reaches it lazily."""
from pycoll.incubate.distributed import models

__all__ = ["models"]
