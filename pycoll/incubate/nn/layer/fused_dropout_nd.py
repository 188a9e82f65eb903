"""``paddle.incubate.nn.FusedDropout``: dropout over whole slices along ``axis`` (or of single
elements), paddle's fused ``dropout_nd`` layer; pycoll's ``nn.Dropout`` does the same."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from pycoll.nn.common import Dropout


class FusedDropout(Dropout):
    """``nn.Dropout(p, axis=axis, mode=mode)`` under paddle's fused name and signature (no
    ``inplace``)."""

    def __init__(self, p: float = 0.5, axis: Union[int, Sequence[int], None] = None,
                 mode: str = "upscale_in_train", name: Optional[str] = None):
        super().__init__(p, axis=axis, mode=mode, name=name)
