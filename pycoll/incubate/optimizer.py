"""``paddle.incubate.optimizer``: the LookAhead wrapper and ModelAverage (the same classes as
``pycoll.incubate``'s; paddle's static-graph optimizers of this package are not here)."""
from pycoll.incubate.lookahead import LookAhead
from pycoll.incubate.model_average import ModelAverage

__all__ = ["LookAhead", "ModelAverage"]
