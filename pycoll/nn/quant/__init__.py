"""paddle.nn.quant: the stub, the QAT layers (``qat``), the layers ``convert`` leaves (``format``)
and the weight-only / LLM.int8 functions."""
from pycoll.nn.quant import format, qat, stub  # noqa: A004 - paddle's module name
from pycoll.nn.quant.quantized_linear import llm_int8_linear, weight_dequantize, weight_only_linear, weight_quantize
from pycoll.nn.quant.stub import QuanterStub, Stub

__all__ = ["Stub", "QuanterStub", "weight_only_linear", "llm_int8_linear", "weight_quantize", "weight_dequantize",
           "format", "qat", "stub"]
