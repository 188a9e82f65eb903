"""paddle.nn.functional.class_center_sample: the class centers a partial-FC layer (PLSC) keeps
for a batch: every class the batch's labels name, then negatives drawn at random from pycoll's
generator (`pycoll.seed`) up to num_samples. One process holds every class here (group None or
False); sampling across model-parallel ranks is not supported."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module, to_module
from pycoll.random import get_rng
from pycoll.tensor import Tensor, wrap

__all__ = ["class_center_sample"]


def class_center_sample(label: Tensor, num_classes: int, num_samples: int,
                        group: Any = None) -> Tuple[Tensor, Tensor]:
    """(remapped_label, sampled_class_center): the centers are the sorted distinct labels, then,
    if they are fewer than num_samples, randomly chosen other classes up to num_samples; each
    label is replaced by its center's position in that list. Neither output has a gradient."""
    fn = "class_center_sample"
    if not (group is None or group is False or hasattr(group, "is_member")):
        raise ValueError(f"{fn}: group must be False, None or a Group, got {group!r}")
    if group not in (None, False) and getattr(group, "nranks", 1) > 1:
        raise ValueError(f"{fn}: sampling across {group.nranks} model-parallel ranks is not supported; pass "
                         f"group=False (or None) with every class on this process")
    if num_samples > num_classes:
        raise ValueError(f"{fn}: num_samples must be <= num_classes ({num_classes}), got {num_samples}")
    label = as_tensor(label)
    lab = label._array
    if lab.dtype.kind not in "iu":
        raise TypeError(f"{fn}: label must hold integer class ids, got dtype {lab.dtype}")
    if lab.ndim != 1 or lab.size < 1:
        raise ValueError(f"{fn}: label must be 1-D and not empty, got shape {label.shape}")
    xp = array_module(lab)
    positive = xp.unique(lab)
    if int(positive[0]) < 0 or int(positive[-1]) >= num_classes:
        raise ValueError(f"{fn}: labels must lie in [0, {num_classes})")
    centers = positive
    missing = num_samples - positive.size
    if missing > 0:
        others = np.setdiff1d(np.arange(num_classes), to_module(positive, np))
        drawn = get_rng().permutation(others)[:missing].astype(lab.dtype)
        centers = xp.concatenate([positive, to_module(drawn, xp)])
    remapped = xp.searchsorted(positive, lab).astype(lab.dtype)
    return wrap(remapped), wrap(centers.astype(lab.dtype))
