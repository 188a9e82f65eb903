"""``paddle.utils.dlpack``: `to_dlpack` and `from_dlpack` (sharing memory, no copy)."""
from pycoll.creation import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
