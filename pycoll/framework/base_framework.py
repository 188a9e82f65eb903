"""paddle's ``paddle.base.framework`` as dygraph code meets it: the types it checks against
(``EagerParamBase``, a parameter: pycoll's ``nn.Parameter``; ``Variable``, which every Tensor is,
as in paddle's dygraph mode) and the mode queries."""
from __future__ import annotations

from pycoll import in_dynamic_mode as in_dygraph_mode
from pycoll.framework.modes import in_dynamic_or_pir_mode, in_pir_mode
from pycoll.nn.parameter import Parameter as EagerParamBase
from pycoll.static import Variable

__all__ = ["EagerParamBase", "Variable", "in_dygraph_mode", "in_dynamic_or_pir_mode", "in_pir_mode"]
