"""Rules for the ops that are linear in each operand: einsum (its backward's einsums written with
Tensor einsums), bilinear, unfold/fold (each the other's adjoint), embedding's weight gradient (a scatter of the output's gradient), interpolate
(the transposes of its per-axis matrices, or of its taps) and the transposed convolutions, whose forward (a matmul
per group whose columns are scattered onto the output, col2im) is computed again from
matmul, `scattered` and indexing (`recompute.recomputed`)."""
from __future__ import annotations

import math
from typing import Any, List, Optional

from pycoll._higher_order.recompute import recomputed
from pycoll._higher_order.rules_recomputed import window_index
from pycoll._higher_order.rules_shape import scattered
from pycoll._higher_order.saved import Saved, const, fit, rule
from pycoll._tensor_ops import op_output
from pycoll.device import array_module, move, place_of
from pycoll.index_ops import index_select
from pycoll.einsum_ops import diagonal_spelling, einsum
from pycoll.math_ops import matmul, sum as sum_
from pycoll.nn._layout_functional import _from_cols as from_cols, _out_sizes as out_sizes, _to_cols as to_cols
from pycoll.nn._sliding import transpose_taps
from pycoll.reshape_ops import broadcast_to, moveaxis
from pycoll.shape_ops import reshape, transpose, unsqueeze
from pycoll.tensor import Tensor


@rule("einsum.<locals>.backward")
def _einsum(s: Saved, g: Tensor) -> List[Optional[Tensor]]:
    terms, sizes, arrays = s["terms"], s["sizes"], s["arrays"]
    full = [broadcast_to(s.operand(j, a), [sizes[c] for c in term]) for j, (a, term) in enumerate(zip(arrays, terms))]
    return [_operand_grad(g, s["output"], full, terms, i, sizes, arrays[i].shape) if s.wants(i) else None
            for i in range(len(arrays))]


def _operand_grad(g: Tensor, output: str, full: List[Tensor], terms: List[str], i: int, sizes: dict,
                  shape: tuple) -> Tensor:
    """`einsum_ops._operand_grad` with Tensor ops: the einsum of g with the other operands, broadcast
    along the labels of operand i alone, put back on the diagonal of a repeated label, summed
    along the size-1 labels it was broadcast from."""
    term = terms[i]
    others = [j for j in range(len(terms)) if j != i]
    elsewhere = set(output).union(*(terms[j] for j in others))
    labels = list(dict.fromkeys(term))
    found = [c for c in labels if c in elsewhere]
    grad = einsum(f"{','.join([output] + [terms[j] for j in others])}->{''.join(found)}", g, *(full[j] for j in others))
    for k, c in enumerate(labels):
        if c not in elsewhere:
            grad = unsqueeze(grad, k)
    grad = broadcast_to(grad, [sizes[c] for c in labels])
    if len(labels) < len(term):
        xp = array_module(g._array)
        spelt, eyes = diagonal_spelling(term, output)
        grad = einsum(f"{''.join(labels)},{','.join(t for t, _ in eyes)}->{spelt}", grad,
                      *(const(xp.eye(sizes[c], dtype=g._array.dtype)) for _, c in eyes))
    return fit(grad, (shape, g._array.dtype))


@rule("embedding.<locals>.backward")
def _embedding(s: Saved, g: Tensor) -> tuple:
    ids, padding_idx, w_shape = s["ids"], s["padding_idx"], s["w_shape"]
    xp = array_module(ids)
    if padding_idx is not None:
        g = g * const((ids != padding_idx)[..., None].astype(g._array.dtype))
    gw = scattered(g, tuple(w_shape), ids, True)
    if s["scale_grad_by_freq"]:
        counts = xp.bincount(ids.reshape(-1), minlength=w_shape[0])[:, None]
        gw = gw / const(xp.maximum(counts, 1).astype(g._array.dtype))
    return None, gw


@rule("interpolate.<locals>.<lambda>")
def _interpolate(s: Saved, g: Tensor) -> tuple:
    for mat, ax in zip(s["mats"], s["axes"]):  # each axis mapped back by its [out, in] matrix's transpose
        g = moveaxis(matmul(moveaxis(g, ax, -1), const(mat)), -1, ax)
    return (g,)


@rule("interpolate.<locals>.backward")
def _interpolate_taps(s: Saved, g: Tensor) -> tuple:
    """Nearest and the linear modes: each axis gathered back through its transposed taps."""
    place = place_of(g._array)
    for (index, weight), (n_in, _, _), ax in zip(s["taps"], s["shapes"], s["axes"]):
        back_index, back_weight = transpose_taps(index, weight, n_in)
        shape = [1] * g.ndim
        shape[ax] = n_in
        total = None
        for t in range(back_index.shape[1]):
            term = index_select(g, const(move(back_index[:, t], place)), axis=ax)
            term = term * const(move(back_weight[:, t].astype(g._array.dtype).reshape(shape), place))
            total = term if total is None else total + term
        g = total
    return (g,)


@rule("_conv_transpose.<locals>.backward")
def _conv_transpose(s: Saved, g: Tensor) -> tuple:
    nd, channel_last, groups, n, c = s["nd"], s["channel_last"], s["groups"], s["n"], s["c"]
    sizes, kernel, canvas, pads, out_sizes = list(s["sizes"]), list(s["kernel"]), s["canvas"], s["pads"], s["out_sizes"]
    xm, wa = s["xm"], s["wa"]
    xp = array_module(xm)
    o = wa.shape[1] * groups
    spread = window_index(xp, sizes, kernel, s["stride"], s["dilation"])  # input pixel -> its canvas window
    inner = (slice(None), slice(None)) + tuple(slice(b, b + size) for (b, _), size in zip(pads, out_sizes))

    def forward(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        if channel_last:
            x = moveaxis(x, -1, 1)
        rows = matmul(transpose(reshape(x, [n, groups, c // groups, math.prod(sizes)]), [0, 1, 3, 2]),
                      reshape(weight, [groups, c // groups, -1]))  # [n, groups, pixels, o / groups * kernel]
        cols = reshape(rows, [n, groups] + sizes + [-1] + kernel)
        cols = transpose(cols, [0, 1, 2 + nd] + list(range(2, 2 + nd)) + list(range(3 + nd, 3 + 2 * nd)))
        out = scattered(reshape(cols, [n, o] + sizes + kernel), (n, o, *canvas), spread, True)[inner]
        if bias is not None:
            out = out + reshape(bias, [1, o] + [1] * nd)
        return moveaxis(out, 1, -1) if channel_last else out
    x_value = xm.transpose(0, 1, 3, 2).reshape(n, c, *sizes)
    if channel_last:
        x_value = xp.moveaxis(x_value, 1, -1)
    # no gradient depends on the bias's value: zeros stand in for it
    bias_value = None if s.node.inputs[2] is None else xp.zeros(o, wa.dtype)
    return recomputed(s, g, forward, [x_value, wa, bias_value])


@rule("bilinear.<locals>.backward")
def _bilinear(s: Saved, g: Tensor) -> tuple:
    a, b, w = s.operand(0, s["a"]), s.operand(1, s["b"]), s.operand(2, s["w"])
    return (einsum("no,oij,nj->ni", g, w, b) if s.wants(0) else None,
            einsum("no,oij,ni->nj", g, w, a) if s.wants(1) else None,
            einsum("no,ni,nj->oij", g, a, b) if s.wants(2) else None,
            reshape(sum_(g, axis=0), list(s["bias_shape"])) if s.wants(3) else None)


# unfold (im2col) and fold (col2im) are each other's adjoint: each one's gradient is the other,
# recorded as an op of its own here so that it can be differentiated again
def _unfolded(t: Tensor, sizes: list, out: list, kernel: list, stride: list, pads: Any, dilation: list) -> Tensor:
    return op_output(to_cols(t._array, kernel, stride, pads, dilation),
                     lambda g: (from_cols(g, sizes, out, kernel, stride, pads, dilation),), t)


def _folded(t: Tensor, sizes: list, out: list, kernel: list, stride: list, pads: Any, dilation: list) -> Tensor:
    return op_output(from_cols(t._array, sizes, out, kernel, stride, pads, dilation),
                     lambda g: (to_cols(g, kernel, stride, pads, dilation),), t)


@rule("unfold.<locals>.<lambda>", "_unfolded.<locals>.<lambda>")
def _unfold(s: Saved, g: Tensor) -> tuple:
    return (_folded(g, s["sizes"], s["out"], s["kernel"], s["stride"], s["pads"], s["dilation"]),)


@rule("fold.<locals>.<lambda>", "_folded.<locals>.<lambda>")
def _fold(s: Saved, g: Tensor) -> tuple:
    kernel, stride, pads, dilation = s["kernel"], s["stride"], s["pads"], s["dilation"]
    sizes = list(g.shape[2:])  # the image fold made; its grid of blocks follows from it
    return (_unfolded(g, sizes, out_sizes(sizes, kernel, stride, pads, dilation, "fold"), kernel, stride, pads,
                      dilation),)
