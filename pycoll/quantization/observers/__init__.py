"""Built-in observers for PTQ (paddle.quantization.observers)."""
from pycoll.quantization.observers.abs_max import AbsmaxObserver
from pycoll.quantization.observers.groupwise import GroupWiseWeightObserver

__all__ = ["AbsmaxObserver", "GroupWiseWeightObserver"]
