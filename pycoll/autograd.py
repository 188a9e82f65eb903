"""`pycoll.autograd`, the public face of autograd: `backward` from several tensors, `PyLayer`,
`jacobian`/`hessian` (`pycoll.jacobians`), `saved_tensors_hooks` (for PyLayer's saved tensors), and
the graph's controls (`no_grad`, `enable_grad`, `set_grad_enabled`, `is_grad_enabled`, `queue_callback`, `graph_leaves`).

The graph itself (its nodes, the backward walk and the rules for reusing gradient buffers) is in
`pycoll._graph`, which knows no Tensor class; this module is where Tensors meet it.
"""
from __future__ import annotations

import functools
import sys
import weakref
from typing import Any, Callable, List, Optional

from pycoll._complex_grads import conjugate_grads
from pycoll._py_layer_backward import user_backward
from pycoll._saved_tensors_hooks import pack_saved, saved_tensors_hooks, unpack_saved
from pycoll._graph import (RemovableHandle, enable_grad, graph_leaves, is_grad_enabled, no_grad,
                           queue_callback, record, run_backward, set_grad_enabled,
                           warn_nothing_to_differentiate)
from pycoll.device import array_module
from pycoll.grad_ops import grad
from pycoll.inplace_ops import LeafInplaceError, take
from pycoll.jacobians import Hessian, Jacobian, hessian, jacobian
from pycoll.tensor import Tensor, wrap

__all__ = ["once_differentiable", "Function", "Hessian", "Jacobian", "PyLayer", "PyLayerContext", "RemovableHandle", "backward", "enable_grad",
           "grad", "graph_leaves", "hessian", "is_grad_enabled", "jacobian", "no_grad", "queue_callback",
           "saved_tensors_hooks", "set_grad_enabled"]


def backward(tensors: Any, grad_tensors: Optional[Any] = None, retain_graph: bool = False) -> None:
    """Backward from several output tensors at once (paddle.autograd.backward). Tensors with
    stop_gradient=True are passed over, as ``Tensor.backward`` passes over one."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors] * len(tensors) if grad_tensors is None else [grad_tensors]
    grad_tensors = list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"grad_tensors must have one entry per tensor ({len(tensors)}), "
                         f"got {len(grad_tensors)}")
    wanted = [(t, g) for t, g in zip(tensors, grad_tensors) if not t.stop_gradient]
    if not wanted:
        warn_nothing_to_differentiate()
        return
    run_backward([t for t, _ in wanted], [g for _, g in wanted], retain_graph)


class PyLayerContext:
    """The `ctx` a PyLayer's forward and backward share, with paddle's settings a forward may make:
    `mark_non_differentiable`, `set_materialize_grads`, `set_grad_in_dtype_consistent` and
    `mark_not_inplace` (see each)."""

    container: Optional[tuple] = None  # paddle's names of what the methods below set
    non_differentiable: Optional[tuple] = None
    not_inplace_tensors: Optional[tuple] = None
    materialize_grads: bool = True
    grad_in_dtype_consistent: bool = True

    def __init__(self) -> None:
        self._saved: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = pack_saved(tensors)  # packed by the active saved_tensors_hooks, if any

    def saved_tensor(self) -> tuple:
        return tuple(t.tensor() if isinstance(t, _SavedOutput) else t for t in unpack_saved(self._saved))

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs of forward (these Tensors) that take no gradient: they come out with
        stop_gradient=True, and backward gets zeros for them (None without materialized grads)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """True (the default): backward gets zeros for an output no gradient reached; False: None."""
        self.materialize_grads = bool(value)

    def set_grad_in_dtype_consistent(self, flag: bool) -> None:
        """True (the default): backward gets each output's gradient in that output's dtype (cast
        if it arrives in another); False: as it arrives."""
        self.grad_in_dtype_consistent = bool(flag)

    def mark_not_inplace(self, *tensors: Tensor) -> None:
        """Inputs that forward may return as outputs without them changing in place: each such
        output is then a new Tensor. An input returned and not marked comes back as itself, its
        place in the graph now the PyLayer's output (paddle's in-place PyLayer)."""
        self.not_inplace_tensors = tensors


def _input_slots(args: tuple, kwargs: dict) -> List[Any]:
    """The inputs a PyLayer's backward returns gradients for, in paddle's order: each Tensor
    argument, or list/tuple of Tensors, positional ones first, then keyword ones in call order."""
    slots: List[Any] = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            slots.append(a)
        elif isinstance(a, (list, tuple)) and a and all(isinstance(t, Tensor) for t in a):
            slots.append(list(a))
    return slots


class PyLayer(PyLayerContext):
    """A user-defined op: subclass it with static `forward(ctx, *args, **kwargs)` and
    `backward(ctx, *grads)`.

    `forward` runs under no_grad and returns a Tensor or a tuple/list holding at least one Tensor
    (other values come back as they are). `backward` gets one gradient per Tensor output and returns
    one gradient per Tensor input of `forward` (a Tensor, an array or None; for an input that is a
    list of Tensors, a list of them), positional inputs first, then keyword ones in the order of the
    call, as a single value or a tuple.
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
        tensor_args = _input_slots(args, kwargs)  # this name, metas, cls and ctx: read by the create_graph rule
        inputs = [t for s in tensor_args for t in (s if isinstance(s, list) else [s])]
        versions = [t._version for t in inputs]
        with no_grad():
            outs = cls.forward(ctx, *args, **kwargs)
        if is_grad_enabled():
            _refuse_leaf_writes(cls, inputs, versions)
        single = isinstance(outs, Tensor)
        out_list = [outs] if single else list(outs) if isinstance(outs, (tuple, list)) else []
        if not any(isinstance(o, Tensor) for o in out_list):
            raise ValueError(f"{cls.__name__}.forward must return a Tensor or a tuple/list holding at least "
                            f"one Tensor, got {type(outs).__name__}")
        marked = {id(t) for t in ctx.non_differentiable or ()}
        # fresh Tensor objects, recorded as the node's outputs; an input returned is given its
        # fresh one's place in the graph below (so a leaf returned is never turned into a node)
        results = [wrap(o._array) if isinstance(o, Tensor) else o for o in out_list]
        tensor_outs = [r for r in results if isinstance(r, Tensor)]
        wanted = [i for i, o in enumerate(o for o in out_list if isinstance(o, Tensor)) if id(o) not in marked]
        if wanted:
            metas = [(o._array.shape, o._array.dtype, array_module(o._array)) for o in tensor_outs]
            shapes = [t._array.shape for t in inputs]

            def fn(grads: Any) -> list:
                return user_backward(cls, ctx, metas, wanted, tensor_args, shapes, grads)

            saved = [t for t in ctx._saved if isinstance(t, Tensor)]  # packed ones are the hooks' to keep
            conjugate_grads(fn)  # the user's backward gets the gradients as they are (paddle's PyLayer)
            record([tensor_outs[i] for i in wanted], fn, inputs, fresh=False, saved=saved)  # if an input needs one
            _saved_outputs_in_graph(ctx, out_list, results)
        results = _inputs_returned(ctx, inputs, out_list, results)
        if single:
            return results[0]
        return tuple(results) if isinstance(outs, tuple) else results


class _SavedOutput:
    """An output of a PyLayer's forward that forward also saved for backward: its array and,
    weakly (the node holds ctx, which holds this), the node that made it, with its place there.
    ``saved_tensor()`` gives it back as that output of the graph, so that a backward recorded
    under create_graph differentiates through it too (paddle's: the saved tensor is the output)."""

    __slots__ = ("array", "node", "index")

    def __init__(self, output: Tensor):
        self.array, self.node, self.index = output._array, weakref.ref(output.grad_node), output.output_index

    def tensor(self) -> Tensor:
        t = wrap(self.array)
        node = self.node()
        if node is not None:
            t.stop_gradient, t.grad_node, t.output_index = False, node, self.index
        return t


def _saved_outputs_in_graph(ctx: PyLayerContext, out_list: List[Any], results: List[Any]) -> None:
    """Each output forward returned and saved, kept in ctx as a `_SavedOutput` of the graph's
    output Tensor (``results``) that stands for it (packed ones are the hooks' to keep)."""
    recorded = {id(o): r for o, r in zip(out_list, results)
                if isinstance(o, Tensor) and getattr(r, "grad_node", None) is not None}
    if recorded:
        ctx._saved = tuple(_SavedOutput(recorded[id(t)]) if isinstance(t, Tensor) and id(t) in recorded else t
                           for t in ctx._saved)


def _refuse_leaf_writes(cls: type, inputs: List[Tensor], versions: List[int]) -> None:
    """A forward that changed in place an input leaf taking a gradient (a parameter) is refused,
    as the same op outside a PyLayer is (forward runs under no_grad, where it is not)."""
    for t, version in zip(inputs, versions):
        if t._version != version and not t.stop_gradient and t.grad_node is None:
            raise LeafInplaceError(f"{cls.__name__}.forward changed leaf tensor {t.name + ' ' if t.name else ''}in "
                                   f"place, which takes a gradient (stop_gradient=False); change a copy of it, "
                                   f"or change it under pycoll.no_grad() outside the PyLayer")


def _inputs_returned(ctx: PyLayerContext, inputs: List[Tensor], out_list: List[Any], results: List[Any]) -> List[Any]:
    """paddle's in-place PyLayer: an input that forward returns (not marked with mark_not_inplace,
    not a leaf that takes a gradient) comes back as itself, now the node's output in the graph
    (its later uses differentiate through the PyLayer's backward), as an in-place op's input does."""
    given = {id(t) for t in inputs} - {id(t) for t in ctx.not_inplace_tensors or ()}
    out = list(results)
    for i, o in enumerate(out_list):
        if isinstance(o, Tensor) and id(o) in given and (o.stop_gradient or o.grad_node is not None):
            if results[i].grad_node is not None:
                take(o, results[i])
                o._bump_inplace_version(memory_written=False)
            out[i] = o
    return out


Function = PyLayer  # paddle 3.3.1's torch-style name: paddle.autograd.Function is PyLayer


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """paddle's decorator for a PyLayer's ``backward``: it runs under ``no_grad``, so the gradients it
    returns are not themselves differentiable (a higher-order gradient stops there)."""
    @functools.wraps(backward)
    def wrapper(ctx: PyLayerContext, *args: Any) -> Any:
        with no_grad():
            return backward(ctx, *args)
    return wrapper


# paddle's module path of PyLayer: `from paddle.autograd.py_layer import PyLayer, once_differentiable`
py_layer = sys.modules[__name__ + ".py_layer"] = sys.modules[__name__]
