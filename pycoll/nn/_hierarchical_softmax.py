"""Softmax approximations over many classes (paddle.nn.functional names): hsigmoid_loss (a binary
tree of sigmoid classifiers) and adaptive_log_softmax_with_loss (a head softmax over the frequent
classes and one entry per tail cluster, each cluster with its own low-rank softmax).

Both are composed of differentiable pycoll ops with paddle 3.3.1's formulas and quirks (noted where
they occur); the tree paths and cluster memberships follow from the integer labels alone and are
worked out on the arrays first.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor, require_floating
from pycoll.device import array_module
from pycoll.index_ops import take_along_axis
from pycoll.math_ops import clip, exp, log, matmul, mean, sum
from pycoll.nn._activation_functional import log_softmax
from pycoll.search_ops import gather
from pycoll.tensor import Tensor, wrap

__all__ = ["hsigmoid_loss", "adaptive_log_softmax_with_loss"]


def _default_tree(labels: Any, num_classes: int) -> Tuple[Any, Any, Any, int]:
    """(node index, bit, on-path mask) per sample and step, and the path width, of paddle's default
    tree: class l is leaf c = l + num_classes of a heap-numbered complete tree; step j of its path
    asks node (c >> (j + 1)) - 1 for bit j of c, for j below floor(log2(c))."""
    xp = array_module(labels)
    width = (num_classes - 1).bit_length()
    code = labels.astype(np.int64) + num_classes
    steps = xp.arange(width)
    length = xp.floor(xp.log2(code.astype(np.float64))).astype(np.int64)
    nodes = (code[:, None] >> (steps + 1)) - 1
    bits = (code[:, None] >> steps) & 1
    return nodes, bits, steps < length[:, None], width


def _custom_tree(path_table: Tensor, path_code: Tensor, rows: int) -> Tuple[Any, Any, Any, int]:
    """The same from a custom tree: a path runs up to its first negative node index."""
    table, code = as_tensor(path_table)._array, as_tensor(path_code)._array
    if table.ndim != 2 or table.shape[0] != rows or code.shape != table.shape:
        raise ValueError(f"hsigmoid_loss: path_table and path_code must both be [N={rows}, L], got shapes "
                         f"{list(table.shape)} and {list(code.shape)}")
    if table.dtype.kind not in "iu" or code.dtype.kind not in "iu":
        raise TypeError(f"hsigmoid_loss: path_table and path_code must hold integers, got {table.dtype} and "
                        f"{code.dtype}")
    on_path = array_module(table).cumprod(table >= 0, axis=1).astype(bool)
    return table, code, on_path, table.shape[1]


def hsigmoid_loss(input: Tensor, label: Tensor, num_classes: int, weight: Tensor,  # noqa: A002
                  bias: Optional[Tensor] = None, path_table: Optional[Tensor] = None,
                  path_code: Optional[Tensor] = None, is_sparse: bool = False, name: Optional[str] = None) -> Tensor:
    """Hierarchical sigmoid loss of input [N, D] for the labels [N, 1]: at each node on a sample's
    path, softplus(p) - bit * p with p = input . weight[node] + bias[node] clipped to [-40, 40]
    (the gradient passes the clip, as paddle's kernel's does), summed over the path: [N, 1].
    The tree is paddle's default one over num_classes leaves (weight [num_classes - 1, D]), or the
    custom one given by path_table / path_code ([N, L] node indices, -1 ending a path, and bits).
    As paddle's kernel, each step a path is shorter than the widest one adds log(2). `is_sparse`
    is accepted for compatibility (gradients are dense)."""
    fn = "hsigmoid_loss"
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or num_classes < 2:
        raise ValueError(f"{fn}: num_classes must be an int >= 2, got {num_classes!r}")
    input = require_floating(as_tensor(input), fn, "input")
    weight = as_tensor(weight)
    if input.ndim != 2 or weight.ndim != 2 or weight.shape[1] != input.shape[1]:
        raise ValueError(f"{fn}: input must be [N, D] and weight [nodes, D], got {input.shape} and {weight.shape}")
    rows = input.shape[0]
    labels = as_tensor(label)._array
    if labels.dtype.kind not in "iu" or labels.size != rows:
        raise ValueError(f"{fn}: label must hold N={rows} integer class ids ([N, 1]), got shape "
                         f"{list(labels.shape)} and dtype {labels.dtype}")
    if (path_table is None) != (path_code is None):
        raise ValueError(f"{fn}: give path_table and path_code together (a custom tree), or neither")
    if path_table is None:
        labels = labels.reshape(-1)
        if rows and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
            raise ValueError(f"{fn}: label ids must lie in [0, {num_classes})")
        nodes, bits, on_path, width = _default_tree(labels, num_classes)
    else:
        nodes, bits, on_path, width = _custom_tree(path_table, path_code, rows)
    xp = array_module(nodes)
    safe = xp.where(on_path, nodes, 0).astype(np.int64)
    if safe.size and int(safe.max()) >= weight.shape[0]:
        raise ValueError(f"{fn}: the paths reach node {int(safe.max())}, weight has {weight.shape[0]} rows")
    flat = wrap(safe.reshape(-1))
    picked = gather(weight, flat, axis=0).reshape([rows, width, input.shape[1]])
    logits = sum(picked * input.reshape([rows, 1, input.shape[1]]), axis=2)
    if bias is not None:
        logits = logits + gather(as_tensor(bias).reshape([-1]), flat, axis=0).reshape([rows, width])
    logits = logits + (clip(logits, -40.0, 40.0) - logits).detach()  # clipped value, unclipped gradient
    mask = wrap(on_path.astype(input.dtype))
    terms = (log(1 + exp(logits)) - wrap(bits.astype(input.dtype)) * logits) * mask
    padding = (width - on_path.sum(axis=1, keepdims=True)) * math.log(2.0)
    return sum(terms, axis=1, keepdim=True) + wrap(padding.astype(input.dtype))


def _cluster_bounds(cutoffs: Sequence[Any]) -> List[int]:
    bounds = [0]
    for c in cutoffs:
        value = int(c.item() if isinstance(c, Tensor) else c)
        if value <= bounds[-1]:
            raise ValueError(f"adaptive_log_softmax_with_loss: cutoffs must be increasing positive ints, got "
                             f"{list(cutoffs)}")
        bounds.append(value)
    return bounds


def adaptive_log_softmax_with_loss(input: Tensor, label: Tensor, head_weight: Tensor,  # noqa: A002
                                   tail_weights: Sequence[Sequence[Tensor]], cutoffs: Sequence[Any],
                                   head_bias: Optional[Tensor] = None,
                                   name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """(output, loss): output[n] the log-probability of label[n] (input [N, in], label [N]; or
    input [in] and a 0-d label), loss the mean of -output. cutoffs ends with the number of classes:
    labels below cutoffs[0] are scored by the head, linear(input, head_weight, head_bias), whose
    column cutoffs[0] + i - 1 stands for tail cluster i; a label in cluster i [cutoffs[i - 1],
    cutoffs[i]) adds its log-probability within the cluster, from input @ tail_weights[i - 1][0]
    @ tail_weights[i - 1][1]."""
    fn = "adaptive_log_softmax_with_loss"
    input, label = require_floating(as_tensor(input), fn, "input"), as_tensor(label)
    if label.ndim == 1:
        if input.ndim != 2:
            raise ValueError(f"{fn}: a 1-D label needs a 2-D input, got input shape {input.shape}")
        if input.shape[0] != label.shape[0] and label.shape[0] != 0:
            raise ValueError(f"{fn}: input and label must have the same batch size, got {input.shape[0]} and "
                             f"{label.shape[0]}")
    elif label.ndim == 0:
        if input.ndim != 1:
            raise ValueError(f"{fn}: a 0-D label needs a 1-D input, got input shape {input.shape}")
    else:
        raise ValueError(f"{fn}: label must be 0-D or 1-D (multi-label is not supported), got shape {label.shape}")
    batched = label.ndim == 1
    x = input if batched else input.reshape([1, -1])
    lab = label._array.reshape(-1)
    if lab.dtype.kind not in "iu":
        raise TypeError(f"{fn}: label must hold integer class ids, got dtype {lab.dtype}")
    bounds = _cluster_bounds(cutoffs)
    if len(tail_weights) < len(bounds) - 2:
        raise ValueError(f"{fn}: {len(bounds) - 2} tail clusters need as many tail_weights pairs, got "
                         f"{len(tail_weights)}")
    xp = array_module(lab)
    if lab.size and (int(lab.min()) < 0 or int(lab.max()) >= bounds[-1]):
        raise ValueError(f"{fn}: label values should be in [0, n_classes - 1] = [0, {bounds[-1] - 1}], but values "
                         f"in range [{int(lab.min())}, {int(lab.max())}] were found")
    head_column = lab.copy()
    output = None
    for i in range(1, len(bounds) - 1):
        rows = xp.nonzero((lab >= bounds[i]) & (lab < bounds[i + 1]))[0]
        if rows.size == 0:
            continue
        head_column[rows] = bounds[1] + i - 1
        first, second = tail_weights[i - 1]
        members = gather(x, wrap(rows.astype(np.int64)), axis=0)
        logprob = log_softmax(matmul(matmul(members, first), second), axis=1)
        local = take_along_axis(logprob, wrap((lab[rows] - bounds[i]).astype(np.int64)[:, None]), axis=1)
        owner = wrap((xp.arange(lab.shape[0])[:, None] == rows[None, :]).astype(input.dtype))
        placed = matmul(owner, local).reshape([-1])
        output = placed if output is None else output + placed
    head = matmul(x, head_weight)
    if head_bias is not None:
        head = head + head_bias
    picked = take_along_axis(log_softmax(head, axis=1), wrap(head_column[:, None].astype(np.int64)), axis=1)
    output = picked.reshape([-1]) if output is None else output + picked.reshape([-1])
    loss = mean(-output)
    return (output if batched else output.reshape([])), loss
