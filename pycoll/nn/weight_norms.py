"""Reparameterised weights, as paddle.nn.utils has them: weight_norm / remove_weight_norm
(w = g * v / ||v||, parameters ``<name>_g`` and ``<name>_v``) and spectral_norm (w = w_orig /
sigma(w_orig), parameter ``<name>_orig`` and power-iteration buffers ``<name>_u``, ``<name>_v``),
each recomputing the weight in a forward pre-hook before every forward, as paddle's do; and the
nn.SpectralNorm layer, which normalises the weight it is given."""
from __future__ import annotations

from typing import Any, List

import numpy as np

from pycoll import _graph
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.math_ops import divide, multiply, sqrt, square, sum
from pycoll.nn.initializer import Normal
from pycoll.nn.layer import Layer
from pycoll.nn.parameter import ParamAttr
from pycoll.product_ops import dot, mv
from pycoll.shape_ops import reshape, transpose
from pycoll.tensor import Tensor, wrap

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "SpectralNorm"]


def _front(ndim: int, dim: int) -> List[int]:
    """The permutation that brings axis `dim` to the front, the others in order."""
    return [dim] + [d for d in range(ndim) if d != dim]


def _per_slice_norm(w: Tensor, dim: int) -> Tensor:
    """sqrt(sum of squares + 1e-12) of each slice of w along `dim` (of all of w for dim -1),
    paddle's norm_except_dim."""
    if dim == -1:
        return sqrt(sum(square(w)) + 1e-12)
    rows = reshape(transpose(w, _front(w.ndim, dim)), [w.shape[dim], -1])
    return sqrt(sum(square(rows), axis=1) + 1e-12)


def _weight_from(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """g * v / ||v||, the norm per slice along `dim` (of all of v for -1), clipped at 1e-12 as
    paddle's normalize clips it (for -1: 1e-12 added)."""
    if dim == -1:
        return multiply(divide(v, sqrt(sum(square(v))) + 1e-12), g)
    perm = _front(v.ndim, dim)
    rows = reshape(transpose(v, perm), [v.shape[dim], -1])
    norm = sqrt(sum(square(rows), axis=1, keepdim=True))
    unit = divide(rows, norm.clip(min=1e-12))
    moved = [v.shape[d] for d in perm]
    back = [int(i) for i in np.argsort(perm)]
    scaled = multiply(reshape(unit, moved), reshape(g, [-1] + [1] * (v.ndim - 1)))
    return transpose(scaled, back)


def _copy_parameter(layer: Layer, name: str, value: Tensor) -> None:
    """Register a new Parameter `name` on `layer` holding `value`'s values."""
    p = layer.create_parameter(list(value.shape), dtype=value.dtype)
    with _graph.no_grad():
        p.set_value(value.detach())
    layer.add_parameter(name, p)


class WeightNorm:
    """The forward pre-hook of weight_norm: sets ``layer.<name>`` from ``<name>_g``/``<name>_v``."""

    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, dim

    def compute_weight(self, layer: Layer) -> Tensor:
        return _weight_from(getattr(layer, self.name + "_v"), getattr(layer, self.name + "_g"), self.dim)

    def __call__(self, layer: Layer, inputs: Any) -> None:
        setattr(layer, self.name, self.compute_weight(layer))


def _hooks_of(layer: Layer, kind: type, name: str) -> List[Any]:
    return [k for k, hook in layer._forward_pre_hooks.items() if isinstance(hook, kind) and hook.name == name]


def _parameter_of(layer: Layer, name: str, fn: str) -> Tensor:
    if not isinstance(layer, Layer):
        raise TypeError(f"{fn}: layer must be a Layer, got {type(layer).__name__}")
    w = layer._parameters.get(name)
    if w is None:
        raise ValueError(f"{fn}: {type(layer).__name__} has no parameter {name!r} (it has "
                         f"{list(layer._parameters)})")
    return w


def weight_norm(layer: Layer, name: str = "weight", dim: int = 0) -> Layer:
    """Replace parameter `name` of `layer` by ``<name>_g`` (the norm of each slice along `dim`;
    dim None or -1: of the whole weight) and ``<name>_v`` (the weight), the weight being
    g * v / ||v|| again before each forward. Returns the layer."""
    fn = "weight_norm"
    if _hooks_of(layer, WeightNorm, name):  # (before the parameter's lookup: it is gone by now)
        raise RuntimeError(f"{fn}: parameter {name!r} already has a weight_norm hook")
    w = _parameter_of(layer, name, fn)
    dim = -1 if dim is None else dim
    if isinstance(dim, bool) or not isinstance(dim, int) or not -w.ndim <= dim < w.ndim:
        raise ValueError(f"{fn}: dim must be an int in [-{w.ndim}, {w.ndim}) or None, got {dim!r}")
    if dim != -1:
        dim %= w.ndim
    hook = WeightNorm(name, dim)
    del layer._parameters[name]
    with _graph.no_grad():
        g = _per_slice_norm(w, dim)
    _copy_parameter(layer, name + "_v", w)
    _copy_parameter(layer, name + "_g", g)
    setattr(layer, name, hook.compute_weight(layer))
    layer.register_forward_pre_hook(hook)
    return layer


def remove_weight_norm(layer: Layer, name: str = "weight") -> Layer:
    """Undo weight_norm: parameter `name` holds g * v / ||v|` again, ``<name>_g``/``_v`` go."""
    keys = _hooks_of(layer, WeightNorm, name) if isinstance(layer, Layer) else []
    if not keys:
        raise ValueError(f"remove_weight_norm: no weight_norm of {name!r} on {type(layer).__name__}")
    hook = layer._forward_pre_hooks.pop(keys[0])
    with _graph.no_grad():
        w = hook.compute_weight(layer)
    delattr(layer, name)
    del layer._parameters[name + "_g"], layer._parameters[name + "_v"]
    object.__delattr__(layer, name + "_g")
    object.__delattr__(layer, name + "_v")
    _copy_parameter(layer, name, w)
    return layer


def _unit(a: Any, eps: float, added: bool) -> Any:
    """a / ||a||: the norm clipped below at eps (paddle's normalize), or with eps added (its
    spectral_norm kernel)."""
    xp = array_module(a)
    n = xp.sqrt((a * a).sum())
    return a / (n + eps if added else xp.maximum(n, eps))


def _power_iterate(mat: Any, u: Any, v: Any, iters: int, eps: float, added: bool) -> tuple:
    """`iters` rounds of v = unit(W^T u), u = unit(W v) on arrays; returns (u, v)."""
    for _ in range(iters):
        v = _unit(mat.T @ u, eps, added)
        u = _unit(mat @ v, eps, added)
    return u, v


def _as_matrix(w: Tensor, dim: int) -> Tensor:
    moved = transpose(w, _front(w.ndim, dim)) if dim != 0 else w
    return reshape(moved, [w.shape[dim], -1])


def _divided_by_sigma(w: Tensor, mat: Tensor, u: Any, v: Any) -> Tensor:
    """w / (u . W v), u and v constants (no gradient flows through the power iteration)."""
    return divide(w, dot(wrap(u), mv(mat, wrap(v))))


class SpectralNormHook:
    """The forward pre-hook of spectral_norm: one power-iteration step per training forward
    (u and v updated in place), then ``layer.<name>`` = ``<name>_orig`` / sigma."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float):
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, layer: Layer, do_power_iteration: bool) -> Tensor:
        w = getattr(layer, self.name + "_orig")
        u_buf, v_buf = getattr(layer, self.name + "_u"), getattr(layer, self.name + "_v")
        mat = _as_matrix(w, self.dim)
        u, v = u_buf._array, v_buf._array
        if do_power_iteration:
            u, v = _power_iterate(mat._array, u, v, self.n_power_iterations, self.eps, added=False)
            with _graph.no_grad():
                u_buf.set_value(wrap(u.copy()))
                v_buf.set_value(wrap(v.copy()))
        return _divided_by_sigma(w, mat, u.copy(), v.copy())

    def __call__(self, layer: Layer, inputs: Any) -> None:
        setattr(layer, self.name, self.compute_weight(layer, do_power_iteration=layer.training))


def spectral_norm(layer: Layer, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: Any = None) -> Layer:
    """Divide parameter `name` of `layer` by its largest singular value, estimated by power
    iteration before each forward (one step of `n_power_iterations` per training forward). The
    weight is seen as a matrix with axis `dim` first (None: 1 for Linear and the transposed
    convolutions, whose output axis is 1, else 0). Registers ``<name>_orig`` (the parameter) and
    buffers ``<name>_u``, ``<name>_v`` (unit vectors drawn from N(0, 1)). Returns the layer."""
    fn = "spectral_norm"
    if _hooks_of(layer, SpectralNormHook, name):  # (before the parameter's lookup: it is gone by now)
        raise RuntimeError(f"{fn}: parameter {name!r} already has a spectral_norm hook")
    w = _parameter_of(layer, name, fn)
    if isinstance(n_power_iterations, bool) or not isinstance(n_power_iterations, int) or n_power_iterations <= 0:
        raise ValueError(f"{fn}: n_power_iterations must be a positive int, got {n_power_iterations!r}")
    if dim is None:
        from pycoll.nn.common import Linear
        from pycoll.nn.conv_transpose import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
        dim = 1 if isinstance(layer, (Linear, Conv1DTranspose, Conv2DTranspose, Conv3DTranspose)) else 0
    if isinstance(dim, bool) or not isinstance(dim, int) or not -w.ndim <= dim < w.ndim:
        raise ValueError(f"{fn}: dim must be an int in [-{w.ndim}, {w.ndim}) or None, got {dim!r}")
    hook = SpectralNormHook(name, n_power_iterations, dim % w.ndim, eps)
    h = w.shape[hook.dim]
    draws = [layer.create_parameter([n], dtype=w.dtype, default_initializer=Normal(0.0, 1.0))
             for n in (h, w.size // h)]
    u, v = (wrap(_unit(p._array, eps, added=False)) for p in draws)
    del layer._parameters[name]
    object.__delattr__(layer, name)
    layer.add_parameter(name + "_orig", w)
    setattr(layer, name, w * 1.0)
    layer.register_buffer(name + "_u", u)
    layer.register_buffer(name + "_v", v)
    layer.register_forward_pre_hook(hook)
    return layer


class SpectralNorm(Layer):
    """paddle.nn.SpectralNorm: forward(weight) is weight / sigma(weight), sigma estimated by
    `power_iters` power-iteration steps (norms with eps added, paddle's kernel) from the
    parameters weight_u [h] and weight_v [w] (N(0, 1), no gradient), which are not updated."""

    def __init__(self, weight_shape: Any, dim: int = 0, power_iters: int = 1, eps: float = 1e-12,
                 dtype: DTypeLike = "float32"):
        super().__init__()
        shape = [int(s) for s in weight_shape]
        if not shape or min(shape) < 1:
            raise ValueError(f"SpectralNorm: weight_shape must be positive sizes, got {weight_shape!r}")
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < len(shape):
            raise ValueError(f"SpectralNorm: dim must be an int in [0, {len(shape)}), got {dim!r}")
        if isinstance(power_iters, bool) or not isinstance(power_iters, int) or power_iters < 0:
            raise ValueError(f"SpectralNorm: power_iters must be an int >= 0, got {power_iters!r}")
        self._weight_shape, self._dim, self._power_iters, self._eps = shape, dim, power_iters, eps
        self._dtype = convert_dtype(dtype)
        h = shape[dim]
        self.weight_u = self.create_parameter([h], attr=ParamAttr(), dtype=dtype,
                                              default_initializer=Normal(0.0, 1.0))
        self.weight_v = self.create_parameter([int(np.prod(shape)) // h], attr=ParamAttr(), dtype=dtype,
                                              default_initializer=Normal(0.0, 1.0))
        self.weight_u.stop_gradient = self.weight_v.stop_gradient = True

    def forward(self, x: Tensor) -> Tensor:
        w = as_tensor(x)
        if w.shape != self._weight_shape:
            raise ValueError(f"SpectralNorm: x must have weight_shape {self._weight_shape}, got {w.shape}")
        mat = _as_matrix(w, self._dim)
        u, v = _power_iterate(mat._array, self.weight_u._array, self.weight_v._array, self._power_iters,
                              self._eps, added=True)
        return _divided_by_sigma(w, mat, u, v)


