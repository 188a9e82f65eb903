"""The walk of a ``create_graph`` backward: the recorded graph from the outputs back to the inputs
asked for, each node's gradient computed by its rule with Tensor ops (recorded, so differentiable
again) instead of its backward function on arrays.

Only nodes on a path to an input asked for run (a node off those paths needs no rule), no
``.grad`` is touched and no leaf's hook fires (``paddle.grad``'s contract, as in the ordinary
walk); hooks on op outputs do, recorded. The graph is never freed, since the gradients it returns
are built on it.
"""
from __future__ import annotations

import heapq
from typing import Any, Dict, List, Sequence, Set, Tuple

from pycoll import _graph, _versions
from pycoll._higher_order.saved import RULES, Saved, op_name
from pycoll.tensor import Tensor, wrap


def differentiable_grads(outs: Sequence[Tensor], seeds: Sequence[Any],
                         ins: Sequence[Tensor]) -> Dict[int, Tensor]:
    """The gradient of `outs` (seeded with `seeds`: Tensors, or None for ones) with respect to each
    of `ins`, as ``{position in ins: Tensor}`` for those the graph reaches; the Tensors are
    recorded in the graph."""
    leaf_targets: Dict[int, List[int]] = {}
    node_targets: Dict[Tuple[Any, int], List[int]] = {}
    for i, t in enumerate(ins):
        if t.grad_node is None:
            if not t.stop_gradient:
                leaf_targets.setdefault(id(t), []).append(i)
        else:
            node_targets.setdefault((t.grad_node, t.output_index), []).append(i)
    useful = _useful_nodes(outs, leaf_targets, node_targets)

    found: Dict[int, Tensor] = {}
    pending: Dict[Any, list] = {}  # a node's outputs' gradients, summed until it runs
    with _graph.enable_grad():
        for r, g in zip(outs, seeds):
            checked = r.seed_grad(g)  # raises on a wrong shape or an output that takes no gradient
            seed = g if isinstance(g, Tensor) and not g.stop_gradient else wrap(checked)
            if r.grad_node is None:  # a leaf output that is itself an input asked for
                for i in leaf_targets.get(id(r), ()):
                    found[i] = _added(found.get(i), seed)
            else:
                slots = pending.setdefault(r.grad_node, [None] * r.grad_node.n_out)
                slots[r.output_index] = _added(slots[r.output_index], seed)
        _walk(useful, pending, leaf_targets, node_targets, found)
        # the inputs asked for whose own nodes lead nowhere asked for: their summed gradients,
        # after their hooks
        for node, slots in pending.items():
            if any((node, idx) in node_targets for idx in range(node.n_out)):
                for idx, g in enumerate(_hooked(node, slots)):
                    for i in node_targets.get((node, idx), ()) if g is not None else ():
                        found[i] = g
    return found


def _hooked(node: Any, slots: list) -> list:
    """``slots``, a node's outputs' gradients, after the hooks on those outputs (once each)."""
    hooked = getattr(node.fn, "tensor_grads", None)  # (pycoll.grad_ops._NodeHooks)
    return hooked(slots) if hooked is not None and any(g is not None for g in slots) else slots


def _useful_nodes(outs: Sequence[Tensor], leaf_targets: Dict[int, List[int]],
                  node_targets: Dict[Tuple[Any, int], List[int]]) -> Set[Any]:
    """The nodes reachable from `outs` that lead to an input asked for."""
    useful: Set[Any] = set()
    done: Set[Any] = set()
    stack = [(r.grad_node, False) for r in outs if r.grad_node is not None]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        if node.fn is None:
            raise RuntimeError("grad: the graph was already freed by a previous backward; pass "
                               "retain_graph=True to it to walk the graph again")
        if not expanded:
            stack.append((node, True))
            stack.extend((e[0], False) for e in node.inputs if e.__class__ is tuple and e[0] not in done)
            continue
        done.add(node)
        for e in node.inputs:
            if e is None:
                continue
            if (e in node_targets or e[0] in useful) if e.__class__ is tuple else id(e) in leaf_targets:
                useful.add(node)
                break
    return useful


def _walk(useful: Set[Any], pending: Dict[Any, list], leaf_targets: Dict[int, List[int]],
          node_targets: Dict[Tuple[Any, int], List[int]], found: Dict[int, Tensor]) -> None:
    deps = dict.fromkeys(useful, 0)
    for node in useful:
        for e in node.inputs:
            if e.__class__ is tuple and e[0] in deps:
                deps[e[0]] += 1
    ready = [(-n.seq, n) for n, count in deps.items() if count == 0]
    heapq.heapify(ready)
    while ready:
        node = heapq.heappop(ready)[1]
        slots = _hooked(node, pending.pop(node, None) or [None] * node.n_out)
        for idx, g in enumerate(slots):
            for i in node_targets.get((node, idx), ()):
                found[i] = g
        wanted = tuple(e is not None and ((e in node_targets or e[0] in useful) if e.__class__ is tuple
                                          else id(e) in leaf_targets) for e in node.inputs)
        grads: Sequence[Any] = ()
        if any(g is not None for g in slots):
            grads = _run_rule(node, slots, wanted)
        for e, want, g in zip(node.inputs, wanted, grads or (None,) * len(node.inputs)):
            if not want or g is None:
                continue
            if e.__class__ is tuple:  # (a tensor asked for whose own node leads nowhere asked for
                s = pending.setdefault(e[0], [None] * e[0].n_out)  # stays pending: see the caller)
                s[e[1]] = _added(s[e[1]], g)
            else:
                for i in leaf_targets[id(e)]:
                    found[i] = _added(found.get(i), g)
        for e in node.inputs:
            if e.__class__ is tuple and e[0] in deps:
                deps[e[0]] -= 1
                if deps[e[0]] == 0:
                    heapq.heappush(ready, (-e[0].seq, e[0]))


def _run_rule(node: Any, slots: list, wanted: Tuple[bool, ...]) -> Sequence[Any]:
    """The node's rule on ``slots`` (its outputs' gradients, after their hooks)."""
    fn = node.fn
    if getattr(fn, "tensor_grads", None) is not None:  # pycoll.grad_ops._NodeHooks: its function
        fn = fn.fn
    name = getattr(fn, "__qualname__", "")
    found_rule = RULES.get(name)
    if found_rule is None:
        raise NotImplementedError(
            f"grad(create_graph=True): no differentiable gradient for {op_name(fn)} yet; higher-order "
            f"gradients cover arithmetic, elementwise maths, reductions, shape ops, indexing, "
            f"linear/matmul, the common activations, softmax and the losses built on them")
    if any(g is not None and g._array.dtype.kind == "c" for g in slots):
        raise NotImplementedError("grad(create_graph=True) does not support complex tensors yet")
    if _versions.last_write > node.seq or node.saved:
        _versions.check(node)
    grads = found_rule(Saved(node, wanted, fn), slots[0] if node.n_out == 1 else slots)
    return grads if isinstance(grads, (tuple, list)) else (grads,)


def _added(acc: Any, g: Tensor) -> Tensor:
    return g if acc is None else acc + g
