"""paddle's ``paddle.incubate.distributed`` path: ``models.moe``, the mixture-of-experts layer
over ranks, and ``fleet`` (``recompute_sequential``, ``recompute_hybrid``). A distributed-side
package (it uses ``pycoll.distributed``); ``pycoll.incubate`` itself is tensor-side and reaches it
lazily."""
from pycoll.incubate.distributed import fleet, models

__all__ = ["fleet", "models"]
