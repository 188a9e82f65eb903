"""paddle's module path ``paddle.distributed.flex_checkpoint``: its ``dcp`` modules name
``pycoll.distributed.checkpoint``'s objects (the same objects, not copies)."""
from pycoll.distributed.flex_checkpoint import dcp

__all__ = ["dcp"]
