"""``paddle.utils``'s pieces that scripts use: `dlpack`."""
from pycoll.utils import dlpack

__all__ = ["dlpack"]
