"""`Stub` marks where a functional call's input should be observed; QAT / PTQ swap it for a `QuanterStub`."""
from __future__ import annotations

from typing import Any, Optional

from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class Stub(Layer):
    """An identity placeholder for an observer (paddle.nn.quant.Stub).

    A functional API called in a layer's forward has no layer of its own to configure; put a Stub
    in the layer and call it on the functional's input. ``observer`` (a quanter factory) is what
    QAT / PTQ will insert there; None means the activation quanter of the layer's config.
    """

    def __init__(self, observer: Optional[Any] = None) -> None:
        super().__init__()
        if observer is not None and not hasattr(observer, "_instance"):
            raise TypeError(f"Stub: observer must be a quanter factory (e.g. FakeQuanterWithAbsMaxObserver(...)) "
                            f"or None, got {type(observer).__name__}")
        self._observer = observer

    def forward(self, input: Tensor) -> Tensor:
        return input


class QuanterStub(Layer):
    """What QAT / PTQ put in a Stub's place: identity with an observer on the input. Its observer
    comes from the stub's own factory, else from ``q_config.activation``; with neither it is the
    identity."""

    def __init__(self, layer: Stub, q_config: Any) -> None:
        super().__init__()
        self._observer = None
        if layer._observer is not None:
            self._observer = layer._observer._instance(layer)
        elif q_config is not None and q_config.activation is not None:
            self._observer = q_config.activation._instance(layer)

    def forward(self, input: Tensor) -> Tensor:
        return self._observer(input) if self._observer is not None else input
