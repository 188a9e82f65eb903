"""paddle.nn.layer.distance: the same objects as pycoll.nn's, at the module path paddle's docstrings import from."""
from pycoll.nn.distance import PairwiseDistance

__all__ = ["PairwiseDistance"]
