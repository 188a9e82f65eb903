"""`ObserveWrapper`: an observer and the layer it observes, as one layer."""
from __future__ import annotations

from typing import Any

from pycoll.nn.layer import Layer
from pycoll.quantization.base_quanter import BaseQuanter


class ObserveWrapper(Layer):
    """Calls ``observer`` on the inputs and then ``observed`` (``observe_input=True``), or
    ``observed`` then ``observer`` on its output. QAT / PTQ wrap leaf layers this way."""

    def __init__(self, observer: BaseQuanter, observed: Layer, observe_input: bool = True) -> None:
        super().__init__()
        if not isinstance(observed, Layer):
            raise TypeError(f"ObserveWrapper: observed must be a pycoll.nn.Layer, got {type(observed).__name__}")
        self._observer = observer
        self._observed = observed
        self._observe_input = observe_input

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._observe_input:
            return self._observed(self._observer(*inputs, **kwargs), **kwargs)
        return self._observer(self._observed(*inputs, **kwargs), **kwargs)
