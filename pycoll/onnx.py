"""paddle's ``paddle.onnx.export``. Paddle hands the layer to paddle2onnx, which traces it into a
static program and writes that as ONNX; pycoll runs eagerly and has no static program to trace, so
there is nothing it can give paddle2onnx: ``export`` raises paddle's ImportError where paddle2onnx
is absent, and NotImplementedError where it is installed (its converter takes paddle Layers only)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from pycoll.utils.lazy_import import try_import

__all__ = ["export"]

# paddle 3.3.1's text for a missing paddle2onnx (its try_import's)
_NO_PADDLE2ONNX = ("Failed importing paddle2onnx. This likely means that some paddle modules require additional "
                   "dependencies that have to be manually installed (usually with `pip install paddle2onnx`). ")


def export(layer: Any, path: str, input_spec: Optional[Sequence[Any]] = None, opset_version: int = 9,
           **configs: Any) -> None:
    """Refused: pycoll has no static program to export to ONNX (see the module's docstring).
    ImportError with paddle's message without paddle2onnx, NotImplementedError with it."""
    try_import("paddle2onnx", _NO_PADDLE2ONNX)
    raise NotImplementedError("onnx.export: paddle2onnx converts paddle's static programs, and pycoll runs eagerly "
                              "with none to give it; export the model with paddle itself")
