"""Gradient hooks and gradients on demand: ``Tensor.register_hook``, ``Tensor.retain_grads`` and
``pycoll.grad``, built on `pycoll._graph`'s walk without changing it.

* A hook on a leaf runs when the leaf's gradient of a backward is final, before it is added into
  ``.grad``: ``Tensor.finish_grad`` (the graph's last call on a leaf) runs the hooks kept in the
  leaf's ``_grad_hooks``.
* A hook on an op's output runs on that output's gradient before the op's backward function uses
  it: the op's `Node` gets its function wrapped once (`_NodeHooks`), which runs the hooks of each
  output first. (The record hooks of `_graph`, auto-parallel's tracer, saw the function unwrapped.)
* ``grad`` runs an ordinary backward walk in which every leaf it reaches lends its ``.grad``
  (emptied, then given back) and an op output asked for is tapped as above.

A hook takes the gradient as a Tensor and returns a replacement (a Tensor or an array of the same
shape) or None to keep it; it runs under no_grad, except in a ``create_graph`` grad, where what it
computes is recorded (`_NodeHooks.tensor_grads`).
"""
from __future__ import annotations

import itertools
import math
import weakref
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Union


from pycoll._complex_grads import call_backward
from pycoll._graph import Node, graph_leaves, run_backward
from pycoll.device import array_module
from pycoll.tensor import Tensor, grad_tensor, run_grad_hooks, wrap

Hook = Callable[[Tensor], Optional[Any]]
_keys = itertools.count()


class HookHandle:
    """Returned by ``register_hook``: ``remove()`` unregisters the hook (True the first time)."""

    def __init__(self, hooks: Dict[int, Hook], key: int):
        self._hooks = hooks
        self._key = key

    def remove(self) -> bool:
        return self._hooks.pop(self._key, None) is not None


# ---- hooks on an op's outputs: the node's backward function, wrapped once ------------------

class _NodeHooks:
    """A node's backward function with hooks on its outputs' gradients: ``hooks`` may replace
    each gradient, then ``taps`` see it (``grad`` reads them: a hook on an input of ``grad`` acts
    on what it returns, as paddle's). Complex gradients come
    to it, and go to the taps and hooks, in the gradient convention (``conjugate_grads``); the
    wrapped function gets them as the walk would have given them to it (`call_backward`)."""

    conjugate_grads = True

    def __init__(self, node: Node):
        self.fn = node.fn
        self.n_out = node.n_out
        self.taps: List[Dict[int, Callable[[Any], None]]] = [{} for _ in range(node.n_out)]
        self.hooks: List[Dict[int, Hook]] = [OrderedDict() for _ in range(node.n_out)]

    def _one(self, i: int, g: Any) -> Any:
        if g is None:
            return None
        g = run_grad_hooks(self.hooks[i], g) if self.hooks[i] else g
        for tap in list(self.taps[i].values()):
            tap(g)
        return g

    def __call__(self, grads: Any) -> Any:
        slots = [self._one(0, grads)] if self.n_out == 1 else [self._one(i, g) for i, g in enumerate(grads)]
        return call_backward(self.fn, self.n_out, slots)

    def tensor_grads(self, grads: List[Optional[Tensor]]) -> List[Optional[Tensor]]:
        """What a create_graph walk (pycoll._higher_order) hands the op's rule: each output's
        gradient, a recorded Tensor, after the hooks, run with recording on so that a hook's own
        ops are differentiated too (paddle's), and the taps (which see its array)."""
        out: List[Optional[Tensor]] = []
        for i, g in enumerate(grads):
            if g is not None:
                for hook in list(self.hooks[i].values()):
                    replaced = hook(g)
                    if replaced is not None:
                        replaced = replaced if isinstance(replaced, Tensor) else wrap(replaced)
                        if replaced.shape != g.shape:
                            raise ValueError(f"a gradient hook must return None or a Tensor of the gradient's "
                                             f"shape {g.shape}, got shape {replaced.shape}")
                        g = replaced
                for tap in list(self.taps[i].values()):
                    tap(g._array)
            out.append(g)
        return out


def _node_hooks(t: Tensor) -> _NodeHooks:
    """The hooks of the node that made `t`, which stands in for its backward function."""
    node = t.grad_node
    if node.fn is None:
        raise RuntimeError("the graph of this tensor was freed by a backward; hooks need a live graph")
    if not isinstance(node.fn, _NodeHooks):
        node.fn = _NodeHooks(node)
    return node.fn


# ---- the Tensor methods -------------------------------------------------------------------

def register_hook(self: Tensor, hook: Hook) -> HookHandle:
    """Call ``hook(grad)`` on this tensor's gradient in every backward that reaches it; what it
    returns (unless None) replaces the gradient: for a leaf, what ``.grad`` accumulates, for an
    op's output, what flows on to its inputs."""
    if not callable(hook):
        raise TypeError(f"hook must be callable, got {type(hook).__name__}")
    if self.stop_gradient:
        raise RuntimeError("cannot register a hook on a tensor with stop_gradient=True")
    if self.grad_node is None:
        hooks = self.__dict__.setdefault("_grad_hooks", OrderedDict())
    else:
        hooks = _node_hooks(self).hooks[self.output_index]
    key = next(_keys)
    hooks[key] = hook
    return HookHandle(hooks, key)


def retain_grads(self: Tensor) -> None:
    """Keep this op output's gradient in ``.grad`` after backward: each backward's replaces the
    last (paddle's; a leaf's accumulates instead). It is kept where this call stands among the
    tensor's hooks: after those registered before it, before those registered after (paddle's
    retain_grads is such a hook). A leaf, or a tensor without gradient, is left as it is."""
    if self.stop_gradient or self.grad_node is None or self.__dict__.get("_retains_grads"):
        return
    self.__dict__["_retains_grads"] = True
    ref = weakref.ref(self)

    def keep(g: Tensor) -> None:
        t = ref()
        if t is not None:
            t._grad = grad_tensor(g._array.copy())  # the walk may add into g later
    _node_hooks(self).hooks[self.output_index][next(_keys)] = keep


Tensor.register_hook = register_hook  # type: ignore[attr-defined]
Tensor.retain_grads = retain_grads  # type: ignore[attr-defined]


# ---- pycoll.grad ----------------------------------------------------------------------------

def _tensor_list(v: Any, name: str) -> List[Tensor]:
    items = [v] if isinstance(v, Tensor) else list(v) if isinstance(v, (list, tuple)) else None
    if not items or not all(isinstance(t, Tensor) for t in items):
        raise TypeError(f"{name} must be a Tensor or a non-empty list of Tensors, got {v!r}")
    return items


def grad(outputs: Union[Tensor, Sequence[Tensor]], inputs: Union[Tensor, Sequence[Tensor]],
         grad_outputs: Optional[Union[Tensor, Sequence[Optional[Tensor]]]] = None,
         retain_graph: Optional[bool] = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: bool = False, no_grad_vars: Any = None) -> List[Optional[Tensor]]:
    """The gradients of `outputs` (seeded with `grad_outputs`, ones where None) with respect to
    each of `inputs`, as a list of Tensors, without touching any ``.grad`` (paddle.grad).

    An input the graph does not reach (an output that takes no gradient reaches nothing) gets None
    with ``allow_unused``, else ValueError. A seed of an output's size but another shape (a [1]
    seed for a 0-D loss, from older paddle code) is reshaped. The graph is kept, whatever
    `retain_graph` says: paddle 3.3.1's grad keeps it too, whatever its documentation says, and
    scripts count on it (a first-order grad, then a create_graph one of the same output). With
    ``create_graph`` the gradients are recorded in the graph, to be differentiated again
    (`pycoll._higher_order`). Nothing flows back through the op outputs in `no_grad_vars` (an
    input reached through them alone gets zeros); an input listed there too gets no gradient.
    """
    if not only_inputs:
        raise NotImplementedError("grad: only_inputs=False is not supported (nor is it by paddle)")
    blocked = [] if no_grad_vars is None else _tensor_list(no_grad_vars, "no_grad_vars")
    outs = _tensor_list(outputs, "outputs")
    ins = _tensor_list(inputs, "inputs")
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        seeds = [grad_outputs] * len(outs) if grad_outputs is None else [grad_outputs]
    else:
        seeds = list(grad_outputs)
    if len(seeds) != len(outs):
        raise ValueError(f"grad_outputs must have one entry per output ({len(outs)}), got {len(seeds)}")
    live = [(o, _shaped_like(g, o)) for o, g in zip(outs, seeds) if not o.stop_gradient]
    if not live:
        return _results(ins, {}, allow_unused, wrap)
    outs, seeds = [o for o, _ in live], [g for _, g in live]
    # no_grad_vars: nothing flows back through an op output listed (a leaf has nothing behind it)
    stops = [t.register_hook(_zeros) for t in blocked if t.grad_node is not None and not t.stop_gradient]
    try:
        if create_graph:
            from pycoll._higher_order import differentiable_grads  # loaded on first use: it needs every op module
            found, as_tensor = differentiable_grads(outs, seeds, ins), _taking_gradients
        else:
            found, as_tensor = _array_grads(outs, seeds, ins), wrap
    finally:
        for stop in stops:
            stop.remove()
    for i, t in enumerate(ins):  # an input also in no_grad_vars gets no gradient (paddle's)
        if any(t is b for b in blocked):
            found.pop(i, None)
    return _results(ins, found, allow_unused, as_tensor)


def _zeros(g: Tensor) -> Tensor:
    return wrap(array_module(g._array).zeros_like(g._array))


def _shaped_like(seed: Any, out: Tensor) -> Any:
    """`seed` reshaped to `out`'s shape when it holds as many elements in another shape."""
    shape = getattr(seed, "shape", None)
    if shape is None or list(shape) == out.shape or math.prod(shape) != out.size:
        return seed
    return seed.reshape(out.shape)


def _array_grads(outs: List[Tensor], seeds: List[Any], ins: List[Tensor]) -> Dict[int, Any]:
    """{position in ins: gradient array} from an ordinary backward walk in which every leaf it
    reaches lends its ``.grad`` (emptied, then given back) and an op output asked for is tapped."""
    reached = {id(t): t for t in graph_leaves(outs)}
    lent = [(t, t._grad, t._ready_hooks, t.__dict__.pop("_grad_hooks", None)) for t in reached.values()]
    found: Dict[int, Any] = {}
    taps = []
    for i, t in enumerate(ins):
        if t.grad_node is not None and not t.stop_gradient and t.grad_node.fn is not None:
            def tap(g: Any, i: int = i) -> None:
                found[i] = g.copy() if i not in found else found[i] + g
            state = _node_hooks(t).taps[t.output_index]
            key = next(_keys)
            state[key] = tap
            taps.append((state, key))
    try:
        for t in reached.values():
            t._grad, t._ready_hooks = None, None
        run_backward(outs, seeds, retain_graph=True)
        for i, t in enumerate(ins):
            if t.grad_node is None and id(t) in reached and t._grad is not None:
                found[i] = t._grad._array
    finally:
        for t, g, ready, hooks in lent:
            t._grad, t._ready_hooks = g, ready
            if hooks is not None:
                t.__dict__["_grad_hooks"] = hooks
        for state, key in taps:
            state.pop(key, None)
    return found


def _taking_gradients(g: Tensor) -> Tensor:
    """A create_graph result as paddle gives it: stop_gradient False even where it is a constant
    (a later grad of it then finds the inputs unused)."""
    if not g.stop_gradient:
        return g
    t = wrap(g._array)
    t.stop_gradient = False
    return t


def _results(ins: List[Tensor], found: Dict[int, Any], allow_unused: bool,
             as_tensor: Callable[[Any], Tensor]) -> List[Optional[Tensor]]:
    results: List[Optional[Tensor]] = []
    for i in range(len(ins)):
        if i not in found and not allow_unused:
            raise ValueError(f"grad: input {i} does not appear in the backward graph of the outputs; "
                             f"pass allow_unused=True to get None for it")
        results.append(as_tensor(found[i]) if i in found else None)
    return results


__all__ = ["HookHandle", "grad", "register_hook", "retain_grads"]
