"""``paddle.incubate.autograd``: functional autograd over a function of tensors, as older PINN
code uses it — `vjp`, `jvp` (the double-backward trick), and `Jacobian`/`Hessian` of a function.

Each evaluates ``func`` on copies of `xs` (paddle's ``_separate``): the results differentiate
along ``func`` alone, and can be differentiated again (they are create_graph gradients). Unlike ``pycoll.autograd.jacobian``, a `Jacobian` here takes
inputs and outputs of any shape: all of them flattened and joined, [M, N] (batched: [B, M, N]).
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence, Union

from pycoll.creation import zeros_like
from pycoll.grad_ops import grad
from pycoll.jacobians import Jacobian as _Jacobian
from pycoll.shape_ops import concat, reshape
from pycoll.tensor import Tensor

TensorOrTensors = Union[Tensor, Sequence[Tensor]]

__all__ = ["Hessian", "Jacobian", "jvp", "vjp", "enable_prim", "disable_prim", "prim_enabled", "forward_grad"]


def _tensors(v: TensorOrTensors, name: str) -> List[Tensor]:
    items = [v] if isinstance(v, Tensor) else list(v) if isinstance(v, (list, tuple)) else None
    if not items or not all(isinstance(t, Tensor) for t in items):
        raise TypeError(f"{name} must be a Tensor or a sequence of Tensors, got {type(v).__name__}")
    return items


def _separated(xs: TensorOrTensors) -> List[Tensor]:
    """Copies of `xs` that take a gradient: a recorded copy of one that does (a gradient by the
    copy sums only func's paths, and a later one reaches the original: a Hessian's rows), else a
    detached one (paddle's ``_separate``)."""
    out = []
    for x in _tensors(xs, "xs"):
        if x.stop_gradient:
            x = x.detach()
            x.stop_gradient = False
        else:
            x = x.clone()
        out.append(x)
    return out


def _called(func: Callable[..., Any], xs: List[Tensor]) -> Any:
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    return func(*xs)


def _grads(ys: Any, xs: List[Tensor], v: Any) -> List[Tensor]:
    """create_graph gradients of ys (seeded with v) by xs; zeros where the graph does not reach."""
    ys = _tensors(ys, "func's output")
    seeds = None if v is None else _tensors(v, "v")
    if seeds is not None and len(seeds) != len(ys):
        raise ValueError(f"v must hold one Tensor per output of func ({len(ys)}), got {len(seeds)}")
    got = grad(ys, xs, seeds, create_graph=True, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(got, xs)]


def _like(xs: TensorOrTensors, values: List[Tensor]) -> Any:
    return values[0] if isinstance(xs, Tensor) else tuple(values)


def vjp(func: Callable[..., Any], xs: TensorOrTensors, v: Any = None) -> tuple:
    """(func(xs), v^T J): the vector-Jacobian product, v defaulting to ones."""
    inputs = _separated(xs)
    ys = _called(func, inputs)
    return ys, _like(xs, _grads(ys, inputs, v))


def jvp(func: Callable[..., Any], xs: TensorOrTensors, v: Any = None) -> tuple:
    """(func(xs), J v): the Jacobian-vector product, v (shaped like xs) defaulting to ones,
    computed by differentiating a vector-Jacobian product by its cotangent."""
    inputs = _separated(xs)
    ys = _called(func, inputs)
    cotangents = []
    for y in _tensors(ys, "func's output"):
        c = zeros_like(y)
        c.stop_gradient = False
        cotangents.append(c)
    xs_grads = _grads(ys, inputs, cotangents)
    return ys, _like(ys, _grads(xs_grads, cotangents, v))


class Jacobian(_Jacobian):
    """The Jacobian of ``func`` at `xs`: its outputs flattened and joined (rows) by its inputs
    flattened and joined (columns); ``is_batched``: axis 0 of every input and output is a batch."""

    def __init__(self, func: Callable[..., Any], xs: TensorOrTensors, is_batched: bool = False):
        inputs = _separated(xs)
        ys = _tensors(_called(func, inputs), "func's output")
        flat = [reshape(y, [y.shape[0], -1] if is_batched else [-1]) for y in ys]
        super().__init__(flat[0] if len(flat) == 1 else concat(flat, axis=-1), inputs, is_batched, any_shape=True)
        self.shape = tuple(self.shape)  # incubate's is a tuple (paddle.autograd's a list)


class Hessian(_Jacobian):
    """The Hessian of a one-element ``func`` (one element per batch entry with ``is_batched``) at
    `xs`: the Jacobian of its gradient, [N, N] (batched: [B, N, N])."""

    def __init__(self, func: Callable[..., Any], xs: TensorOrTensors, is_batched: bool = False):
        def gradient(*inputs: Tensor) -> Tensor:
            jac = Jacobian(func, list(inputs), is_batched)
            if jac.shape[1 if is_batched else 0] != 1:
                raise RuntimeError("The function given to Hessian should return a single element Tensor "
                                   "(a single element per batch entry when batched)")
            return jac[:, 0, :] if is_batched else jac[0, :]
        inputs = _separated(xs)
        rows = gradient(*inputs)
        super().__init__(rows, inputs, is_batched, any_shape=True)
        self.shape = tuple(self.shape)


def _static_only(name: str) -> Callable[..., Any]:
    """paddle's primitive-operator API, which its dygraph mode refuses (it asserts static mode):
    pycoll, always eager, refuses it so, saying what serves instead."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"paddle.incubate.autograd.{name}() is only supported in paddle's static graph "
                           f"mode (paddle asserts it too); pycoll runs eagerly: use pycoll.grad, or vjp/jvp/"
                           f"Jacobian/Hessian here")
    refuse.__name__ = refuse.__qualname__ = name
    return refuse


enable_prim, disable_prim, prim_enabled, forward_grad = (
    _static_only(name) for name in ("enable_prim", "disable_prim", "prim_enabled", "forward_grad"))

