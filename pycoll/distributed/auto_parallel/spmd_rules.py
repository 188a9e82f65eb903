"""Where an op's result lies along one mesh dimension, given where its inputs lie there: paddle's
SPMD rules for pycoll's ops, along a dimension that splits data (``Shard``) or holds partial
values (``Partial``). The op has already run on the local pieces; a rule says what that local
result is a piece of. An op without a rule, or a case a rule cannot place, is refused by name
(``Refused``) rather than given a wrong whole: reshard to Replicate first, or use local_map.

Inputs are seen as (whole shape, placement along the dimension): the rules reason on the whole
shapes, which every rank shares (a rank's piece may hold one element along a split dimension,
which its local shape cannot tell from a dimension of size 1); a plain tensor is whole there,
and so is, inside its own tensor-parallel Linear, a parameter that Linear cuts (see
``propagation.parameters_whole``); a Python number is None. Partial inputs reach these rules only
from ops that take no operand hook (autograd PyLayers): the others make them whole first.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.distributed.auto_parallel.operand_rules import ALONG_TOLD, PER_SAMPLE, basic_items, moved_split, whole_target
from pycoll.distributed.auto_parallel.placements import Partial, Placement, ReduceOp, Replicate, Shard
from pycoll.distributed.auto_parallel.program import closure_value

# elementwise on one tensor (a trailing dimension added, as as_real's and one_hot's, leaves the split
# where it was; ``_replaced``: the in-place fills and random draws; masked_fill, isin, label_smooth and
# prelu: their other operands laid by operand_rules)
UNARY = {"tanh", "exp", "log", "sqrt", "square", "abs", "relu", "sigmoid", "clip", "cast_to", "neg", "gelu",
         "dropout", "clone", "_to_place", "c_identity", "isnan", "isinf", "isfinite",
         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sinc",
         "log2", "log10", "log1p", "expm1", "rsqrt", "reciprocal", "deg2rad", "rad2deg", "erf", "erfinv",
         "lgamma", "digamma", "polygamma", "i0", "i0e", "i1", "i1e", "ceil", "floor", "trunc", "round", "frac",
         "sign", "signbit", "logit", "nan_to_num", "scale", "stanh", "angle", "conj", "real", "imag", "as_real",
         "isneginf", "isposinf", "isreal", "logical_not", "bitwise_not", "one_hot", "_replaced",
         "elu", "celu", "selu", "leaky_relu", "hardtanh", "hardshrink", "softshrink", "tanhshrink", "hardsigmoid",
         "hardswish", "relu6", "silu", "mish", "softplus", "softsign", "log_sigmoid", "thresholded_relu",
         "_alpha_dropout", "_filled", "to_tensor", "frexp", "isin", "masked_fill", "label_smooth", "prelu"}
# "where": its two value operands (the condition takes no gradient); the elementwise losses: input
# and label (operand_rules cuts a whole label as the input)
BINARY = {"add", "subtract", "multiply", "divide", "pow", "compare", "maximum", "minimum", "floor_divide", "remainder",
          "where", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
          "atan2", "copysign", "fmax", "fmin", "gcd", "lcm", "heaviside", "hypot", "logaddexp", "rounded_divide",
          "gammainc", "gammaincc", "lerp", "complex", "nextafter", "isclose", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"}
LINEAR_IN_PARTIAL = {"neg", "clone", "_to_place", "to_tensor", "sum", "mean"}  # f(sum of pieces) = sum of f(piece)
# ops along an axis, their result shaped as their input there: a split elsewhere stays
ALONG_AXIS = {"cumsum", "sort", "argsort", "topk", "roll", "split", "_running_extreme", "_triangle", "maxout"}
# reductions over ``axes``; over a split, those whose pieces' results combine are Partial (any and
# all of bools: their max and min; a 1-norm: a sum), the others need the whole (operand_rules)
REDUCTIONS = {"sum": ReduceOp.SUM, "mean": ReduceOp.AVG, "max": ReduceOp.MAX, "min": ReduceOp.MIN,
              "any": ReduceOp.MAX, "all": ReduceOp.MIN, "argmax": None, "argmin": None, "prod": None, "std": None,
              "var": None, "logsumexp": None, "norm": None, "nansum": ReduceOp.SUM, "nanmean": None,
              "_singular_norm": None, "count_nonzero": ReduceOp.SUM}


class Refused(ValueError):
    """An op the rules cannot place along a split or partial mesh dimension."""


Seen = Tuple[Tuple[int, ...], Placement]  # an input's whole shape and placement (None: not a tensor)


def along(name: str, backward: Callable, seen: Sequence[Optional[Seen]], out: Tuple[int, ...],
          told: Optional[Dict[str, Any]] = None) -> Placement:
    """The result's placement along one mesh dimension where some input is Shard or Partial.
    ``told``: the facts the op gave the operands hook (``placed``), such as its ``axes``."""
    if any(s is not None and s[1].is_shard() for s in seen):
        if any(s is not None and s[1].is_partial() for s in seen):
            raise Refused(f"{name}: one input is split and another partial along the same mesh dimension")
        return _split(name, backward, seen, out, told or {})
    return _partial(name, backward, seen)


def _split(name: str, backward: Callable, seen: Sequence[Optional[Seen]], out: Tuple[int, ...],
           told: Dict[str, Any]) -> Placement:
    (shape, shard), = [s for s in seen if s is not None and s[1].is_shard()][:1]
    d = shard.get_dim()
    if name in UNARY:
        return Shard(d)
    if name in ("softmax", "log_softmax"):
        if closure_value(backward, "axis") % len(shape) == d:
            raise Refused(f"{name} along the split dimension {d}")
        return Shard(d)
    if name == "layer_norm":
        if d in closure_value(backward, "axes"):
            raise Refused(f"layer_norm over the split dimension {d}")
        return Shard(d)
    if name in BINARY:
        return _broadcast(name, seen, out)
    if name in PER_SAMPLE or name in ALONG_TOLD:  # operand_rules made whole what these compute across
        if any(s is not None and not s[1].is_replicated() for s in seen[1:]):
            raise Refused(f"{name}: only its input may be split")
        return Shard(d)
    if name in REDUCTIONS:
        return _reduction(name, backward, told, shape, d, out)
    if name in ALONG_AXIS:
        axes = _fact(backward, told, "axes", "ax", "axis")
        axes = (axes,) if isinstance(axes, numbers.Integral) else axes
        if not isinstance(axes, tuple) or d in axes or len(out) != len(shape):  # None: all of them
            raise Refused(f"{name} along the split dimension {d}")
        return Shard(d)
    if name in ("tile", "expand"):
        return _grown(name, backward, told, shape, d, out)
    if name == "matmul":
        return _matmul(seen, out)
    if name == "linear":
        x, weight, bias = (list(seen) + [None])[:3]
        if (x is None or x[1].is_replicated()) and weight is not None and weight[1] == Shard(1) and (
                bias is None or bias[1] == Shard(0)):
            return Shard(len(out) - 1)  # a weight split by columns (a bias alike): the output's columns
        if x is not None and x[1] == Shard(len(x[0]) - 1) and weight is not None and weight[1] == Shard(0) and (
                bias is None or bias[1].is_replicated()):
            return Partial(ReduceOp.SUM)  # row-parallel: each rank's product of its slices (the bias: once)
    if name in ("linear", "embedding", "c_concat", "c_split", "mp_allreduce"):
        x, others = seen[0], seen[1:]
        last = len(x[0]) - 1 if name != "embedding" else len(x[0])
        if x is None or not x[1].is_shard() or x[1].get_dim() >= last or any(
                s is not None and not s[1].is_replicated() for s in others):
            raise Refused(f"{name}: only its input may be split, and not along its last dimension")
        return Shard(x[1].get_dim())
    if name in ("cross_entropy", "nll_loss"):
        return _class_loss(name, backward, seen, out)
    if name == "reshape":
        return reshape_split(shape, d, whole_target(shape, getattr(backward, "__pycoll_op__", {})["shape"]))
    if name == "transpose":
        perm = list(np.argsort(closure_value(backward, "inverse")))
        return Shard(perm.index(d))
    if name in ("concat", "stack"):
        axis = len(closure_value(backward, "lead"))
        if (name == "concat" and axis == d) or any(s is None or s[1] != shard for s in seen):
            raise Refused(f"{name}: every input split alike, joined along another dimension")
        return Shard(d + 1 if name == "stack" and axis <= d else d)
    if name == "gather":  # rows picked along another dimension (operand_rules makes the split one whole)
        at = closure_value(backward, "at")
        if len(at) - 1 == d:
            raise Refused(f"gather along the split dimension {d}")
        return Shard(d - 1 if len(at) - 1 < d and at[-1].ndim == 0 else d)
    if name == "_getitem":
        return _getitem(closure_value(backward, "index"), d, len(shape))
    raise Refused(f"{name}: no rule for split inputs")


def _class_loss(name: str, backward: Callable, seen: Sequence[Optional[Seen]], out: Tuple[int, ...]) -> Placement:
    """cross_entropy / nll_loss of scores split along a batch dimension, the label split alike
    (operand_rules): the losses keep the split, their sum is Partial SUM, cross_entropy's mean
    over rows Partial AVG (operand_rules made a mean that divides by a count whole)."""
    scores, label = seen[0], seen[1]
    ax = closure_value(backward, "ax") if name == "cross_entropy" else 1
    if scores is None or not scores[1].is_shard() or scores[1].get_dim() == ax:
        raise Refused(f"{name}: input and label must be split alike, along a batch dimension")
    shape, d = scores[0], scores[1].get_dim()
    if label is not None and label[1] != Shard(d if len(label[0]) == len(shape) or d < ax else d - 1):
        raise Refused(f"{name}: input and label must be split alike, along a batch dimension")
    if len(out) == 0:
        mean = name == "cross_entropy" and closure_value(backward, "reduction") == "mean"
        return Partial(ReduceOp.AVG if mean else ReduceOp.SUM)
    return Shard(d if len(out) == len(shape) or d < ax else d - 1)


def _broadcast(name: str, seen: Sequence[Optional[Seen]], out: Tuple[int, ...]) -> Placement:
    """Elementwise with broadcasting: shapes align from the right; a whole operand must not span
    the split dimension (its pieces would meet the wrong rows)."""
    aligned = {s[1].get_dim() + len(out) - len(s[0]) for s in seen if s is not None and s[1].is_shard()}
    if len(aligned) != 1:
        raise Refused(f"{name}: its split inputs are split along different dimensions")
    d_out = aligned.pop()
    for s in seen:
        if s is None or s[1].is_shard():
            continue
        i = d_out - (len(out) - len(s[0]))
        if i >= 0 and s[0][i] != 1:
            raise Refused(f"{name}: a whole operand of shape {list(s[0])} spans the split dimension")
    try:
        np.broadcast_shapes(*[s[0] for s in seen if s is not None])
    except ValueError:
        raise Refused(f"{name}: the whole shapes {[list(s[0]) for s in seen if s is not None]} do not "
                      f"broadcast together") from None
    return Shard(d_out)


def _fact(backward: Callable, told: Dict[str, Any], *names: str) -> Any:
    """What the op told of itself (``__pycoll_op__``, then the facts it gave the operands hook:
    ``told``) or keeps in its backward's closure under the first of ``names`` it has; ``...``
    where it has none of them."""
    info = getattr(backward, "__pycoll_op__", {})
    code = getattr(backward, "__code__", None)
    for name in names:
        if name in info:
            return info[name]
        if name in told:
            return told[name]
        if code is not None and name in code.co_freevars:
            return closure_value(backward, name)
    return ...


def _reduction(name: str, backward: Callable, told: Dict[str, Any], shape: Tuple[int, ...], d: int,
               out: Tuple[int, ...]) -> Placement:
    """Over the axes the op names (the same on every rank, unlike the local sizes): a reduction
    over the split dimension is Partial where its pieces' results combine (``REDUCTIONS``), one
    across it keeps the split (moved down past the axes reduced before it, unless kept)."""
    kind = ReduceOp.SUM if name == "norm" and _fact(backward, told, "p") == 1 else REDUCTIONS[name]
    axes = _fact(backward, told, "axes")
    if axes is ...:
        raise Refused(f"{name}: its axes are not known")
    reduced = set(range(len(shape))) if axes is None else set(axes)
    if d in reduced:
        if kind is None:
            raise Refused(f"{name} over the split dimension {d}")
        return Partial(kind)
    return Shard(d if len(out) == len(shape) else d - sum(1 for i in reduced if i < d))


def _grown(name: str, backward: Callable, told: Dict[str, Any], shape: Tuple[int, ...], d: int,
           out: Tuple[int, ...]) -> Placement:
    """tile and expand: leading dimensions may come first; a split dimension they do not grow
    stays split (a grown one was made whole: operand_rules)."""
    e = d + len(out) - len(shape)
    if name == "tile":
        interleaved = _fact(backward, told, "interleaved")  # [repeats, size] per dimension
        grown = interleaved is ... or interleaved[2 * e] != 1
    else:
        src = _fact(backward, told, "src")  # the input's local shape
        grown = src is ... or src[d] != out[e]
    if grown:
        raise Refused(f"{name} grows the split dimension {d}")
    return Shard(e)


def _matmul(seen: Sequence[Optional[Seen]], out: Tuple[int, ...]) -> Placement:
    """x [..., M, K] @ y [..., K, N] (1-d operands as NumPy treats them)."""
    x, y = seen
    xs, ys = (x[0] if x else ()), (y[0] if y else ())
    xd = x[1].get_dim() if x and x[1].is_shard() else None
    yd = y[1].get_dim() if y and y[1].is_shard() else None
    x_k, y_k = len(xs) - 1, (0 if len(ys) == 1 else len(ys) - 2)
    batches = max(len(xs) - 2, len(ys) - 2, 0)
    if xd is not None and yd is not None:
        if (xd, yd) == (x_k, y_k):
            return Partial(ReduceOp.SUM)  # each rank's product of its slices of the contraction
        at_x, at_y = xd + batches - (len(xs) - 2), yd + batches - (len(ys) - 2)
        if xd < len(xs) - 2 and yd < len(ys) - 2 and at_x == at_y:
            return Shard(at_x)  # the same batch dimension split alike (attention's q @ k^T)
        raise Refused("matmul: both operands split, other than alike along a batch dimension or along "
                      "the contracted one")
    if xd == x_k or yd == y_k:
        raise Refused("matmul: one operand split along the contracted dimension, the other whole")
    if yd is not None:
        if yd != len(ys) - 1:
            raise Refused("matmul: the right operand split along a batch dimension")
        return Shard(len(out) - 1)
    if xd == len(xs) - 2:  # M: the rows
        return Shard(len(out) - (2 if len(ys) >= 2 else 1))
    j = xd - (len(xs) - len(ys))  # the same batch dimension in y
    if 0 <= j < len(ys) - 2 and ys[j] != 1:
        raise Refused("matmul: a whole right operand's batch dimensions span the split dimension")
    return Shard(xd + batches - (len(xs) - 2))


def reshape_split(shape: Sequence[int], d: int, out: Sequence[int]) -> Shard:
    """Where a reshape of whole ``shape`` to ``out`` moves a split of dimension ``d``
    (``operand_rules.moved_split``); Refused where it would spread across dimensions."""
    e = moved_split(shape, d, out)
    if e is None:
        raise Refused(f"reshape {list(shape)} -> {list(out)} moves the split dimension {d} across others")
    return Shard(e)


def _getitem(index: Any, d: int, ndim: int) -> Placement:
    """Indexing keeps the split when it takes the split dimension whole; integers before it drop
    dimensions, None adds one, slices keep them."""
    items = basic_items(index, ndim)
    if items is not None:
        dim, out = 0, 0
        for item in items:
            if item is None:
                out += 1
                continue
            if dim == d:
                if item == slice(None):
                    return Shard(out)
                break
            out += 0 if isinstance(item, numbers.Integral) else 1
            dim += 1
        else:
            return Shard(out + d - dim)  # the index ends before the split dimension
    raise Refused("indexing: the index must take the split dimension whole (and be a basic index: integers, "
                  "slices, None, Ellipsis)")


def _partial(name: str, backward: Callable, seen: Sequence[Optional[Seen]]) -> Placement:
    kinds = {s[1].reduce_type() for s in seen if s is not None and s[1].is_partial()}
    kind = kinds.pop()
    if kinds:
        raise Refused(f"{name}: partial inputs of different reductions")
    linear = kind in (ReduceOp.SUM, ReduceOp.AVG)
    partial_at = [i for i, s in enumerate(seen) if s is not None and s[1].is_partial()]
    if name in LINEAR_IN_PARTIAL and linear:
        return Partial(kind)
    if name == "_filled":  # zeros_like / full_like: the same values on every rank, whatever the input's
        return Replicate()
    if name == "multiply" and linear and len(partial_at) == 1:
        return Partial(kind)
    if name == "divide" and linear and partial_at == [0]:
        return Partial(kind)
    if name in ("add", "subtract") and linear and (len(partial_at) == len(seen) or kind == ReduceOp.AVG):
        return Partial(kind)  # a whole addend adds once to an average, but n times to a sum
    raise Refused(f"{name} of a Partial tensor")


def seen_along(tensors: Sequence[Any], axis: int, placements_of: Callable[[Any], Optional[List[Placement]]]
               ) -> List[Optional[Seen]]:
    """Each input as (whole shape, placement along ``axis``); None for what is not a tensor."""
    out: List[Optional[Seen]] = []
    for t in tensors:
        if t is None:
            out.append(None)
            continue
        placements = placements_of(t)
        out.append((tuple(t.shape), placements[axis] if placements else Replicate()))
    return out
