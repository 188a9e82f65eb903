"""paddle's ``paddle.incubate.distributed.models``: ``moe``."""
from pycoll.incubate.distributed.models import moe

__all__ = ["moe"]
