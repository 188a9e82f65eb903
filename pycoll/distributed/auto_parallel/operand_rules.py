"""Where an op's operands must lie before it computes on their pieces: paddle's SPMD rules on the
input side, for the ops whose pieces would not fit together otherwise (a matmul whose operands
split its contraction differently, a concat of inputs split differently or along the joined
dimension, picking rows along a split dimension). paddle reshards such operands before the op;
so does pycoll (``propagation``), and the rules of ``spmd_rules.py`` then place the result.

A rule sees, along one mesh dimension, each operand's whole shape and placement (None: not a
tensor, or a plain tensor, which is whole) and gives the placement each must have there.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from pycoll.distributed.auto_parallel.placements import Placement, Replicate, Shard

Shapes = Sequence[Optional[Tuple[int, ...]]]
Along = List[Optional[Placement]]


def _dim(p: Optional[Placement]) -> Optional[int]:
    return p.get_dim() if p is not None and p.is_shard() else None


def _matmul(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """x [..., M, K] @ y [..., K, N]: a contraction split in one operand is split in the other
    too (the result is then Partial); split against another split, it is made whole."""
    (xs, ys), (xp, yp) = shapes, along
    x_k, y_k = len(xs) - 1, (0 if len(ys) == 1 else len(ys) - 2)
    xd, yd = _dim(xp), _dim(yp)
    if xd == x_k and yd != y_k:
        return [xp, Shard(y_k)] if yd is None else [Replicate(), yp]
    if yd == y_k and xd != x_k:
        return [Shard(x_k), yp] if xd is None else [xp, Replicate()]
    return list(along)


def _concat(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """Every input split as the first split one, or whole where that split is the joined axis."""
    split = next((p for p in along if _dim(p) is not None), None)
    if split is None:
        return list(along)
    return [Replicate() if split.get_dim() == facts["axis"] else split] * len(along)


def _gather(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """Rows picked along ``axis`` come from the whole of that axis."""
    return [Replicate() if _dim(along[0]) == facts["axis"] else along[0]]


def _index(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """``x[index]`` takes a split dimension whole (a full slice ``:``), or it is made whole."""
    d = _dim(along[0])
    if d is None:
        return list(along)
    touched = _touched(facts["index"], len(shapes[0]))
    return [Replicate() if touched is None or d in touched else along[0]]


def basic_items(index: Any, ndim: int) -> Optional[List[Any]]:
    """A basic index (integers, slices, None, one Ellipsis) as a list of items, its Ellipsis
    spelt out as full slices; None for any other index (integer arrays, masks, tensors)."""
    items = list(index) if isinstance(index, tuple) else [index]
    if any(isinstance(i, bool) or not (isinstance(i, (numbers.Integral, slice)) or i is None or i is Ellipsis)
           for i in items) or items.count(Ellipsis) > 1:
        return None
    if Ellipsis in items:
        at = items.index(Ellipsis)
        consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
        items = items[:at] + [slice(None)] * (ndim - consumed) + items[at + 1:]
    return items


def _touched(index: Any, ndim: int) -> Optional[Set[int]]:
    """The dimensions a basic index does not take whole (None: not a basic index, every one)."""
    items = basic_items(index, ndim)
    if items is None:
        return None
    touched, dim = set(), 0
    for item in items:
        if item is None:
            continue
        if item != slice(None):
            touched.add(dim)
        dim += 1
    return touched


_RULES: Dict[str, Callable[[Shapes, Along, Dict[str, Any]], Along]] = {
    "matmul": _matmul, "concat": _concat, "gather": _gather, "index": _index}


def needed(name: str, shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """The placements op ``name``'s operands must have along one mesh dimension."""
    rule = _RULES.get(name)
    return rule(shapes, along, facts) if rule is not None else list(along)
