"""paddle.vision.models._utils: ``IntermediateLayerGetter`` (a model's direct sublayers run in
order, the outputs of the named ones returned; paddle's docstring example uses it) and
``_make_divisible`` (``_common.make_divisible``)."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict

from pycoll.nn import Layer, LayerDict, Linear
from pycoll.shape_ops import flatten
from pycoll.vision.models._common import make_divisible as _make_divisible  # noqa: F401 - paddle's name

__all__ = ["IntermediateLayerGetter"]


class IntermediateLayerGetter(LayerDict):
    """The sublayers of ``model`` registered up to the last one named in ``return_layers``
    ({sublayer name: output name}), run one after another on the input; the call returns an
    OrderedDict of the named ones' outputs. As paddle's, it assumes the model's forward uses its
    direct sublayers once each, in the order they were registered, and flattens a 4-D input
    before a Linear (or a block starting with one), as a classifier's forward does."""

    def __init__(self, model: Layer, return_layers: Dict[str, str]) -> None:
        names = [name for name, _ in model.named_children()]
        missing = [name for name in return_layers if name not in names]
        if missing:
            raise ValueError(f"IntermediateLayerGetter: return_layers names {missing}, which are not direct "
                             f"sublayers of the model ({names})")
        wanted = {str(k) for k in return_layers}
        layers: "OrderedDict[str, Layer]" = OrderedDict()
        for name, layer in model.named_children():
            layers[name] = layer
            wanted.discard(name)
            if not wanted:
                break
        super().__init__(layers)
        self.return_layers = dict(return_layers)

    def forward(self, x: Any) -> "OrderedDict[str, Any]":
        out: "OrderedDict[str, Any]" = OrderedDict()
        for name, layer in self.items():
            sublayers = layer.sublayers()
            if x.ndim == 4 and (isinstance(layer, Linear) or (sublayers and isinstance(sublayers[0], Linear))):
                x = flatten(x, 1)
            x = layer(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out
