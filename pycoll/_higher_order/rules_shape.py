"""Rules for shape ops and indexing (`pycoll.shape_ops`): reshape, transpose, expand, concat,
stack, split, clone and ``x[index]``, whose gradient is `scattered` (an op of its own here, so
that it can be differentiated again: its gradient is the same indexing)."""
from __future__ import annotations

from typing import Any

from pycoll._higher_order.saved import Saved, fit, rule
from pycoll._tensor_ops import op_output
from pycoll.device import array_module
from pycoll.shape_ops import concat, reshape, scatter_add, transpose
from pycoll.tensor import Tensor, wrap


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
