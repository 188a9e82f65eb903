"""paddle.compat.nn: torch-style layers over pycoll's: ``Softmax``, ``Linear`` (torch's [out, in]
weight and initialization), ``Unfold`` (singular argument names), ``AvgPool1D/2D/3D`` (also
``AvgPool1d/2d/3d``; ``count_include_pad`` where paddle's take ``exclusive``, default True),
``MultiheadAttention`` and ``functional``."""
from pycoll.compat.nn import functional
from pycoll.compat.nn.layers import (AvgPool1D, AvgPool1d, AvgPool2D, AvgPool2d, AvgPool3D, AvgPool3d, Linear, Softmax,
                                     Unfold)
from pycoll.compat.nn.transformer import MultiheadAttention

__all__ = ["Unfold", "Linear", "Softmax", "AvgPool1D", "AvgPool2D", "AvgPool3D", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "MultiheadAttention", "functional"]
