"""The layers QAT puts in place of the float ones (paddle.nn.quant.qat)."""
from pycoll.nn.quant.qat.conv import QuantedConv2D
from pycoll.nn.quant.qat.linear import QuantedLinear

__all__ = ["QuantedConv2D", "QuantedLinear"]
