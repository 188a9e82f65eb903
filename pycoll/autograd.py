"""The autograd engine: a tape of `Node`s and one topological walk over it.

Every differentiable op that runs while gradients are enabled and has an input with
`stop_gradient=False` gives its output a `Node`: the op's backward function plus one edge per input.
An edge is `None` (no gradient wanted), the leaf `Tensor` itself, or `(node, output_index)` for a
tensor made by another op. Backward functions work on raw NumPy/CuPy arrays.

`backward()` counts, for every node and leaf reachable from the roots, how many edges lead into it;
it then walks the nodes newest-first, and a node runs only once every consumer has handed it its
gradient. A leaf's gradient is final the moment its count reaches zero: it is accumulated into
`leaf.grad` and the leaf's grad-ready hooks fire right then, while the rest of the walk goes on
(DataParallel starts communication from those hooks).

Gradient buffers are reused rather than copied: an array that a backward function freshly made and
handed to exactly one place is owned by the walk and may be added into in place or become a
leaf's `.grad`; anything else (views, arrays handed to two inputs, user-given seeds, what a PyLayer
returns) is copied before it is written.
"""
from __future__ import annotations

import functools
import heapq
import itertools
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

import numpy as np

_grad_enabled = True
_callback_stack: List[List[Callable[[], None]]] = []
_node_seq = itertools.count()


def is_grad_enabled() -> bool:
    """Whether ops record the graph right now."""
    return _grad_enabled


class no_grad:
    """Context manager and decorator that stops ops from recording the graph."""

    def __enter__(self) -> "no_grad":
        global _grad_enabled
        self._prev = _grad_enabled
        _grad_enabled = False
        return self

    def __exit__(self, *exc: Any) -> None:
        global _grad_enabled
        _grad_enabled = self._prev

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with no_grad():
                return fn(*args, **kwargs)
        return wrapper


class Node:
    """One recorded op: `fn` maps the output gradient(s) to one gradient per edge in `inputs`.

    `fresh` says that `fn` returns arrays it allocated itself (true for pycoll's ops, not for
    PyLayer); the walk may then reuse them as gradient buffers.
    """

    __slots__ = ("fn", "inputs", "n_out", "fresh", "seq")

    def __init__(self, fn: Callable, inputs: tuple, n_out: int = 1, fresh: bool = True):
        self.fn = fn
        self.inputs = inputs
        self.n_out = n_out
        self.fresh = fresh
        self.seq = next(_node_seq)


def edge(tensor: Any) -> Any:
    """The edge that leads from a new node back to `tensor`."""
    if tensor.stop_gradient:
        return None
    if tensor._node is None:
        return tensor
    return (tensor._node, tensor._out_idx)


class RemovableHandle:
    """Returned by hook registrations; `remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: Dict[int, Callable]):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)


def queue_callback(fn: Callable[[], None]) -> None:
    """Run `fn()` once, after the backward walk now in progress has finished.

    Meant to be called from a hook during backward (DataParallel waits for its last bucket there);
    callbacks run in the order they were queued. Raises RuntimeError outside backward.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not _callback_stack:
        raise RuntimeError("queue_callback() can only be called during backward (from a hook)")
    _callback_stack[-1].append(fn)


def _flatten_tensors(obj: Any, out: list) -> None:
    from pycoll.tensor import Tensor
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _flatten_tensors(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _flatten_tensors(v, out)


def graph_leaves(tensors: Any) -> list:
    """The leaf tensors with stop_gradient False that the graph of `tensors` reaches.

    `tensors` is a Tensor or a (nested) list/tuple/dict; other objects in it are ignored. Leaves come
    in the order the search meets them, each once. A graph already freed by backward reaches nothing.
    """
    roots: list = []
    _flatten_tensors(tensors, roots)
    found: Dict[int, Any] = {}
    seen = set()
    stack: list = []
    for t in roots:
        if t._node is None:
            if not t.stop_gradient:
                found.setdefault(id(t), t)
        elif t._node not in seen:
            seen.add(t._node)
            stack.append(t._node)
    while stack:
        node = stack.pop()
        for e in node.inputs or ():
            if e is None:
                continue
            if e.__class__ is tuple:
                if e[0] not in seen:
                    seen.add(e[0])
                    stack.append(e[0])
            elif not e.stop_gradient:
                found.setdefault(id(e), e)
    return list(found.values())


class _Buffers:
    """Tracks which gradient arrays the walk owns (see the module docstring)."""

    def __init__(self) -> None:
        self.handed: Dict[int, int] = {}
        self.fresh: set = set()

    def hand(self, g: Any, fresh: bool) -> Any:
        if isinstance(g, np.generic):  # NumPy reductions of 0-d arrays give scalars
            g = np.asarray(g)
        key = id(g)
        self.handed[key] = self.handed.get(key, 0) + 1
        if fresh:
            self.fresh.add(key)
        return g

    def owned(self, g: Any) -> bool:
        key = id(g)
        return (key in self.fresh and self.handed.get(key) == 1 and g.base is None
                and getattr(g.flags, "writeable", True))

    def add(self, acc: Any, g: Any) -> Any:
        if acc is None:
            return g
        if self.owned(acc) and acc.shape == g.shape:
            acc += g
            return acc
        return self.hand(acc + g, True)


def _finish_leaf(leaf: Any, g: Any, bufs: _Buffers, new_tensor: Callable) -> None:
    if g is not None:
        dtype = leaf._array.dtype
        if g.dtype != dtype:
            g = bufs.hand(g.astype(dtype), True)
        cur = leaf._grad
        if cur is None:
            leaf._grad = new_tensor(g if bufs.owned(g) else g.copy())
        elif getattr(cur._array.flags, "writeable", True):
            cur._array += g  # in place: a .grad that views a communication bucket stays a view
        else:
            leaf._grad = new_tensor(cur._array + g)
    hooks = leaf._ready_hooks
    if hooks:
        for hook in list(hooks.values()):
            hook(leaf)


def run_backward(roots: Sequence[Any], grads: Sequence[Any], retain_graph: bool = False) -> None:
    """Backpropagate `grads` (arrays, one per root tensor) through the recorded graph."""
    from pycoll.tensor import _new as new_tensor

    # 1. count the edges into every reachable node and leaf
    deps: Dict[Node, int] = {}
    leaf_deps: Dict[int, int] = {}
    leaves: Dict[int, Any] = {}
    stack = []
    for r in roots:
        if r._node is not None and r._node not in deps:
            deps[r._node] = 0
            stack.append(r._node)
    while stack:
        node = stack.pop()
        if node.fn is None:
            raise RuntimeError(
                "backward through a graph that a previous backward already freed; pass "
                "retain_graph=True to the first backward to walk the graph twice")
        for e in node.inputs:
            if e is None:
                continue
            if e.__class__ is tuple:
                n = e[0]
                if n in deps:
                    deps[n] += 1
                else:
                    deps[n] = 1
                    stack.append(n)
            else:
                key = id(e)
                leaf_deps[key] = leaf_deps.get(key, 0) + 1
                leaves[key] = e

    # 2. seed the roots
    bufs = _Buffers()
    pending: Dict[Node, list] = {}
    leaf_acc: Dict[int, Any] = {}
    for r, g in zip(roots, grads):
        g = bufs.hand(g, False)  # a caller's array is never ours to write
        if r._node is not None:
            slots = pending.setdefault(r._node, [None] * r._node.n_out)
            slots[r._out_idx] = bufs.add(slots[r._out_idx], g)
        else:
            leaf_acc[id(r)] = bufs.add(leaf_acc.get(id(r)), g)
            leaves[id(r)] = r

    _callback_stack.append([])
    try:
        for key, leaf in list(leaves.items()):
            if leaf_deps.get(key, 0) == 0:
                _finish_leaf(leaf, leaf_acc.pop(key, None), bufs, new_tensor)
        ready = [(-n.seq, n) for n, count in deps.items() if count == 0]
        heapq.heapify(ready)

        # 3. walk newest-first; a node runs once all its consumers have delivered
        while ready:
            node = heapq.heappop(ready)[1]
            slots = pending.pop(node, None)
            inputs = node.inputs
            out_grads: Iterable = ()
            if slots is not None and any(s is not None for s in slots):
                out_grads = node.fn(slots[0] if node.n_out == 1 else slots)
            if not retain_graph:
                node.fn = None
                node.inputs = ()
            out_grads = tuple(out_grads) if out_grads else (None,) * len(inputs)
            fresh = node.fresh
            for e, g in zip(inputs, out_grads):
                if e is None:
                    continue
                if e.__class__ is tuple:
                    n, idx = e
                    if g is not None:
                        g = bufs.hand(g, fresh)
                        s = pending.get(n)
                        if s is None:
                            s = pending[n] = [None] * n.n_out
                        s[idx] = bufs.add(s[idx], g)
                    deps[n] -= 1
                    if deps[n] == 0:
                        heapq.heappush(ready, (-n.seq, n))
                else:
                    key = id(e)
                    if g is not None:
                        leaf_acc[key] = bufs.add(leaf_acc.get(key), bufs.hand(g, fresh))
                    leaf_deps[key] -= 1
                    if leaf_deps[key] == 0:
                        _finish_leaf(e, leaf_acc.pop(key, None), bufs, new_tensor)
        callbacks = _callback_stack[-1]
        while callbacks:
            callbacks.pop(0)()
    finally:
        _callback_stack.pop()


def backward(tensors: Any, grad_tensors: Optional[Any] = None, retain_graph: bool = False) -> None:
    """Backward from several output tensors at once (paddle.autograd.backward)."""
    from pycoll.tensor import Tensor
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors] * len(tensors) if grad_tensors is None else [grad_tensors]
    grad_tensors = list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"grad_tensors must have one entry per tensor ({len(tensors)}), "
                         f"got {len(grad_tensors)}")
    arrays = [t._seed_grad(g) for t, g in zip(tensors, grad_tensors)]
    run_backward(tensors, arrays, retain_graph)


class PyLayerContext:
    """The `ctx` a PyLayer's forward and backward share."""

    def __init__(self) -> None:
        self._saved: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._saved = tensors

    def saved_tensor(self) -> tuple:
        return self._saved


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
        from pycoll.device import array_module
        from pycoll.tensor import Tensor, _new

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
        results = [_new(o._array) for o in out_list]
        inputs = tuple(edge(a) for a in tensor_args)
        if _grad_enabled and any(e is not None for e in inputs):
            metas = [(r._array.shape, r._array.dtype, array_module(r._array)) for r in results]
            shapes = [a._array.shape for a in tensor_args]

            def fn(grads: Any) -> list:
                grads = [grads] if len(metas) == 1 else grads
                dys = [_new(g if g is not None else xp.zeros(shape, dtype))
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

            node = Node(fn, inputs, n_out=len(results), fresh=False)
            for i, r in enumerate(results):
                r.stop_gradient = False
                r._node = node
                r._out_idx = i
        if single:
            return results[0]
        return tuple(results) if isinstance(outs, tuple) else results
