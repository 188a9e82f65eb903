"""`PTQ`: prepare a model for post-training quantization (calibration by observers)."""
from __future__ import annotations

import copy

from pycoll._errors import AssertedArgument
from pycoll.nn.layer import Layer
from pycoll.quantization.quantize import Quantization


class PTQ(Quantization):
    """Post-training quantization: ``quantize`` inserts observers (as QAT inserts quanters); run
    calibration data through the result, then ``convert`` it."""

    def quantize(self, model: Layer, inplace: bool = False) -> Layer:
        """The model with observers, in eval mode (a deep copy unless ``inplace``). Copied,
        ``model`` itself must be in evaluation mode (paddle asserts it: the error is an
        AssertionError and a ValueError)."""
        if not isinstance(model, Layer):
            raise TypeError(f"PTQ.quantize: model must be a pycoll.nn.Layer, got {type(model).__name__}")
        prepared = model if inplace else copy.deepcopy(model)
        prepared.eval()
        if model.training:  # a copy of a model in training mode (paddle's check)
            raise AssertedArgument("PTQ.quantize: model must be in evaluation mode (call model.eval() first)")
        self._config._specify(prepared)
        self._convert_to_quant_layers(prepared, self._config)
        self._insert_activation_observers(prepared, self._config)
        return prepared
