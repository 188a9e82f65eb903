"""Built-in quanters (paddle.quantization.quanters)."""
from pycoll.quantization.quanters.abs_max import FakeQuanterWithAbsMaxObserver

__all__ = ["FakeQuanterWithAbsMaxObserver"]
