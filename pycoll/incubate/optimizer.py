"""``paddle.incubate.optimizer``: the LookAhead wrapper and ModelAverage (the same classes as
``pycoll.incubate``'s), and paddle's deprecated ``LBFGS`` (``pycoll.optimizer.LBFGS``, saying so);
paddle's static-graph optimizers of this package are not here."""
import warnings
from typing import Any

from pycoll.incubate.lookahead import LookAhead
from pycoll.incubate.model_average import ModelAverage
from pycoll.optimizer import LBFGS as _LBFGS

__all__ = ["LBFGS", "LookAhead", "ModelAverage"]


class LBFGS(_LBFGS):
    """``pycoll.optimizer.LBFGS`` under paddle's old name (deprecated since paddle 2.5.0)."""

    def __init__(self, *args: Any, **kwargs: Any):
        warnings.warn("paddle.incubate.optimizer.LBFGS is deprecated since 2.5.0; use paddle.optimizer.LBFGS",
                      DeprecationWarning, stacklevel=2)
        super().__init__(*args, **kwargs)
