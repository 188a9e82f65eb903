"""paddle.nn.functional.bilinear: out[n, o] = x1[n] W[o] x2[n] + b[o], one op with its
hand-written backward (weight [out_features, in1_features, in2_features], bias [1, out])."""
from __future__ import annotations

from typing import Any, Optional

from pycoll._tensor_ops import as_tensor, needs_grad, op_output, placed
from pycoll.device import array_module
from pycoll.tensor import Tensor

__all__ = ["bilinear"]


def bilinear(x1: Tensor, x2: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
             name: Optional[str] = None) -> Tensor:
    """x1 [N, in1] and x2 [N, in2] through weight [out, in1, in2] (plus bias [1, out]): [N, out]."""
    fn = "bilinear"
    x1, x2, weight = placed("_all_whole", as_tensor(x1), as_tensor(x2), as_tensor(weight))  # auto-parallel
    a, b, w = x1._array, x2._array, weight._array
    if w.ndim != 3 or a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0] \
            or a.shape[1] != w.shape[1] or b.shape[1] != w.shape[2]:
        raise ValueError(f"{fn}: x1 must be [N, in1], x2 [N, in2] and weight [out, in1, in2]; got {list(a.shape)}, "
                         f"{list(b.shape)} and {list(w.shape)}")
    if bias is not None:
        bias = as_tensor(bias)
        if bias.size != w.shape[0]:
            raise ValueError(f"{fn}: bias must hold out_features={w.shape[0]} values ([1, out]), got shape "
                             f"{bias.shape}")
    xp = array_module(a)
    out = xp.einsum("ni,oij,nj->no", a, w, b)
    if bias is not None:
        out = out + bias._array.reshape(1, -1)
    r1, r2, rw, rb = needs_grad(x1), needs_grad(x2), needs_grad(weight), needs_grad(bias)
    bias_shape = None if bias is None else bias._array.shape

    def backward(g: Any) -> tuple:
        g1 = xp.einsum("no,oij,nj->ni", g, w, b) if r1 else None
        g2 = xp.einsum("no,oij,ni->nj", g, w, a) if r2 else None
        gw = xp.einsum("no,ni,nj->oij", g, a, b) if rw else None
        gb = g.sum(axis=0).reshape(bias_shape) if rb else None
        return g1, g2, gw, gb
    return op_output(out.astype(a.dtype, copy=False), backward, x1, x2, weight, bias)
