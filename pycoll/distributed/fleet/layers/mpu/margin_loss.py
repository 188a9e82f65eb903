"""margin_cross_entropy over logits whose classes are split across a group (paddle's model-parallel
form, PLSC's partial FC): each rank holds [N, its classes] and the whole labels.

The margin is applied where the label's class lives (pycoll.nn._margin_cross_entropy.margin_logits)
and the softmax cross-entropy over the split classes is mp_ops' _c_softmax_with_cross_entropy (one
MAX and one SUM all-reduce; its backward gives every rank its block of softmax - onehot). Blocks may
differ in width, as in paddle: the widths are all-gathered once to place this rank's block.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import pycoll.distributed as dist
from pycoll.device import array_module
from pycoll.math_ops import cast
from pycoll.nn._margin_cross_entropy import margin_logits, reduce_loss
from pycoll.parallel.mp_ops import _c_softmax_with_cross_entropy, group_position
from pycoll.tensor import Tensor, wrap

__all__ = ["class_split_margin_cross_entropy"]


def _block_start(width: int, rank: int, group: Optional[dist.Group], xp: Any) -> Tuple[int, int]:
    """(first class of this rank's block, number of classes in the group)."""
    widths: list = []
    dist.all_gather(widths, xp.asarray([width], dtype=xp.int64), group=group)
    sizes = [int(w[0]) for w in widths]
    return sum(sizes[:rank]), sum(sizes)


def class_split_margin_cross_entropy(logits: Tensor, label: Tensor, margin1: float, margin2: float,
                                     margin3: float, scale: float, group: Optional[dist.Group],
                                     return_softmax: bool,
                                     reduction: Optional[str]) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """The group form of F.margin_cross_entropy (checked inputs: logits [N, block], label [N, 1])."""
    fn = "margin_cross_entropy"
    rank, nranks = group_position(group, fn)
    xp = array_module(logits._array)
    width = logits.shape[-1]
    start, classes = _block_start(width, rank, group, xp)
    ids = label._array.astype(xp.int64)
    if bool(((ids < 0) | (ids >= classes)).any()):
        raise ValueError(f"{fn}: label ids must lie in [0, {classes}) (the classes of all {nranks} ranks), got "
                         f"[{int(ids.min())}, {int(ids.max())}]")
    local = ids - start
    mine = (local >= 0) & (local < width)
    work = cast(logits, "float32") if logits.dtype.itemsize < 4 else logits
    z = margin_logits(work, xp.where(mine, local, 0), mine, margin1, margin2, margin3, scale)
    # _c_softmax_with_cross_entropy places rank r's block at r * width; give it each label's
    # column in that layout here, and, where the class is another rank's, a column outside this block
    elsewhere = ((rank + 1) % nranks) * width
    placed_ids = xp.where(mine, local + rank * width, elsewhere)
    loss = _c_softmax_with_cross_entropy(z, wrap(placed_ids), group=group, ignore_index=-1)
    out = reduce_loss(loss, reduction)
    if work is not logits:
        out = cast(out, logits.dtype)
    if not return_softmax:
        return out
    # loss = logsumexp(z) - z[label]: the label's z, summed over the group, gives the normaliser
    z_arr = z._array
    label_z = xp.where(mine, xp.take_along_axis(z_arr, xp.where(mine, local, 0), axis=-1), 0).astype(z_arr.dtype)
    dist.all_reduce(label_z, group=group)
    probs = xp.exp(z_arr - (loss._array + label_z))
    return out, wrap(probs.astype(logits.dtype, copy=False))
