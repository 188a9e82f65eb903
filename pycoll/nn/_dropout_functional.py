"""paddle.nn.functional.dropout, dropout1d and dropout2d (masks from pycoll's generator, `pycoll.seed`)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from pycoll._fp_quiet import SILENT, restore, silence
from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, op_output
from pycoll.device import move, place_of
from pycoll.inplace_ops import in_place
from pycoll.math_ops import scale
from pycoll.random import get_rng
from pycoll.shape_ops import clone
from pycoll.tensor import Tensor

__all__ = ["dropout", "dropout1d", "dropout2d"]


def drop_probability(fn: str, p: Any) -> float:
    """A dropout probability: a number in [0, 1], or a Tensor of one (paddle's ``p: float|int|
    Tensor``), as a float; TypeError / ValueError naming op or layer ``fn`` otherwise."""
    if isinstance(p, Tensor) and p.size == 1 and p.dtype.kind in "iuf":
        p = p.item()
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"{fn}: p must be a number or a Tensor of one, got {type(p).__name__}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: p must be in [0, 1], got {p}")
    return float(p)


@param_aliases({"input": "x"})
def dropout(x: Tensor, p: float = 0.5, axis: Union[int, Sequence[int], None] = None, training: bool = True,
            inplace: bool = False, mode: str = "upscale_in_train", name: Optional[str] = None) -> Tensor:
    """Zero elements with probability p while training (paddle's signature and modes).

    ``axis`` None drops each element on its own; an axis (or a list of axes, each in [0, x.ndim))
    draws the mask over those axes only and shares it along the others (whole channels). With
    ``mode='upscale_in_train'`` the kept elements are scaled by 1/(1-p) while training and x passes
    unchanged otherwise (a copy without an axis, as paddle's; x itself with one, or at p = 0); with
    ``'downscale_in_infer'`` training only masks and inference scales x by 1-p. The mask comes from
    pycoll's generator (``pycoll.seed``). With `inplace` (axis None only, as paddle's) x takes the
    result and is returned (pycoll.inplace_ops' rules)."""
    p = drop_probability("dropout", p)
    if mode not in ("upscale_in_train", "downscale_in_infer"):
        raise ValueError(f"dropout: mode must be 'upscale_in_train' or 'downscale_in_infer', got {mode!r}")
    if inplace:
        if axis is not None:
            raise NotImplementedError(f"dropout: inplace=True works with axis=None only (paddle's rule), got "
                                      f"axis={axis!r}")
        return in_place(x, "dropout", lambda: dropout(x, p, None, training, False, mode))
    x = as_tensor(x)
    if p == 0:
        return x
    if x.dtype.kind in "biu":
        raise TypeError(f"dropout: x must hold floating-point numbers, got dtype {x.dtype} (paddle has no integer "
                        f"dropout either)")
    if not training:  # paddle's kernel (axis None) gives a new tensor: an in-place op on an
        # evaluation's output (a position table's, a parameter's) must not write into the model;
        # with an axis (dropout2d/3d) its Python path gives x itself
        if mode == "downscale_in_infer":
            return scale(x, 1.0 - p)
        return clone(x) if axis is None else x
    a = x._array
    shape = a.shape
    if axis is not None:
        axes = [axis] if isinstance(axis, int) else list(axis)
        if not axes or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < a.ndim for i in axes):
            raise ValueError(f"dropout: axis must be ints in [0, {a.ndim}), got {axis!r}")
        shape = tuple(n if i in axes else 1 for i, n in enumerate(a.shape))
    keep = get_rng().random(shape, dtype=np.float32) >= p
    factor = (1.0 / (1.0 - p) if p < 1.0 else 0.0) if mode == "upscale_in_train" else 1.0
    mask = move((keep * factor).astype(a.dtype), place_of(a))
    # a dropped inf or NaN gives NaN, silently: paddle's answer with an axis; without one paddle's
    # kernel selects and gives 0, which NumPy's where would make ~10x slower on a random mask
    saved = silence(SILENT)
    try:
        out = a * mask  # a dropped negative is -0 (paddle's select gives +0: a second pass to match)
    finally:
        restore(saved)
    return op_output(out, lambda g: (g * mask,), x)


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True, data_format: str = "NCHW",
              name: Optional[str] = None) -> Tensor:
    """Zero whole channels of x [N, C, H, W] (or NHWC) with probability p: `dropout` with the
    mask drawn over the batch and channel axes, in mode 'upscale_in_train'."""
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"dropout2d: x must have 4 dimensions, got shape {x.shape}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"dropout2d: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    return dropout(x, p, [0, 1] if data_format == "NCHW" else [0, 3], training)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of input [N, C, L] (or unbatched [C, L]) with probability p: `dropout`
    with the mask drawn over the batch and channel axes, in mode 'upscale_in_train'. With
    `inplace` input takes the result and is returned."""
    if inplace:
        return in_place(input, "dropout1d", lambda: dropout1d(input, p, training, False))
    x = as_tensor(input)
    if x.ndim not in (2, 3):
        raise ValueError(f"dropout1d: input must be 2-D [C, L] or 3-D [N, C, L], got shape {x.shape}")
    return dropout(x, p, [0] if x.ndim == 2 else [0, 1], training)
