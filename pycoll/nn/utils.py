"""paddle.nn.utils: clipping gradients in place outside an optimizer (``clip_grad_norm_``,
``clip_grad_value_``, torch's names too) and parameters to one vector and back; weight_norm,
remove_weight_norm and spectral_norm live in `pycoll.nn.weight_norms`."""
from __future__ import annotations

from typing import Any, Iterable, List, Union

import numpy as np

from pycoll.device import array_module
from pycoll.nn.weight_norms import remove_weight_norm, spectral_norm, weight_norm
from pycoll.tensor import Tensor, wrap

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "weight_norm",
           "remove_weight_norm", "spectral_norm"]

_NORM_TYPES = (float("inf"), 0.0, 1.0, 2.0)


def _param_list(parameters: Union[Tensor, Iterable[Tensor]], fn: str) -> List[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"{fn}: parameters[{i}] is a {type(p).__name__}; pass Tensors (model.parameters())")
    return params


def _norm(a: Any, norm_type: float) -> float:
    """The ``norm_type`` norm of all of ``a``'s elements, in float64 on the host."""
    xp = array_module(a)
    wide = a.astype(np.float64)
    if norm_type == float("inf"):
        return float(xp.abs(wide).max()) if a.size else 0.0
    if norm_type == 0.0:
        return float(xp.count_nonzero(wide))
    return float((xp.abs(wide) ** norm_type).sum() ** (1.0 / norm_type))


def clip_grad_norm_(parameters: Union[Tensor, Iterable[Tensor]], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients of ``parameters``, in place, so that their ``norm_type`` norm taken
    together (norm_type inf, 0, 1 or 2) is at most ``max_norm``: each is multiplied by
    ``min(1, max_norm / (total + 1e-6))``, as paddle's. Returns the total norm before clipping,
    a 0-d Tensor of the gradients' dtype. A non-finite total raises with ``error_if_nonfinite``."""
    fn = "clip_grad_norm_"
    params = _param_list(parameters, fn)
    if norm_type not in _NORM_TYPES:
        raise ValueError(f"{fn}: norm_type={norm_type!r}; paddle supports {list(_NORM_TYPES)}")
    norm_type, max_norm = float(norm_type), float(max_norm)
    grads = [p.grad.array for p in params if p.grad is not None]
    if not grads:
        return wrap(np.asarray(0.0, np.float32))
    norms = [_norm(g, norm_type) for g in grads]
    if norm_type == float("inf"):
        total = max(norms)
    elif norm_type == 0.0:
        total = float(sum(n != 0 for n in norms))  # paddle's: the 0-"norm" of the norms
    else:
        total = sum(n ** norm_type for n in norms) ** (1.0 / norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"{fn}: the total norm of order {norm_type} of the gradients is non-finite ({total}), "
                           f"so it cannot be clipped; pass error_if_nonfinite=False to scale them by it anyway")
    coef = min(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        g *= g.dtype.type(coef)
    xp = array_module(grads[0])
    return wrap(xp.asarray(total, dtype=grads[0].dtype))


def clip_grad_value_(parameters: Union[Tensor, Iterable[Tensor]], clip_value: float) -> None:
    """Clip every gradient element of ``parameters`` into ``[-clip_value, clip_value]``, in place."""
    limit = float(clip_value)
    for p in _param_list(parameters, "clip_grad_value_"):
        if p.grad is not None:
            g = p.grad.array
            array_module(g).clip(g, -limit, limit, out=g)


def parameters_to_vector(parameters: Iterable[Tensor], name: Any = None) -> Tensor:
    """The parameters' values, flattened and concatenated into one 1-D Tensor (a copy). As
    paddle's, the result is a new leaf with stop_gradient=False whatever the parameters are: a
    backward through it fills its own ``.grad`` and gives the parameters none. The parameters must
    share one dtype."""
    params = _param_list(parameters, "parameters_to_vector")
    if not params:
        raise ValueError("parameters_to_vector: parameters is empty")
    for i, p in enumerate(params):
        if p.array.dtype != params[0].array.dtype:
            raise ValueError(f"parameters_to_vector: parameters[{i}] has dtype {p.array.dtype}, parameters[0] "
                             f"{params[0].array.dtype}; they must share one dtype")
    xp = array_module(params[0].array)
    out = wrap(xp.concatenate([p.array.reshape(-1) for p in params]))
    out.stop_gradient = False
    return out


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor], name: Any = None) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters``, outside the graph (the
    inverse of ``parameters_to_vector``). As paddle's, ``vec`` may be longer than the parameters'
    total (the rest is unused), and a parameter takes ``vec``'s dtype when it differs."""
    params = _param_list(parameters, "vector_to_parameters")
    flat = vec.array if isinstance(vec, Tensor) else vec
    total = sum(p.array.size for p in params)
    if flat.ndim != 1 or flat.size < total:
        raise ValueError(f"vector_to_parameters: vec must be 1-D with at least {total} elements (the parameters' "
                         f"total), got shape {list(flat.shape)}")
    start = 0
    for p in params:
        n = p.array.size
        piece = flat[start:start + n].reshape(p.array.shape)
        if piece.dtype == p.array.dtype:
            p.array[...] = piece
            p._bump_inplace_version()
        else:
            p._array = piece.copy()
        start += n
