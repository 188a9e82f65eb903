"""Rules for shape ops and indexing: reshape, transpose, expand, tile, flip, roll, pad, concat,
stack, split, unbind, clone, sort, topk, ``x[index]``, gather, take_along_axis and masked_select, whose gradients are
`scattered` (an op of its own here, so that it can be differentiated again: its gradient is the
same indexing)."""
from __future__ import annotations

from typing import Any

import numpy as np

from pycoll._higher_order.saved import Saved, const, fit, rule
from pycoll._tensor_ops import op_output
from pycoll.device import array_module, to_module
from pycoll.math_ops import matmul, sum as sum_
from pycoll.index_ops import take_along_axis
from pycoll.reshape_ops import flip, moveaxis, roll, rot90
from pycoll.search_ops import inverse_order
from pycoll.shape_ops import concat, reshape, scatter_add, stack, transpose
from pycoll.tensor import Tensor, _to_place, wrap


@rule("reshape.<locals>.<lambda>")
def _reshape(s: Saved, g: Tensor) -> tuple:
    return (reshape(g, list(s["src"])),)


@rule("transpose.<locals>.<lambda>")
def _transpose(s: Saved, g: Tensor) -> tuple:
    return (transpose(g, list(s["inverse"])),)


@rule("expand.<locals>.<lambda>")
def _expand(s: Saved, g: Tensor) -> tuple:
    return (fit(g, (s["src"], g._array.dtype)),)


@rule("clone.<locals>.<lambda>")
def _clone(s: Saved, g: Tensor) -> tuple:
    return (g * 1,)


@rule("concat.<locals>.backward")
def _concat(s: Saved, g: Tensor) -> list:
    lead, bounds = s["lead"], s["bounds"]
    return [g[lead + (slice(int(bounds[i]), int(bounds[i + 1])),)] if s.wants(i) else None
            for i in range(s["n"])]


@rule("stack.<locals>.<lambda>")
def _stack(s: Saved, g: Tensor) -> list:
    return [g[s["lead"] + (i,)] if s.wants(i) else None for i in range(s["n"])]


@rule("split.<locals>.backward")
def _split(s: Saved, grads: Any) -> tuple:
    grads = grads if isinstance(grads, list) else [grads]
    parts = [wrap(s["xp"].zeros(p.shape, p.dtype)) if g is None else g for p, g in zip(s["pieces"], grads)]
    return (concat(parts, axis=s["axis"]),)


@rule("unbind.<locals>.backward")
def _unbind(s: Saved, grads: Any) -> tuple:
    grads = grads if isinstance(grads, list) else [grads]
    a, axis = s["a"], len(s["lead"])
    dtype = next(g for g in grads if g is not None)._array.dtype
    slice_shape = a.shape[:axis] + a.shape[axis + 1:]
    parts = [wrap(s["xp"].zeros(slice_shape, dtype)) if g is None else g for g in grads]
    return (stack(parts, axis=axis),)


@rule("_getitem.<locals>.backward")
def _getitem(s: Saved, g: Tensor) -> tuple:
    return (scattered(g, s["shape"], s["index"], s["repeats"]),)


def scattered(g: Tensor, shape: tuple, index: Any, repeats: bool) -> Tensor:
    """Zeros of `shape` with `g` put at `index` (added up where integer arrays repeat an
    element): the gradient of ``x[index]``, recorded."""
    a = g._array
    out = array_module(a).zeros(shape, a.dtype)
    if repeats:
        scatter_add(out, index, a)
    else:
        out[index] = a

    def backward(gg: Any) -> tuple:
        return (gg[index],)
    return op_output(out, backward, g)


@rule("scattered.<locals>.backward")
def _scattered(s: Saved, g: Tensor) -> tuple:
    return (g[s["index"]],)


@rule("gather.<locals>.backward")
def _gather(s: Saved, g: Tensor) -> tuple:
    return (scattered(g, s["shape"], s["at"], True),)


@rule("flip.<locals>.<lambda>")
def _flip(s: Saved, g: Tensor) -> tuple:
    return (flip(g, list(s["axes"])),)


@rule("rot90.<locals>.<lambda>")
def _rot90(s: Saved, g: Tensor) -> tuple:
    return (rot90(g, -s["k"], list(s["axes"])),)


@rule("tile.<locals>.backward")
def _tile(s: Saved, g: Tensor) -> tuple:
    summed = sum_(reshape(g, list(s["interleaved"])), axis=list(range(0, 2 * s["n"], 2)))
    return (reshape(summed, list(s["src"])),)


@rule("take_along_axis.<locals>.backward")
def _take_along_axis(s: Saved, g: Tensor) -> tuple:
    return (scattered(g, s["shape"], s["key"], True),)


@rule("masked_select.<locals>.backward")
def _masked_select(s: Saved, g: Tensor) -> tuple:
    return (fit(scattered(g, s["shape"], s["m"], False), s["meta"]),)


@rule("pad.<locals>.backward")
def _pad(s: Saved, g: Tensor) -> tuple:
    full, a, xp = s["full"], s["a"], s["xp"]
    if tuple(g.shape) != full.shape:  # cropped: the cut cells get no gradient
        g = scattered(g, full.shape, s["cut"], False)
    if s["mode"] == "constant":
        return (g[s["inner"]],)
    for ax, (b, e) in enumerate(s["grow"]):  # each padded axis pulls its gradient back through a 0/1 matrix
        if b or e:
            source = np.pad(np.arange(a.shape[ax]), (b, e), mode=s["np_mode"])
            m = np.zeros((source.size, a.shape[ax]), dtype=g._array.dtype)
            m[np.arange(source.size), source] = 1
            g = moveaxis(matmul(moveaxis(g, ax, -1), const(to_module(m, xp))), -1, ax)
    return (g,)


@rule("_triangle.<locals>.<lambda>")
def _tril_triu(s: Saved, g: Tensor) -> tuple:
    a = g._array
    return (g * const(s["cut"](array_module(a).ones(a.shape, a.dtype), s["diagonal"])),)


@rule("written.<locals>.backward")
def _written(s: Saved, g: Tensor) -> tuple:
    """``x[idx] = v`` in the graph: x's gradient is g but where written, v's is g there."""
    idx, won, vshape = s["idx"], s["won"], s["vshape"]
    gx = gv = None
    if s.wants(0):
        keep = array_module(g._array).ones(g._array.shape, g._array.dtype)
        keep[idx] = 0
        gx = g * const(keep)
    if s.wants(1):
        gv = g[idx]
        if won is not None:  # a value overwritten by a later one at the same place gets nothing
            gv = gv * const(won.astype(g._array.dtype))
        if len(vshape) > gv.ndim:
            gv = reshape(gv, [1] * (len(vshape) - gv.ndim) + list(gv.shape))
        gv = fit(gv, (vshape, s["vdtype"]))
    return gx, gv


@rule("_to_place.<locals>.<lambda>")
def _moved(s: Saved, g: Tensor) -> tuple:
    """``x.cpu()``/``x.cuda()``: the gradient moves back to where x was (recorded, as the move)."""
    return (_to_place(g, s["src"]),)


@rule("roll.<locals>.<lambda>")
def _roll(s: Saved, g: Tensor) -> tuple:
    if "back" in s:
        return (roll(g, s["back"], list(s["axes"])),)
    return (reshape(roll(reshape(g, [-1]), [-s["shifts"][0]]), list(s["src"])),)


@rule("sort.<locals>.<lambda>")
def _sort(s: Saved, g: Tensor) -> tuple:
    return (take_along_axis(g, wrap(inverse_order(s["order"], s["ax"])), s["ax"]),)


@rule("topk.<locals>.backward")
def _topk(s: Saved, g: Tensor) -> tuple:
    ax, n, k = s["ax"], s["n"], s["k"]
    rest = list(g.shape)
    rest[ax] = n - k
    whole = concat([g, wrap(s["xp"].zeros(rest, dtype=g._array.dtype))], axis=ax)
    return (take_along_axis(whole, wrap(inverse_order(s["order"], ax)), ax),)


# ---- writes at indices (index_ops): linear in what they write, their masks constants -----------

def _zero_at(g: Tensor, key: Any) -> Tensor:
    """g with the places `key` addresses zeroed (recorded: a constant mask)."""
    keep = array_module(g._array).ones(g._array.shape, g._array.dtype)
    keep[key] = 0
    return g * const(keep)


@rule("index_add.<locals>.<lambda>")
def _index_add(s: Saved, g: Tensor) -> tuple:
    return g * 1, g[s["key"]] * s["alpha"]


@rule("index_fill.<locals>.backward")
def _index_fill(s: Saved, g: Tensor) -> tuple:
    return (_zero_at(g, s["key"]),)


@rule("scatter.<locals>.backward")
def _scatter(s: Saved, g: Tensor) -> tuple:
    return _zero_at(g, s["key"]), g[s["key"]]


@rule("scatter_nd_add.<locals>.<lambda>")
def _scatter_nd_add(s: Saved, g: Tensor) -> tuple:
    return g * 1, g[s["key"]]


@rule("gather_nd.<locals>.backward")
def _gather_nd(s: Saved, g: Tensor) -> tuple:
    return (scattered(g, s["shape"], s["key"], True),)


@rule("put_along_axis.<locals>.backward")
def _put_along_axis(s: Saved, g: Tensor) -> tuple:
    reduce, flat, shape, vt = s["reduce"], s["flat"], s["shape"], s["vt"]
    if s["factors"]:
        raise NotImplementedError(f"grad(create_graph=True) through put_along_axis(reduce={reduce!r})")
    xp, count, include_self = s["xp"], s["count"], s["include_self"]
    gf = reshape(g, [-1])
    dtype = g._array.dtype
    if reduce == "mean":
        mean_scale = s["mean_scale"]
        own = xp.where(count > 0, mean_scale if include_self else 0, 1).astype(dtype)
        written = mean_scale[flat].astype(dtype)
    else:
        own = xp.ones(gf.shape, dtype)
        if reduce == "assign" or not include_self:
            own[flat] = 0
        written = s["win"].astype(dtype) if reduce == "assign" else xp.ones(flat.shape, dtype)
    ga = reshape(gf * const(own), list(s["a"].shape))
    gv = None if vt is None else fit(reshape(gf[flat] * const(written), list(shape)), (vt._array.shape, dtype))
    return ga, gv
