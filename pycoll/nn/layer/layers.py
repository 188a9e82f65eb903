"""paddle.nn.layer.layers: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.layer import Layer

__all__ = ["Layer"]
