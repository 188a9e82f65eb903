"""Where an op's operands must lie before it computes on their pieces: paddle's SPMD rules on the
input side, for the ops whose pieces would not fit together otherwise (a matmul whose operands
split its contraction differently, a concat of inputs split differently or along the joined
dimension, picking rows along a split dimension, an op that needs a whole dimension: a running
sum, a sort, a reduction that is no sum of the pieces' along it, a reshape that would move the
split across dimensions). paddle reshards such operands before the op; so does pycoll
(``propagation``), and the rules of ``spmd_rules.py`` then place the result.

A rule sees, along one mesh dimension, each operand's whole shape and placement (None: not a
tensor, or a plain tensor, which is whole) and gives the placement each must have there; its
facts are the op's own (an axis...), ``ranks`` (how many ranks that mesh dimension has) and
``grad`` (whether the result takes a gradient).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from pycoll.distributed.auto_parallel.placements import Placement, Replicate, Shard

Shapes = Sequence[Optional[Tuple[int, ...]]]
# layers that compute each sample (and, pools, each channel) on its own: the dimensions they tell
# (``axes``) are made whole, a batch split stays (spmd_rules)
PER_SAMPLE = ("_conv", "_conv_transpose", "_max_pool", "_avg_pool", "_adaptive_avg_pool", "_adaptive_max_pool",
              "_normalize_groups", "normalize_batch")
# ops along the axes they tell (made whole): a split of any other dimension stays (spmd_rules),
# their result having the input's dimensions there (the fft family, pad, interpolate...)
ALONG_TOLD = ("interpolate", "pad", "normalize", "local_response_norm", "unfold", "renorm", "_c2c", "_r2c", "_c2r")
Along = List[Optional[Placement]]


def _dim(p: Optional[Placement]) -> Optional[int]:
    return p.get_dim() if p is not None and p.is_shard() else None


def _matmul(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """x [..., M, K] @ y [..., K, N]: a contraction split in one operand is split in the other
    too (the result is then Partial); split against another split, it is made whole. x split
    along M and y along N (``o @ o.T`` of a batch split by rows): y is made whole (paddle's
    rule; the result is split along M)."""
    (xs, ys), (xp, yp) = shapes, along
    x_k, y_k = len(xs) - 1, (0 if len(ys) == 1 else len(ys) - 2)
    xd, yd = _dim(xp), _dim(yp)
    if xd == x_k and yd != y_k:
        return [xp, Shard(y_k)] if yd is None else [Replicate(), yp]
    if yd == y_k and xd != x_k:
        return [Shard(x_k), yp] if xd is None else [xp, Replicate()]
    if len(xs) >= 2 and len(ys) >= 2 and xd == len(xs) - 2 and yd == len(ys) - 1:
        return [xp, Replicate()]
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


def _whole_along(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """The op runs along ``axes`` of its first operand (None: all of them, as paddle's rules
    that have no split form replicate): a split there is made whole, other splits stay."""
    d, axes = _dim(along[0]), facts["axes"]
    if d is not None and (axes is None or d in axes):
        return [Replicate()] + list(along[1:])
    return list(along)


def _all_whole(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """Every tensor operand made whole: an op that reads all of its operands at once (a
    histogram's range, a search, a scatter into positions anywhere; paddle replicates them)."""
    return [None if p is None else Replicate() for p in along]


def _rest_whole(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """The first operand keeps its placement, the others are made whole (isin's test elements:
    each element of the first is looked up among all of them)."""
    return [along[0]] + [None if p is None else Replicate() for p in along[1:]]


def _per_channel(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """prelu's x and weight (one slope, or one per channel along ``facts["channel"]``): a weight
    of several slopes is cut as x along the channels; any other weight is whole."""
    (xs, ws), (xp, wp) = shapes, along
    if ws is not None and math.prod(ws) > 1 and _dim(xp) == facts["channel"] % max(len(xs), 1):
        return [xp, Shard(0)]
    return [xp, None if wp is None else Replicate()]


def _whole_if(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """Every tensor operand made whole when ``facts["whole"]`` (e.g. kl_div's 'batchmean', which
    divides by its piece's rows); else as the operands broadcast together (``_elementwise``)."""
    if facts["whole"]:
        return _all_whole(shapes, along, facts)
    return _elementwise(shapes, along, facts)


def _mean(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """The mean over an uneven split (5 rows on 2 ranks) is no mean of the pieces' means: that
    dimension is made whole first. An even one stays (the result is Partial AVG)."""
    d, axes = _dim(along[0]), facts["axes"]
    if d is not None and (axes is None or d in axes) and shapes[0][d] % facts["ranks"]:
        return [Replicate()]
    return list(along)


def _class_scores(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """cross_entropy's and nll_loss's scores and label (the label: the scores' shape without the
    class ``axis``, or with 1 there, or the same shape for soft labels). A label whole where the
    scores are split along a batch dimension is cut as they are (and scores whole beside a split
    label are cut as it is); a split along the class axis, an uneven split under ``mean``, and a
    ``mean`` that divides by a count of the labels (``counted``: ignore_index >= 0 or class
    weights: a sum over every rank's labels) make both whole."""
    (xs, ls), (xp, lp) = shapes, along
    if ls is None or not isinstance(facts["axis"], numbers.Integral) or not -len(xs) <= facts["axis"] < len(xs) or (
            len(ls) not in (len(xs) - 1, len(xs))):
        return list(along)  # the op itself says what is wrong
    ax = facts["axis"] % len(xs)
    same = len(ls) == len(xs)

    def label_dim(d: int) -> int:
        return d if same or d < ax else d - 1
    d = _dim(xp)
    if d is None and _dim(lp) is not None:
        e = _dim(lp)
        d = e if same or e < ax else e + 1
    if d is None:
        return list(along)
    if d == ax or (facts["mean"] and (facts["counted"] or xs[d] % facts["ranks"])) or ls[label_dim(d)] != xs[d]:
        return [Replicate(), None if lp is None else Replicate()]
    return [Shard(d), Shard(label_dim(d))]


def _linear(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """x [..., in] @ weight [in, out] + bias: x split along a batch dimension beside a split
    weight makes the weight (and its bias) whole, as paddle reshards it (the result keeps x's
    split); other cases are the tensor-parallel layouts spmd_rules places."""
    xd, wd = _dim(along[0]), _dim(along[1])
    if xd is not None and xd == len(shapes[0]) - 1 and wd is None:
        return [along[0], Shard(0)] + list(along[2:])  # x split along its features: row-parallel, Partial
    if wd == 0 and xd is None:  # a weight split by rows (its input features): x split to match, as matmul's
        return [Shard(len(shapes[0]) - 1), along[1]] + list(along[2:])
    if xd is None or xd == len(shapes[0]) - 1 or wd is None:
        return list(along)
    return [along[0], Replicate()] + [None if p is None else Replicate() for p in along[2:]]


def _embedding(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """ids [...] picking rows of a split weight [vocab, dim]: the weight is made whole (the ids
    name rows anywhere); the ids keep their split."""
    return [along[0], None if along[1] is None else Replicate()]


def _copied(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """copy_(x, src) of x's shape: src laid as x is, so that each rank copies its own piece (x
    keeps its placements; a plain x takes the whole)."""
    if shapes[0] != shapes[1]:
        return list(along)
    return [along[0], along[0] if along[0] is not None else (None if along[1] is None else Replicate())]


def _extreme(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """max and min over a split are Partial (the max of the pieces' maxima), but their gradient
    goes to the elements equal to the whole maximum: made whole first where one is taken, and
    where the split is uneven (1 row on 2 ranks: a piece may be empty, with no maximum)."""
    d = _dim(along[0])
    if facts["grad"] or (d is not None and shapes[0][d] % facts["ranks"]):
        return _whole_along(shapes, along, facts)
    return list(along)


def _elementwise(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """Operands broadcast together (shapes aligned from the right) split as the first split
    one: each is cut alike where it spans that dimension (a whole operand too), and made whole
    where it does not or is split elsewhere."""
    ndim = max(len(s) for s in shapes if s is not None)
    first = next(((s, p) for s, p in zip(shapes, along) if _dim(p) is not None), None)
    if first is None:
        return list(along)
    size = first[0][_dim(first[1])]
    at = _dim(first[1]) + ndim - len(first[0])  # the split dimension, in the result's terms
    wanted: Along = []
    for shape, p in zip(shapes, along):
        j = None if shape is None else at - (ndim - len(shape))
        if j is not None and 0 <= j < len(shape) and shape[j] == size > 1:
            wanted.append(Shard(j))
        else:
            wanted.append(Replicate() if _dim(p) is not None else p)
    return wanted


def _expand_as(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """x broadcast to y's shape lies as y does (paddle's rule): split where y is, where x spans
    that dimension, else whole."""
    (xs, ys), (xp, yp) = shapes, along
    yd = _dim(yp)
    j = None if yd is None else yd - (len(ys) - len(xs))
    if j is not None and 0 <= j < len(xs) and xs[j] == ys[yd] > 1:
        return [Shard(j), yp]
    return [Replicate() if xp is not None else None, yp]


def whole_target(shape: Sequence[int], target: Sequence[int]) -> Tuple[int, ...]:
    """A reshape's ``target`` for a tensor of whole ``shape``, its -1 inferred (0s resolved)."""
    size, known = math.prod(shape), math.prod(n for n in target if n != -1)
    if list(target).count(-1) > 1 or (-1 in target and (known == 0 or size % known)) or (
            -1 not in target and known != size):
        raise ValueError(f"reshape: cannot reshape a tensor of shape {list(shape)} into {list(target)}")
    return tuple(size // known if n == -1 else n for n in target)


def moved_split(shape: Sequence[int], d: int, out: Sequence[int]) -> Optional[int]:
    """Where a reshape of whole ``shape`` to ``out`` moves a split of dimension ``d``: to the
    dimension ``e`` of more than one element with as many elements before it (row-major, each
    rank's block of the rows is then a block of ``out[e]``'s, when ``out[e]`` divides as evenly);
    None where the split would be spread across dimensions."""
    before = math.prod(shape[:d])
    for e, n in enumerate(out):
        if math.prod(out[:e]) == before and n > 1 and 0 not in shape:
            return e
    return None


def _reshape(shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """A split the reshape keeps in one dimension of the result, in even blocks, stays; any
    other is made whole first (paddle's rule: [4, 6] split by columns, reshaped to [8, 3])."""
    d, shape = _dim(along[0]), shapes[0]
    if d is None:
        return list(along)
    try:
        target = whole_target(shape, facts["shape"])
    except ValueError:
        return list(along)  # reshape itself says why
    e, ranks = moved_split(shape, d, target), facts["ranks"]
    if e is None or shape[d] % ranks or target[e] % ranks:
        return [Replicate()]
    return list(along)


_RULES: Dict[str, Callable[[Shapes, Along, Dict[str, Any]], Along]] = {
    "matmul": _matmul, "concat": _concat, "gather": _gather, "index": _index, "where": _elementwise,
    "expand_as": _expand_as, "reshape": _reshape, "max": _extreme, "min": _extreme,
    "mean": _mean, "cross_entropy": _class_scores, "nll_loss": _class_scores, "linear": _linear, "embedding": _embedding, "copy_": _copied,
    **{name: _elementwise for name in ("binary_cross_entropy", "binary_cross_entropy_with_logits", "masked_fill",
                                       "label_smooth")},
    "isin": _rest_whole, "prelu": _per_channel,
    "_all_whole": _all_whole, "kl_div": _whole_if, "allclose": _whole_if, "equal_all": _whole_if, "is_empty": _whole_if,
    **{name: _whole_along for name in ("cumsum", "cumprod", "sort", "argsort", "topk", "flip", "roll", "tile",
                                       "expand", "split", "std", "var", "logsumexp", "prod", "norm", "argmax",
                                       "argmin", "_running_extreme", "logcumsumexp", "kthvalue", "median",
                                       "quantile", "mode", "nanmean", "_singular_norm", "softmax", "log_softmax",
                                       "gumbel_softmax", "diagonal", "_embed", "_triangle", "layer_norm",
                                       "_matrices", "maxout", "_lp_pool",
                                       *PER_SAMPLE, *ALONG_TOLD)}}


def needed(name: str, shapes: Shapes, along: Along, facts: Dict[str, Any]) -> Along:
    """The placements op ``name``'s operands must have along one mesh dimension."""
    rule = _RULES.get(name)
    return rule(shapes, along, facts) if rule is not None else list(along)
