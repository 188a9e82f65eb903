"""paddle.nn.functional.margin_cross_entropy: the combined-margin softmax loss of ArcFace
(margin2), CosFace (margin3) and SphereFace (margin1).

The label's logit x (a cosine) becomes cos(margin1 * acos(x) + margin2) - margin3, every logit is
multiplied by `scale`, and the loss is the softmax cross-entropy of the result. As in paddle's
kernel the acos/cos pair is only applied when margin1 != 1 or margin2 != 0, and margin3 only when
it is not 0, so plain scaled softmax keeps the logits bit for bit.

The margin step (`margin_logits`) is composed of differentiable ops, so the logits' gradient is
paddle's: (softmax - onehot) * scale, times m1 sin(m1 acos x + m2) / sqrt(1 - x^2) in the label's
column. With a group (model parallel: `logits` is this rank's block of classes) the function hands
over to pycoll.distributed.fleet.layers.mpu.margin_loss's class_split_margin_cross_entropy, reached
through the distributed face (loaded whenever a Group exists), which imports it only then.
"""
from __future__ import annotations

import sys
from typing import Any, Optional, Tuple, Union

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.math_ops import cast, mean, scale as scale_op, sum as sum_op
from pycoll.nn._activation_functional import softmax
from pycoll.nn._class_losses import cross_entropy
from pycoll.index_ops import take_along_axis
from pycoll.search_ops import where
from pycoll.tensor import Tensor, wrap
from pycoll.unary_ops import acos, cos

__all__ = ["margin_cross_entropy"]

_REDUCTIONS = ("mean", "sum", "none", None)
_EPS = 1e-8  # paddle's test for a margin that is "not there"


def check_margin_inputs(logits: Any, label: Any, reduction: Optional[str]) -> Tuple[Tensor, Tensor]:
    """(logits, label as [N, 1]) after paddle's checks, raised as ValueError/TypeError."""
    fn = "margin_cross_entropy"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum', 'none' or None, got {reduction!r}")
    logits, label = as_tensor(logits), as_tensor(label)
    if not is_floating(logits.dtype):
        raise TypeError(f"{fn}: logits must be float16, float32 or float64, got dtype {logits.dtype}")
    if label.dtype.kind not in "iu":
        raise TypeError(f"{fn}: label must hold integer class ids (int32 or int64), got dtype {label.dtype}")
    if logits.ndim != 2 or logits.shape[-1] == 0:
        raise ValueError(f"{fn}: logits must be [N, num_classes] with num_classes > 0, got shape {logits.shape}")
    if label.ndim not in (1, 2) or label.shape[0] != logits.shape[0] or (label.ndim == 2 and label.shape[1] != 1):
        raise ValueError(f"{fn}: label must be [{logits.shape[0]}] or [{logits.shape[0]}, 1] for logits of shape "
                         f"{logits.shape}, got shape {label.shape}")
    if label.ndim == 1:
        label = wrap(label._array.reshape(-1, 1))
    return logits, label


def margin_logits(logits: Tensor, column: Any, mine: Any, margin1: float, margin2: float, margin3: float,
                  scale: float) -> Tensor:
    """scale * logits with the label's column replaced by cos(m1 acos x + m2) - m3 (differentiable).

    column: [N, 1] integer array, the label's column in `logits` (any valid column where the label
    is not in this block); mine: [N, 1] bool array, whether the row's label is in this block."""
    xp = array_module(logits._array)
    picked = take_along_axis(logits, wrap(column), axis=-1)
    target = picked
    if abs(margin1 - 1.0) > _EPS or abs(margin2) > _EPS:
        # rows whose label lives elsewhere see 0, so acos's derivative stays finite there
        safe = where(wrap(mine), picked, wrap(xp.zeros((), picked._array.dtype)))
        target = cos(scale_op(acos(safe), float(margin1), float(margin2)))
    if abs(margin3) > _EPS:
        target = scale_op(target, 1.0, -float(margin3))
    onehot = (xp.arange(logits.shape[-1])[None, :] == column) & mine
    return scale_op(where(wrap(onehot), target, logits), float(scale))


def reduce_loss(loss: Tensor, reduction: Optional[str]) -> Tensor:
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum_op(loss)
    return loss


def margin_cross_entropy(logits: Tensor, label: Tensor, margin1: float = 1.0, margin2: float = 0.5,
                         margin3: float = 0.0, scale: float = 64.0, group: Any = None,
                         return_softmax: bool = False,
                         reduction: Optional[str] = "mean") -> Union[Tensor, Tuple[Tensor, Tensor], None]:
    """Margin softmax loss of cosine `logits` [N, num_classes] and integer `label` ([N] or [N, 1]).

    group=False computes on this process alone; a Group (or None inside a distributed job of more
    than one rank: the world, as paddle's None) treats `logits` as this rank's block of classes
    (blocks may differ in width; ranks in group order) and combines the softmax over the group.
    Returns the loss ([N, 1] for reduction None/'none', else a scalar) and, with return_softmax,
    the softmax of the margin logits (this rank's block; it carries no gradient). A process
    outside `group` gets None, as from paddle."""
    if not (group is None or group is False or hasattr(group, "is_member")):
        raise ValueError(f"margin_cross_entropy: group must be False, None or a Group, got {group!r}")
    if hasattr(group, "is_member") and not group.is_member():
        return None
    logits, label = check_margin_inputs(logits, label, reduction)
    if _in_multi_rank_job(group):
        class_split = sys.modules["pycoll.distributed"].class_split_margin_cross_entropy
        return class_split(logits, label, margin1, margin2, margin3, scale, group, return_softmax, reduction)
    ids = label._array.astype("int64")
    classes = logits.shape[-1]
    if bool(((ids < 0) | (ids >= classes)).any()):
        raise ValueError(f"margin_cross_entropy: label ids must lie in [0, {classes}), got "
                         f"[{int(ids.min())}, {int(ids.max())}]")
    work = cast(logits, "float32") if logits.dtype.itemsize < 4 else logits
    z = margin_logits(work, ids, ids >= 0, margin1, margin2, margin3, scale)
    loss = reduce_loss(cross_entropy(z, wrap(ids), reduction="none"), reduction)
    if work is not logits:
        loss = cast(loss, logits.dtype)
    if not return_softmax:
        return loss
    return loss, wrap(softmax(z)._array.astype(logits.dtype, copy=False))


def _in_multi_rank_job(group: Any) -> bool:
    """Whether the class softmax spans ranks: a Group was given, or group is None and this
    process belongs to an initialised job of more than one rank (pycoll.distributed, loaded)."""
    if group is False:
        return False
    if group is not None:
        return True
    dist = sys.modules.get("pycoll.distributed")
    return dist is not None and dist.is_initialized() and dist.get_world_size() > 1
