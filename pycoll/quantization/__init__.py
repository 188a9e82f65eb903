"""paddle.quantization: QAT and PTQ over pycoll's layers.

``QuantConfig`` says which quanter (a factory, e.g. ``quanters.FakeQuanterWithAbsMaxObserver`` or
``observers.AbsmaxObserver``) each layer gets; ``QAT(config).quantize(model)`` /
``PTQ(config).quantize(model)`` insert them, ``.convert(model)`` turns them into the
quantize / dequantize layers of ``pycoll.nn.quant.format``. paddle's older imperative API
(ImperativeQuantAware, ImperativePTQ, PTQConfig) is not served.
"""
from pycoll.quantization import observers, quanters
from pycoll.quantization.base_observer import BaseObserver
from pycoll.quantization.base_quanter import BaseQuanter
from pycoll.quantization.config import QuantConfig, SingleLayerConfig
from pycoll.quantization.factory import ObserverFactory, QuanterFactory, quanter
from pycoll.quantization.ptq import PTQ
from pycoll.quantization.qat import QAT
from pycoll.quantization.wrapper import ObserveWrapper

__all__ = ["QuantConfig", "BaseQuanter", "BaseObserver", "quanter", "QAT", "PTQ", "QuanterFactory",
           "ObserverFactory", "ObserveWrapper", "SingleLayerConfig", "observers", "quanters"]
