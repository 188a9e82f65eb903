"""`Quantization`: what QAT and PTQ share: rewriting a model's layers and ``convert``."""
from __future__ import annotations

import abc
import copy

from pycoll.nn.layer import Layer
from pycoll.nn.quant.format import ConvertibleQuantedLayer, LinearQuanterDequanter
from pycoll.quantization.base_quanter import BaseQuanter
from pycoll.quantization.config import QuantConfig


class Quantization(metaclass=abc.ABCMeta):
    """Prepares a copy of a model for calibration (PTQ) or quantization-aware training (QAT), and
    converts the result for inference. ``config`` is copied: later changes to it do not apply."""

    def __init__(self, config: QuantConfig) -> None:
        if not isinstance(config, QuantConfig):
            raise TypeError(f"{type(self).__name__}: config must be a QuantConfig, got {type(config).__name__}")
        self._config = copy.deepcopy(config)

    @abc.abstractmethod
    def quantize(self, model: Layer, inplace: bool = False) -> Layer:
        """The model with quanters / observers inserted."""

    def convert(self, model: Layer, inplace: bool = False, remain_weight: bool = False) -> Layer:
        """Replace every quanter by a quantize/dequantize pair holding its scales
        (LinearQuanterDequanter) and, unless ``remain_weight``, store each quantized layer's weight
        as its integer values with only a dequanter left on it. A quantized layer whose weight
        quanter has no scales yet is left as it is."""
        if not isinstance(model, Layer):
            raise TypeError(f"convert: model must be a pycoll.nn.Layer, got {type(model).__name__}")
        model = model if inplace else copy.deepcopy(model)
        replaced = {}
        for name, child in model.named_children():
            if isinstance(child, ConvertibleQuantedLayer):
                quanter = getattr(child, "weight_quanter", False)
                if child.converted or quanter is None or (quanter is not False and quanter.scales() is None):
                    continue
                child._convert(remain_weight=remain_weight)
            elif isinstance(child, BaseQuanter):
                replaced[name] = LinearQuanterDequanter.from_quanter(child)
            else:
                self.convert(child, inplace=True, remain_weight=remain_weight)
        for name, layer in replaced.items():
            setattr(model, name, layer)
        return model

    def _convert_to_quant_layers(self, model: Layer, config: QuantConfig) -> None:
        replaced = {}
        for name, child in model.named_children():
            if config._is_quantifiable(child) and type(child) in config.qat_layer_mappings:
                replaced[name] = config._get_qat_layer(child)
            else:
                self._convert_to_quant_layers(child, config)
        for name, layer in replaced.items():
            setattr(model, name, layer)

    def _insert_activation_observers(self, model: Layer, config: QuantConfig) -> None:
        quanted_types = set(config.qat_layer_mappings.values())
        replaced = {}
        for name, child in model.named_children():
            if config._need_observe(child):
                replaced[name] = config._get_observe_wrapper(child)
            elif type(child) not in quanted_types:
                self._insert_activation_observers(child, config)
        for name, layer in replaced.items():
            setattr(model, name, layer)

    def __str__(self) -> str:
        return self._config.details()

    __repr__ = __str__
