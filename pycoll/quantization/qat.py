"""`QAT`: prepare a model for quantization-aware training."""
from __future__ import annotations

import copy

from pycoll._errors import AssertedArgument
from pycoll.nn.layer import Layer
from pycoll.quantization.quantize import Quantization


class QAT(Quantization):
    """Quantization-aware training: ``quantize`` swaps the configured layers for their QAT
    versions (Linear -> QuantedLinear, Conv2D -> QuantedConv2D, Stub -> QuanterStub) and wraps
    the configured leaves in ObserveWrappers; training then learns weights under simulated
    quantization."""

    def quantize(self, model: Layer, inplace: bool = False) -> Layer:
        """The model prepared for QAT (a deep copy unless ``inplace``). ``model`` must be in
        training mode (paddle asserts it: the error is an AssertionError and a ValueError)."""
        if not isinstance(model, Layer):
            raise TypeError(f"QAT.quantize: model must be a pycoll.nn.Layer, got {type(model).__name__}")
        if not model.training:
            raise AssertedArgument("QAT.quantize: model must be in training mode (call model.train() first)")
        model = model if inplace else copy.deepcopy(model)
        self._config._specify(model)
        self._convert_to_quant_layers(model, self._config)
        self._insert_activation_observers(model, self._config)
        return model
