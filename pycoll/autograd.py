"""`pycoll.autograd`, the public face of autograd: `backward` from several tensors, `PyLayer`,
`jacobian`/`hessian` (`pycoll.jacobians`), `saved_tensors_hooks` (for PyLayer's saved tensors), and
the graph's controls (`no_grad`, `enable_grad`, `set_grad_enabled`, `is_grad_enabled`, `queue_callback`, `graph_leaves`).

The graph itself (its nodes, the backward walk and the rules for reusing gradient buffers) is in
`pycoll._graph`, which knows no Tensor class; this module is where Tensors meet it.
"""
from __future__ import annotations

from typing import Any, Optional

from pycoll._complex_grads import conjugate_grads
from pycoll._saved_tensors_hooks import pack_saved, saved_tensors_hooks, unpack_saved
from pycoll._graph import (RemovableHandle, enable_grad, graph_leaves, is_grad_enabled, no_grad,
                           queue_callback, record, run_backward, set_grad_enabled)
from pycoll.device import array_module
from pycoll.grad_ops import grad
from pycoll.jacobians import Hessian, Jacobian, hessian, jacobian
from pycoll.tensor import Tensor, wrap

__all__ = ["Function", "Hessian", "Jacobian", "PyLayer", "PyLayerContext", "RemovableHandle", "backward", "enable_grad",
           "grad", "graph_leaves", "hessian", "is_grad_enabled", "jacobian", "no_grad", "queue_callback",
           "saved_tensors_hooks", "set_grad_enabled"]


def backward(tensors: Any, grad_tensors: Optional[Any] = None, retain_graph: bool = False) -> None:
    """Backward from several output tensors at once (paddle.autograd.backward)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors] * len(tensors) if grad_tensors is None else [grad_tensors]
    grad_tensors = list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"grad_tensors must have one entry per tensor ({len(tensors)}), "
                         f"got {len(grad_tensors)}")
    run_backward(tensors, grad_tensors, retain_graph)


class PyLayerContext:
    """The `ctx` a PyLayer's forward and backward share."""

    def __init__(self) -> None:
        self._saved: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = pack_saved(tensors)  # packed by the active saved_tensors_hooks, if any

    def saved_tensor(self) -> tuple:
        return unpack_saved(self._saved)


class PyLayer:
    """A user-defined op: subclass it with static `forward(ctx, *args)` and `backward(ctx, *grads)`.

    `forward` runs under no_grad and returns a Tensor or a tuple/list of Tensors. `backward` gets
    one gradient Tensor per output and returns one gradient per Tensor argument of `forward`
    (a Tensor, an array or None), as a single value or a tuple.
    """

    @staticmethod
    def forward(ctx: PyLayerContext, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a PyLayer subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx: PyLayerContext, *grads: Any) -> Any:
        raise NotImplementedError("a PyLayer subclass must define backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = PyLayerContext()
        with no_grad():
            outs = cls.forward(ctx, *args, **kwargs)
        single = isinstance(outs, Tensor)
        out_list = [outs] if single else list(outs)
        for o in out_list:
            if not isinstance(o, Tensor):
                raise TypeError(f"{cls.__name__}.forward must return Tensors, got {type(o).__name__}")
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        # fresh Tensor objects, so a forward that returns its input never turns a leaf into a node
        results = [wrap(o._array) for o in out_list]
        metas = [(r._array.shape, r._array.dtype, array_module(r._array)) for r in results]
        shapes = [a._array.shape for a in tensor_args]

        def fn(grads: Any) -> list:
            grads = [grads] if len(metas) == 1 else grads
            dys = [wrap(g if g is not None else xp.zeros(shape, dtype))
                   for g, (shape, dtype, xp) in zip(grads, metas)]
            with no_grad():
                got = cls.backward(ctx, *dys)
            got = list(got) if isinstance(got, (tuple, list)) else [got]
            if len(got) != len(tensor_args):
                raise ValueError(
                    f"{cls.__name__}.backward must return {len(tensor_args)} gradient(s), one per "
                    f"Tensor input, got {len(got)}")
            arrays = []
            for i, g in enumerate(got):
                g = g._array if isinstance(g, Tensor) else g
                if g is not None and tuple(g.shape) != shapes[i]:
                    raise ValueError(
                        f"{cls.__name__}.backward returned a gradient of shape {list(g.shape)} "
                        f"for input {i} of shape {list(shapes[i])}")
                arrays.append(g)
            return arrays

        saved = [t for t in ctx._saved if isinstance(t, Tensor)]  # packed ones are the hooks' to keep
        conjugate_grads(fn)  # the user's backward gets the gradients as they are (paddle's PyLayer)
        record(results, fn, tensor_args, fresh=False, saved=saved)  # if an input needs a gradient
        if single:
            return results[0]
        return tuple(results) if isinstance(outs, tuple) else results


Function = PyLayer  # paddle 3.3.1's torch-style name: paddle.autograd.Function is PyLayer
