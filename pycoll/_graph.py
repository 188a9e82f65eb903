"""The autograd graph: a tape of `Node`s and one topological walk over it. It knows no Tensor class.

Every differentiable op that runs while gradients are enabled and has an input with
`stop_gradient=False` gives its output a `Node` (see `record`): the op's backward function plus one
edge per input. An edge is `None` (no gradient wanted), the leaf tensor itself, or
`(node, output_index)` for a tensor made by another op. Backward functions work on raw NumPy/CuPy
arrays.

The graph works on any object that follows the `GraphTensor` protocol (`pycoll.Tensor` does): it
reads and sets three attributes, asks a root for the array its backward starts from, and hands each
leaf its final gradient, which the leaf accumulates itself before firing its own hooks.

`run_backward()` counts, for every node and leaf reachable from the roots, how many edges lead into
it; it then walks the nodes newest-first, and a node runs only once every consumer has handed it
its gradient. A leaf's gradient is final the moment its count reaches zero: the leaf gets it right
then (`finish_grad`), while the rest of the walk goes on (DataParallel starts communication from
the hooks that fire there).

Before a node runs, memory its backward holds must not have been written in place since the op
ran (paddle's and torch's version counters): `pycoll._versions` keeps the writes and checks.

Gradient buffers are reused rather than copied: an array that a backward function freshly made and
handed to exactly one place is owned by the walk and may be added into in place or become a
leaf's `.grad`; anything else (views, arrays handed to two inputs, user-given seeds, what a PyLayer
returns) is copied before it is written.

A backward function may give a leaf a `RowsValue` instead of an array: a gradient that is zero
outside some rows (an ``Embedding(sparse=True)`` weight's). The walk adds such values up as rows,
and into an array where another path gives the leaf a dense gradient; the leaf keeps them as rows
(`pycoll.tensor.RowsGrad`).
"""
from __future__ import annotations

import dataclasses
import functools
import heapq
import inspect
import itertools
import time
import types
from typing import (Any, Callable, Dict, Iterable, List, Optional, Protocol, Sequence,
                    runtime_checkable)

import numpy as np

from pycoll import _complex_grads, _versions
from pycoll._fp_quiet import SILENT, restore, silence
from pycoll._logging import logger
from pycoll.device import array_module, scatter_add

_grad_enabled = True
_callback_stack: List[List[Callable[[], None]]] = []
_retaining: List[bool] = []  # per backward walk in progress: whether it keeps its graph


def is_grad_enabled() -> bool:
    """Whether ops record the graph right now."""
    return _grad_enabled


class _GradMode:
    """A context manager and decorator that sets whether ops record the graph (``_mode``) and
    gives the previous setting back on exit."""

    _mode = True

    def __enter__(self) -> "_GradMode":
        global _grad_enabled
        self._prev = _grad_enabled
        _grad_enabled = self._mode
        return self

    def __exit__(self, *exc: Any) -> None:
        global _grad_enabled
        _grad_enabled = self._prev

    def __call__(self, fn: Callable) -> Callable:
        mode = self._mode
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args: Any, **kwargs: Any) -> Any:
                return (yield from _each_step_under(mode, fn(*args, **kwargs)))
            return generator

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _Scoped(mode):
                return fn(*args, **kwargs)
        return wrapper


def _each_step_under(mode: bool, gen: Any) -> Any:
    """Drive generator `gen`, running each of its resumptions (and only those) with the graph's
    recording set to `mode`, as torch's decorators treat a generator function. paddle 3.3.1's
    enters the mode at the first resumption and leaves it only when the generator ends, so that
    the caller also runs under it between resumptions (a loss computed between two next() calls
    gets no gradient); pycoll gives the caller its own mode back at each yield. Values sent and
    exceptions thrown in reach `gen`; its return value is returned."""
    try:
        with _Scoped(mode):
            value = next(gen)
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                with _Scoped(mode):
                    gen.close()
                raise
            except BaseException as exc:
                with _Scoped(mode):
                    value = gen.throw(exc)
            else:
                with _Scoped(mode):
                    value = gen.send(sent)
    except StopIteration as stop:
        return stop.value


class _Scoped(_GradMode):
    """``mode`` inside a ``with`` block only (what the decorators apply)."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)


class no_grad(_GradMode):
    """Ops inside do not record the graph."""

    _mode = False


class enable_grad(_GradMode):
    """Ops inside record the graph again (within a ``no_grad`` block, say)."""


class set_grad_enabled(_GradMode):
    """Whether ops record the graph, set at once as paddle's and torch's are: a plain call
    ``set_grad_enabled(False)`` switches recording off until switched back, and ``with
    set_grad_enabled(mode):`` gives the previous setting back on exit. As a decorator the setting
    applies inside the function only (the call that made it is undone, as torch does)."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        _GradMode.__enter__(self)  # sets the mode now, keeping the previous one for __exit__

    def __enter__(self) -> "set_grad_enabled":
        return self

    def __call__(self, fn: Callable) -> Callable:
        _GradMode.__exit__(self)
        return super().__call__(fn)


class Node:
    """One recorded op: `fn` maps the output gradient(s) to one gradient per edge in `inputs`.

    `fresh` says that `fn` returns arrays it allocated itself (true for pycoll's ops, not for
    PyLayer); the walk may then reuse them as gradient buffers. `saved`: the tensors `fn` reads when
    it runs, each with the array it held then (a PyLayer's), or None when `fn` holds arrays itself.
    """

    __slots__ = ("fn", "inputs", "n_out", "fresh", "seq", "saved", "__weakref__")  # (a PyLayer's saved outputs)

    def __init__(self, fn: Callable, inputs: tuple, n_out: int = 1, fresh: bool = True,
                 saved: Optional[tuple] = None):
        self.fn = fn
        self.inputs = inputs
        self.n_out = n_out
        self.fresh = fresh
        self.seq = next(_versions.CLOCK)
        self.saved = saved


@runtime_checkable
class GraphTensor(Protocol):
    """What the graph needs of a tensor.

    `stop_gradient` True: no gradient flows into it. `grad_node` is the Node that made it (None for
    a leaf) and `output_index` which of that node's outputs it is; `record` sets all three on an
    op's outputs.
    """

    stop_gradient: bool
    grad_node: Optional[Node]
    output_index: int

    def seed_grad(self, grad: Any) -> Any:
        """The array a backward from this tensor starts with, from `grad` as the caller gave it
        (None: the tensor's default seed); raises if no backward can start here."""

    def finish_grad(self, grad: Any, owned: bool) -> None:
        """Called once per backward on each leaf the walk reaches, when its gradient for this
        backward is final: accumulate `grad` (an array, or None when no path delivered one) and
        fire the leaf's grad-ready hooks. `owned`: the walk gives `grad` away, so it may be kept
        as the leaf's gradient buffer without a copy."""


def edge(tensor: GraphTensor) -> Any:
    """The edge that leads from a new node back to `tensor`."""
    if tensor.stop_gradient:
        return None
    if tensor.grad_node is None:
        return tensor
    return (tensor.grad_node, tensor.output_index)


def record(outputs: Sequence[GraphTensor], backward: Callable,
           inputs: Sequence[Optional[GraphTensor]], fresh: bool = True,
           saved: Optional[Sequence[Any]] = None) -> None:
    """Make `outputs`, new tensors, the outputs of one op node if the graph is being recorded and
    an input needs a gradient; otherwise leave them alone.

    `backward(grad)` (with one output; with several, a list of one gradient or None per output)
    returns one gradient array or None per entry of `inputs`; an input that is None (say a Python
    scalar operand) takes no gradient. `fresh`: see `Node`. `saved`: the tensors `backward` reads
    when it runs (a PyLayer's; each must keep its array and its values until then).
    """
    if _record_hooks:
        for hook in list(_record_hooks.values()):
            backward = hook(outputs, backward, inputs)
    if not _grad_enabled:
        return
    edges = tuple([None if t is None else edge(t) for t in inputs])
    for e in edges:  # (tuple.count(None) would compare Tensors with ==, an op)
        if e is not None:
            break
    else:
        return
    node = Node(backward, edges, n_out=len(outputs), fresh=fresh,
                saved=None if saved is None else tuple((t, t.array) for t in saved))
    for i, out in enumerate(outputs):
        out.stop_gradient = False
        out.grad_node = node
        out.output_index = i


class RemovableHandle:
    """Returned by hook registrations; `remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: Dict[int, Callable]):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)


_record_hooks: Dict[int, Callable] = {}  # see add_record_hook
# while a profiler records: called after each node's backward with its function and start time
# (perf_counter_ns); see pycoll.profiler.op_events
node_timer: Optional[Callable[[Callable, int], None]] = None


def has_record_hooks() -> bool:
    """Whether some hook watches every op (``add_record_hook``: auto-parallel's tracer)."""
    return bool(_record_hooks)


def add_record_hook(hook: Callable[[Sequence[Any], Callable, Sequence[Any]], Callable]) -> RemovableHandle:
    """Call ``hook(outputs, backward, inputs)`` for every op that reaches `record`, under no_grad
    too; what it returns replaces ``backward`` (a tracer wraps it to see the backward op run).
    auto-parallel's program listings are made this way."""
    handle = RemovableHandle(_record_hooks)
    _record_hooks[handle.id] = hook
    return handle


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


def retains_graph() -> bool:
    """Whether the backward walk now in progress keeps its graph (``retain_graph=True``), so
    that another backward may walk it again; False outside backward."""
    return bool(_retaining) and _retaining[-1]


def _flatten_tensors(obj: Any, out: list) -> None:
    if isinstance(obj, GraphTensor):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _flatten_tensors(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _flatten_tensors(v, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):  # torch's DDP searches them too
        for field in dataclasses.fields(obj):
            _flatten_tensors(getattr(obj, field.name), out)


def graph_leaves(tensors: Any) -> list:
    """The leaf tensors with stop_gradient False that the graph of `tensors` reaches.

    `tensors` is a tensor or a (nested) list/tuple/dict/dataclass; other objects in it are ignored. Leaves come
    in the order the search meets them, each once. A graph already freed by backward reaches nothing.
    """
    roots: list = []
    _flatten_tensors(tensors, roots)
    found: Dict[int, Any] = {}
    seen = set()
    stack: list = []
    for t in roots:
        if t.grad_node is None:
            if not t.stop_gradient:
                found.setdefault(id(t), t)
        elif t.grad_node not in seen:
            seen.add(t.grad_node)
            stack.append(t.grad_node)
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


class RowsValue:
    """A gradient of ``shape`` that is zero outside the rows ``ids`` (1-D, repeats allowed): row
    ``ids[k]`` adds ``rows[k]``."""

    __slots__ = ("ids", "rows", "shape", "dtype")

    def __init__(self, ids: Any, rows: Any, shape: Sequence[int], dtype: Any):
        self.ids, self.rows, self.shape, self.dtype = ids, rows, tuple(shape), dtype

    def dense(self) -> Any:
        out = array_module(self.rows).zeros(self.shape, dtype=self.dtype)
        self.add_into(out)
        return out

    def add_into(self, target: Any) -> None:
        scatter_add(target, self.ids, self.rows.astype(target.dtype, copy=False))

    def plus(self, other: Any) -> Any:
        """This gradient plus ``other`` (rows; or an array, then a new array)."""
        if isinstance(other, RowsValue):
            xp = array_module(self.rows)
            return RowsValue(xp.concatenate((self.ids, other.ids)), xp.concatenate((self.rows, other.rows)),
                             self.shape, self.dtype)
        out = other.copy()
        self.add_into(out)
        return out

    def coalesced(self) -> tuple:
        """(the sorted distinct ids, their rows summed in the order they came, as `dense` sums them)."""
        xp = array_module(self.rows)
        if xp is not np:  # CuPy has no reduceat; its scatter_add is one kernel
            ids, where = xp.unique(self.ids, return_inverse=True)
            summed = xp.zeros((len(ids),) + self.shape[1:], dtype=self.dtype)
            scatter_add(summed, where.reshape(-1), self.rows)
            return ids, summed
        order = np.argsort(self.ids, kind="stable")  # a stable sort keeps each id's rows in order
        ids = self.ids[order]
        first = np.concatenate(([True], ids[1:] != ids[:-1]))  # where each distinct id starts
        rows = self.rows[order].astype(self.dtype, copy=False)
        if first.all():  # no id twice: nothing to add up
            return ids, rows
        summed = rows[first]  # the first row of each id, then the others added in order
        repeats = ~first
        np.add.at(summed, np.cumsum(first)[repeats] - 1, rows[repeats])
        return ids[first], summed


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
        return (key in self.fresh and self.handed.get(key) == 1 and g.__class__ is not RowsValue
                and g.base is None and getattr(g.flags, "writeable", True))

    def consumed(self, slots: list) -> None:
        """A node's backward (a pycoll op's own function, no hooks) has run on ``slots``: forget
        the walk's own arrays handed to it alone. Their memory may be freed now, and a new array
        given the same id would otherwise look handed twice and be copied where it need not be.
        Arrays from outside (seeds) stay noted: one handed on again is still not the walk's."""
        for g in slots:
            key = id(g)
            if g is not None and key in self.fresh and self.handed.get(key) == 1:
                del self.handed[key]
                self.fresh.discard(key)

    def add(self, acc: Any, g: Any) -> Any:
        if acc is None:
            return g
        if acc.__class__ is RowsValue or g.__class__ is RowsValue:
            if acc.__class__ is not RowsValue and self.owned(acc):
                g.add_into(acc)
                return acc
            return self.hand(g.plus(acc) if g.__class__ is RowsValue else acc.plus(g), True)
        if self.owned(acc) and acc.shape == g.shape:
            acc += g
            return acc
        return self.hand(acc + g, True)


def _finish_leaf(leaf: GraphTensor, g: Any, bufs: _Buffers) -> None:
    leaf.finish_grad(g, g is not None and bufs.owned(g))


_warned_nothing = False


def warn_nothing_to_differentiate() -> None:
    """A backward from tensors with stop_gradient=True does nothing, as paddle's does; the first
    one logs a warning, since it is usually a loss computed under no_grad by mistake."""
    global _warned_nothing
    if not _warned_nothing:
        _warned_nothing = True
        logger.warning("backward() on a tensor with stop_gradient=True does nothing: nothing in its graph "
                       "needs a gradient (was it computed under no_grad?); warned once")


def run_backward(roots: Sequence[GraphTensor], grads: Sequence[Any],
                 retain_graph: bool = False) -> None:
    """Backpropagate from `roots`, each seeded with `root.seed_grad(g)` for its entry of `grads`,
    through the recorded graph; every seed is checked before the walk starts."""
    seeds = [r.seed_grad(g) for r, g in zip(roots, grads)]

    # 1. count the edges into every reachable node and leaf
    deps: Dict[Node, int] = {}
    leaf_deps: Dict[int, int] = {}
    leaves: Dict[int, Any] = {}
    stack = []
    for r in roots:
        if r.grad_node is not None and r.grad_node not in deps:
            deps[r.grad_node] = 0
            stack.append(r.grad_node)
    while stack:
        node = stack.pop()
        if node.fn is None:
            raise RuntimeError(
                "backward through a graph that a previous backward already freed (or left part-freed "
                "when it stopped with an error); pass retain_graph=True to the first backward to walk "
                "the graph twice")
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

    # 2. seed the roots, then walk with NumPy's floating-point warnings off: every backward
    # function and every sum of gradients (inf + -inf) gives inf/NaN silently, as paddle's do, for
    # one switch per backward (hooks and PyLayer backwards run in it too)
    saved_fp = silence(SILENT)
    timer = node_timer
    _callback_stack.append([])
    _retaining.append(retain_graph)
    try:
        bufs = _Buffers()
        pending: Dict[Node, list] = {}
        leaf_acc: Dict[int, Any] = {}
        for r, g in zip(roots, seeds):
            g = bufs.hand(g, False)  # a caller's array is never ours to write
            if r.grad_node is not None:
                slots = pending.setdefault(r.grad_node, [None] * r.grad_node.n_out)
                slots[r.output_index] = bufs.add(slots[r.output_index], g)
            else:
                leaf_acc[id(r)] = bufs.add(leaf_acc.get(id(r)), g)
                leaves[id(r)] = r

        for key, leaf in list(leaves.items()):
            if leaf_deps.get(key, 0) == 0:
                _finish_leaf(leaf, leaf_acc.pop(key, None), bufs)
        ready = [(-n.seq, n) for n, count in deps.items() if count == 0]
        heapq.heapify(ready)

        # 3. walk newest-first; a node runs once all its consumers have delivered
        while ready:
            node = heapq.heappop(ready)[1]
            slots = pending.pop(node, None)
            inputs = node.inputs
            out_grads: Iterable = ()
            if slots is not None and any(s is not None for s in slots):
                if _versions.last_write > node.seq or node.saved:
                    _versions.check(node)
                started = 0 if timer is None else time.perf_counter_ns()
                if node.n_out == 1 and slots[0].dtype.kind != "c":  # the common case, kept lean
                    out_grads = node.fn(slots[0])
                else:
                    out_grads = _complex_grads.run_node(node, slots)
                if timer is not None:
                    timer(node.fn, started)
                if node.fresh and isinstance(node.fn, types.FunctionType):
                    bufs.consumed(slots)
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
                        _finish_leaf(e, leaf_acc.pop(key, None), bufs)
        callbacks = _callback_stack[-1]
        while callbacks:
            callbacks.pop(0)()
    finally:
        _callback_stack.pop()
        _retaining.pop()
        restore(saved_fp)
